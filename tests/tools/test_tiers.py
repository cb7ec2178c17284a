"""The per-tier sampler of loadscripts/lib/tiers.py against processes that burn a known amount of
their own CPU (time.process_time), so the check holds however busy the machine is."""

import os
import subprocess
import time
import unittest

import toolstest  # noqa: F401 - puts loadscripts/lib on the path
from lib import tiers  # noqa: E402,I100

PY = "/usr/bin/python3"

# Burns `cpu` seconds of its own CPU, forking first a child that burns `child` seconds and exits
# (reaped: its time lands in the parent's cutime), then says "done" and idles.
BURNER = r"""
import os, sys, time
cpu, child = float(sys.argv[1]), float(sys.argv[2])
def burn(s):
    end = time.process_time() + s
    while time.process_time() < end:
        pass
if child > 0:
    pid = os.fork()
    if pid == 0:
        burn(child)
        os._exit(0)
    os.waitpid(pid, 0)
burn(cpu)
print("done", flush=True)
time.sleep(60)
"""


class Sampler(unittest.TestCase):
    def start_burner(self, cpu, child=0.0):
        p = subprocess.Popen([PY, "-c", BURNER, str(cpu), str(child)], stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        return p

    def test_cpu_of_a_tree_matches_what_it_burned(self):
        p = self.start_burner(0.8, child=0.4)
        s = tiers.Sampler({"web": [p.pid]}).start()
        self.assertEqual(p.stdout.readline().strip(), "done")
        time.sleep(0.3)
        usage, _ = s.stop()
        web = usage["web"]
        # 0.8 s in the process, 0.4 s in its reaped child; ticks are 10 ms, the interpreter's start a
        # few tens of ms more
        self.assertGreater(web["cpu_s"], 1.2 - 0.02, web)
        self.assertLess(web["cpu_s"], 1.2 + 0.25, web)
        self.assertGreaterEqual(web["active_threads"], 1)

    def test_a_named_tree_is_a_tier_of_its_own(self):
        # loadscripts/bench measures its contenders (sutlab, nginx, postgres, ...) by name
        burner, idle = self.start_burner(0.5), self.start_burner(0.0)
        s = tiers.Sampler({"nginx": [burner.pid], "postgres": [idle.pid]}).start()
        self.assertEqual(burner.stdout.readline().strip(), "done")
        self.assertEqual(idle.stdout.readline().strip(), "done")
        usage, _ = s.stop()
        self.assertEqual(set(usage), {"nginx", "postgres"})
        self.assertGreater(usage["nginx"]["cpu_s"], 0.5 - 0.02, usage)
        self.assertLess(usage["postgres"]["cpu_s"], 0.2, usage)

    def test_one_busy_thread_saturates_one_core(self):
        """Capacity is the threads that ran; busy counts CPU and the time spent waiting for a core,
        so a thread that burned all along is saturated however busy the machine is."""
        p = self.start_burner(30.0)
        time.sleep(0.3)
        s = tiers.Sampler({"web": [p.pid]}).start()
        time.sleep(1.5)
        usage, _ = s.stop()
        web = usage["web"]
        self.assertEqual(web["capacity"], 1, web)
        self.assertGreater(web["busy"], 0.9, web)

    def test_an_idle_process_is_idle(self):
        p = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"])
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        time.sleep(0.3)
        s = tiers.Sampler({"db": [p.pid]}).start()
        time.sleep(1.2)
        usage, _ = s.stop()
        self.assertLess(usage["db"]["cpu_s"], 0.05, usage)
        self.assertLess(usage["db"]["busy"], 0.1, usage)

    def test_a_load_tool_blocked_writing_is_busy(self):
        """A load script whose output nobody reads (a console that does not keep up) sits in
        write(): that is the load tier's limit, though it uses no CPU. The same process asleep
        elsewhere is not busy."""
        writer = "import os, time\nwhile True: os.write(1, b'x' * 65536)\n"
        r, w = os.pipe()  # never read: the writer fills it and blocks
        p = subprocess.Popen([PY, "-c", writer], stdout=w)
        os.close(w)
        self.addCleanup(os.close, r)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        time.sleep(0.3)
        s = tiers.Sampler({"load": [p.pid]}).start()
        time.sleep(1.5)
        usage, _ = s.stop()
        self.assertLess(usage["load"]["cpu_s"], 0.1, usage)
        self.assertGreater(usage["load"]["writing_s"], 1.0, usage)
        self.assertGreater(usage["load"]["busy"], 0.85, usage)
        sleeper = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"])
        self.addCleanup(sleeper.wait)
        self.addCleanup(sleeper.kill)
        time.sleep(0.3)
        s = tiers.Sampler({"load": [sleeper.pid]}).start()
        time.sleep(1.0)
        usage, _ = s.stop()
        self.assertEqual(usage["load"]["writing_s"], 0.0, usage)
        self.assertLess(usage["load"]["busy"], 0.1, usage)

    def test_load_tier_counts_a_tool_that_exited(self):
        """The load tool runs to its end inside the step; its time comes from RUSAGE_CHILDREN."""
        # a root that no longer runs: only what the tool leaves when reaped is counted
        s = tiers.Sampler({"load": [1 << 30]}, load_rusage=True).start()
        p = subprocess.run([PY, "-c", "import time\nend = time.process_time() + 0.6\n"
                            "while time.process_time() < end: pass"])
        self.assertEqual(p.returncode, 0)
        usage, _ = s.stop()
        self.assertGreater(usage["load"]["cpu_s"], 0.6 - 0.02, usage)
        self.assertLess(usage["load"]["cpu_s"], 0.6 + 0.25, usage)

    def test_pinning_caps_the_capacity(self):
        p = subprocess.Popen(["taskset", "-c", "0", PY, "-c", "import time; time.sleep(60)"])
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        time.sleep(0.2)
        self.assertEqual(tiers.allowed_cores([p.pid]), 1)


class Sockets(unittest.TestCase):
    def test_a_client_that_does_not_read_fills_one_sockets_send_q(self):
        import socket
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        client = socket.create_connection(srv.getsockname())
        conn, _ = srv.accept()
        quiet = socket.create_connection(srv.getsockname())
        conn2, _ = srv.accept()
        try:
            conn.setblocking(False)
            sent = 0
            try:
                while sent < 8 << 20:  # until the client's window and our buffer are full
                    sent += conn.send(b"x" * 65536)
            except BlockingIOError:
                pass
            send, _, _, send_max = tiers.socket_queues([os.getpid()])
            self.assertGreater(send_max, 64 * 1024)
            self.assertEqual(send, send_max)  # the other socket holds nothing
        finally:
            for s in (client, conn, quiet, conn2, srv):
                s.close()

    def test_listen_queue_and_overflow_counter_are_read(self):
        import socket
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        clients = [socket.create_connection(srv.getsockname()) for _ in range(3)]
        try:
            send, recv, listen, send_max = tiers.socket_queues([os.getpid()])
            self.assertEqual(listen, 3)  # three connections waiting to be accepted
            self.assertIsNotNone(tiers.listen_overflows(os.getpid()))
        finally:
            for c in clients:
                c.close()
            srv.close()


if __name__ == "__main__":
    unittest.main()
