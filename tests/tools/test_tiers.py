"""The per-tier sampler of loadscripts/sutlab_lab/tiers.py against processes that burn a known amount of
their own CPU (time.process_time), so the check holds however busy the machine is."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import cpubudget, tiers  # noqa: E402,I100
from sutlab_lab.services import procs  # noqa: E402,I100

PY = "/usr/bin/python3"

# Burns `cpu` seconds of its own CPU, forking first a child that burns `child` seconds and exits
# (reaped: its time lands in the parent's cutime), then says "done" and idles. With a third argument
# it waits for a line on stdin first, so that a sampler started before it counts all of its burn.
BURNER = r"""
import os, sys, time
cpu, child = float(sys.argv[1]), float(sys.argv[2])
if len(sys.argv) > 3:
    sys.stdin.readline()
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
    def start_burner(self, cpu, child=0.0, held=False):
        p = subprocess.Popen([PY, "-c", BURNER, str(cpu), str(child)] + (["held"] if held else []),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.stdin.close)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        return p

    def test_cpu_of_a_tree_matches_what_it_burned(self):
        # held until the sampler has read its start: on a crowded machine the start's process scan
        # can take longer than the interpreter takes to begin burning (1.18 s of 1.2 was read)
        p = self.start_burner(0.8, child=0.4, held=True)
        time.sleep(0.2)  # the interpreter's own start, before the sampler, as the comment below allows
        s = tiers.Sampler({"web": [p.pid]}).start()
        p.stdin.write("go\n")
        p.stdin.flush()
        self.assertEqual(p.stdout.readline().strip(), "done")
        time.sleep(0.3)
        usage, _ = s.stop()
        web = usage["web"]
        # 0.8 s in the process, 0.4 s in its reaped child; /proc counts in 10 ms ticks, each of utime,
        # stime, cutime and cstime cut down to one (up to 40 ms less); the interpreter's start, before
        # the sampler, is not counted; its teardown after "done" a few tens of ms more at most
        self.assertGreater(web["cpu_s"], 1.2 - 0.04, web)
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

    def test_a_process_aside_is_no_tier_and_not_outside_them(self):
        # two samplers over the same step, one told of the burner aside (a console the load prints
        # to): work outside the tiers reads the burner's CPU less in the one that knows it, and
        # neither makes it a tier; whatever else ran on the machine, both read it alike
        burner, idle = self.start_burner(0.6, held=True), self.start_burner(0.0)
        self.assertEqual(idle.stdout.readline().strip(), "done")
        told = tiers.Sampler({"web": [idle.pid], "aside": [burner.pid]}).start()
        blind = tiers.Sampler({"web": [idle.pid]}).start()
        burner.stdin.write("go\n")
        burner.stdin.flush()
        self.assertEqual(burner.stdout.readline().strip(), "done")
        usage_told, told_signals = told.stop()
        usage_blind, blind_signals = blind.stop()
        self.assertEqual(set(usage_told), {"web"})
        moved = (blind_signals["outside_cores"] * usage_blind["web"]["elapsed_s"]
                 - told_signals["outside_cores"] * usage_told["web"]["elapsed_s"])
        self.assertGreater(moved, 0.6 - 0.15, (blind_signals["outside_cores"], told_signals["outside_cores"]))
        self.assertLess(moved, 0.6 + 0.15, (blind_signals["outside_cores"], told_signals["outside_cores"]))

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

    @unittest.skipUnless(cpubudget.available(), "no writable cgroup hierarchy with the cpu controller here")
    def test_under_a_quota_bursts_are_not_saturation_and_a_burner_is(self):
        """A budgeted tier is as busy as the share of its budget it used: a thread that burns
        20 ms every 200 ms (0.1 core) under a 0.25-core quota waits for its quota within each
        burst, about three times its CPU, yet leaves most of the budget unused; a thread that
        burns all along uses all of it."""
        bursts = subprocess.Popen([PY, "-c", "import time\nwhile True:\n"
                                   "    t = time.process_time()\n"
                                   "    while time.process_time() - t < 0.02: pass\n"
                                   "    time.sleep(0.18)\n"])
        self.addCleanup(bursts.wait)
        self.addCleanup(bursts.kill)
        burner = self.start_burner(30.0)
        with cpubudget.budget({"web": [bursts.pid], "db": [burner.pid]}, {"web": 0.25, "db": 0.25}):
            time.sleep(0.3)
            s = tiers.Sampler({"web": [bursts.pid], "db": [burner.pid]}).start()
            time.sleep(2.0)
            usage, _ = s.stop()
        web, db = usage["web"], usage["db"]
        self.assertAlmostEqual(web["capacity"], 0.25, 2, web)
        self.assertGreater(web["wait_s"], web["cpu_s"], web)  # the bursts did wait for the quota
        self.assertLess(web["busy"], 0.85, web)
        self.assertLess(web["throttled_s"], 0.85 * 2.0, web)  # throttled in under 85 % of the periods
        self.assertGreater(db["busy"], 0.9, db)
        self.assertGreater(db["throttled_s"], 0.5, db)  # a burner runs out of its quota period after period

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


def start(test, argv):
    """A process the test case kills and reaps at its end."""
    p = subprocess.Popen(argv)
    test.addCleanup(p.wait)
    test.addCleanup(p.kill)
    return p


# A stand-in for a load tool: saved under the tool's name, so that its command line reads as the
# tool's (python3 DIR/wrk -t2 ...), and the last argument says what its threads do: `main` the
# share of a core its main thread burns (0: it sleeps), `workers` how many threads burn a whole
# core (one Python thread at a time: the GIL makes them one core in all).
FAKE_TOOL = r"""
import sys, threading, time
spec = dict(kv.split("=") for kv in sys.argv[-1].split(","))
def burn(share):
    while True:
        t0 = time.monotonic()
        end = time.thread_time() + 0.05 * share
        while time.thread_time() < end:
            pass
        time.sleep(max(0.0, 0.05 - (time.monotonic() - t0)))
for _ in range(int(spec["workers"])):
    threading.Thread(target=burn, args=(1.0,), daemon=True).start()
burn(float(spec["main"])) if float(spec["main"]) else time.sleep(60)
"""


class DeclaredCapacity(unittest.TestCase):
    """The load tier's capacity is the threads its tool was told to run (wrk -t1 was once read as
    "98% of 2" when its main thread happened to run, and the step lost its verdict)."""

    def start_tool(self, name, args, spec):
        d = tempfile.mkdtemp(prefix="sutlab-fake-tool-")
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(FAKE_TOOL)
        return start(self, [PY, path] + args + [spec])

    def sample(self, pids, seconds=1.5):
        time.sleep(0.3)
        s = tiers.Sampler({"load": pids}).start()
        time.sleep(seconds)
        return s.stop()[0]["load"]

    def test_a_main_thread_that_runs_beside_the_worker_adds_no_capacity(self):
        p = self.start_tool("wrk", ["-t1", "-c", "8"], "main=0.3,workers=1")
        load = self.sample([p.pid])
        self.assertGreaterEqual(load["active_threads"], 2, load)  # both ran: the old rule said 2
        self.assertEqual(load["capacity"], 1, load)
        self.assertGreater(load["busy"], 0.85, load)

    def test_only_the_idle_thread_ran(self):
        # wrk -t2 whose two workers did nothing while its main thread burned a core: not saturated
        p = self.start_tool("wrk", ["-t2", "-c", "8"], "main=1.0,workers=0")
        load = self.sample([p.pid])
        self.assertEqual(load["active_threads"], 1, load)  # the old rule: capacity 1, busy 100 %
        self.assertEqual(load["capacity"], min(2, os.cpu_count()), load)
        if load["capacity"] == 2:
            self.assertLess(load["busy"], 0.7, load)

    def test_ab_and_hey(self):
        ab = self.start_tool("ab", ["-c", "8", "-t", "3"], "main=0.3,workers=1")
        self.assertEqual(self.sample([ab.pid], 1.0)["capacity"], 1)
        hey = self.start_tool("hey", ["-cpus", "1", "-c", "8"], "main=0.3,workers=1")
        self.assertEqual(self.sample([hey.pid], 1.0)["capacity"], 1)
        hey_all = self.start_tool("hey", ["-c", "8"], "main=0,workers=0")
        self.assertEqual(self.sample([hey_all.pid], 1.0)["capacity"], tiers.allowed_cores([hey_all.pid]))

    def test_distributed_locust_is_its_workers(self):
        master = self.start_tool("locust", ["--master", "--headless"], "main=0.3,workers=0")
        worker = self.start_tool("locust", ["--worker"], "main=1.0,workers=0")
        load = self.sample([master.pid, worker.pid])
        self.assertEqual(load["capacity"], 1, load)  # one worker; the master aggregates
        self.assertGreater(load["busy"], 0.85, load)
        idle = self.start_tool("locust", ["--worker"], "main=0,workers=0")
        load = self.sample([master.pid, worker.pid, idle.pid])
        self.assertEqual(load["capacity"], min(2, os.cpu_count()), load)

    def test_httperf_processes_under_spray(self):
        spray = self.start_tool("spray", ["--rate", "600"], "main=0,workers=0")
        a = self.start_tool("httperf", ["--rate", "300"], "main=0,workers=0")
        b = self.start_tool("httperf", ["--rate", "300"], "main=0,workers=0")
        self.assertEqual(self.sample([spray.pid, a.pid, b.pid], 1.0)["capacity"], min(2, os.cpu_count()))

    def test_a_program_it_does_not_know_keeps_the_threads_that_ran(self):
        p = self.start_tool("k6", ["run"], "main=0.3,workers=1")
        self.assertGreaterEqual(self.sample([p.pid])["capacity"], 2)


class Outside(unittest.TestCase):
    def test_a_process_beside_the_tiers_is_outside_and_the_tiers_are_not(self):
        """A CPU-bound process outside every tier reads as about one core outside; the same one
        sampled as a tier reads as none."""
        p, idle = start(self, [PY, "-c", "while True: pass"]), start(self, [PY, "-c", "import time; time.sleep(60)"])
        time.sleep(0.3)
        # the burner's own CPU over each window, read apart from the sampler: on a busy machine it
        # gets less than a core, and the figures follow what it got
        burned0 = procs.cpu_seconds([p.pid])
        s = tiers.Sampler({"web": [idle.pid]}).start()
        time.sleep(1.5)
        _, beside = s.stop()
        burned1 = procs.cpu_seconds([p.pid])
        s = tiers.Sampler({"web": [p.pid]}).start()
        time.sleep(1.5)
        usage, inside = s.stop()
        burned2 = procs.cpu_seconds([p.pid])
        elapsed = usage["web"]["elapsed_s"]
        self.assertGreater(burned1 - burned0, 0.2, "the burner never ran")
        # beside the tiers, its CPU is outside (with whatever else runs: the test, kernel threads)
        self.assertGreater(beside["outside_cores"] * elapsed, 0.8 * (burned1 - burned0) - 0.05, beside)
        # as a tier, it is the tier's, and outside falls by about what it burned
        self.assertAlmostEqual(usage["web"]["cpu_s"], burned2 - burned1, delta=0.06)
        self.assertLess(inside["outside_cores"], beside["outside_cores"] - 0.5 * (burned2 - burned1) / elapsed,
                        (beside, inside))
        self.assertGreater(inside["machine_busy"], 0.0, inside)


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
