"""Processes, ports, the server wrapper, the HTTP client and run_tool, on real processes and
sockets of this machine (no sutlab needed: a Python HTTP server stands in)."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import toolstest  # noqa: F401  (first: it puts loadscripts/ on the path, for package sutlab_lab)
from sutlab_lab import loadcap, tools  # noqa: I100
from sutlab_lab.services import client, procs, server  # noqa: I100
from sutlab_lab.errors import RunError

PYTHON = sys.executable
# a server that answers 200 on every path, chunked on /chunked, and says when it stops
HTTP_SERVER = r"""
import http.server, signal, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        if self.path == "/chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
            return
        body = self.path.encode()
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        sys.stderr.write("GET\n")
signal.signal(signal.SIGTERM, lambda *a: (sys.stderr.write("stopping\n"), sys.exit(3)))
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def comm(pid):
    with open("/proc/%d/comm" % pid) as f:
        return f.read().strip()


class Procs(unittest.TestCase):
    def test_cpu_of_a_tree_and_its_reaped_children(self):
        # a shell whose child burns 0.3 s of CPU and exits (its time moves to the shell's cutime),
        # then the shell becomes a sleep
        p = subprocess.Popen(["/bin/sh", "-c", "%s -c 'import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.3: pass'; exec sleep 5" % PYTHON])
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and comm(p.pid) != "sleep":
                time.sleep(0.05)
            self.assertEqual(procs.tree_pids(p.pid), [p.pid])
            # the CPU of a tree as every tool reads it (tiers.Sampler), the reaped child's included
            self.assertGreaterEqual(procs.cpu_seconds(procs.tree_pids(p.pid)), 0.25)
            cpus = os.sched_getaffinity(0)
            self.assertEqual(procs.tree_cpus(p.pid), {",".join(map(str, sorted(cpus)))})
            self.assertEqual(procs.pin_tree(p.pid, {min(cpus)}), 1)
            self.assertEqual(procs.tree_cpus(p.pid), {str(min(cpus))})
            self.assertTrue(procs.pid_alive(p.pid))
        finally:
            p.kill()
            p.wait()
        self.assertFalse(procs.pid_alive(p.pid))
        self.assertEqual(procs.tree_pids(p.pid), [])
        self.assertEqual(procs.cpu_seconds(procs.tree_pids(p.pid)), 0)

    def test_a_name_with_spaces_and_parens(self):
        self.assertEqual(procs.parent_of(os.getpid()), os.getppid())
        tmp = tempfile.mkdtemp()
        odd = os.path.join(tmp, "a (b) c")
        os.symlink("/bin/sleep", odd)
        p = subprocess.Popen([odd, "5"])
        try:
            time.sleep(0.2)
            self.assertEqual(procs.parent_of(p.pid), os.getpid())
            self.assertIn(p.pid, procs.tree_pids(os.getpid()))
            self.assertIn(p.pid, procs.tree_pids(os.getpid(), procs.children_map()))
            self.assertEqual(loadcap.argv_of(p.pid), [odd, "5"])
        finally:
            p.kill()
            p.wait()
            os.unlink(odd)
            os.rmdir(tmp)

    def test_ports_and_the_pid_listening(self):
        taken = set()
        port = procs.free_port(taken)
        self.assertIn(port, taken)
        self.assertNotEqual(procs.free_port(taken), port)
        self.assertTrue(procs.port_is_free(port))
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
            s.listen(1)
            self.assertFalse(procs.port_is_free(port))
            self.assertEqual(procs.listening_pid(port), os.getpid())
        self.assertIsNone(procs.listening_pid(port))

    def test_ports_are_drawn_below_the_ephemeral_range(self):
        low, high = procs.listen_port_range()
        for _ in range(20):
            self.assertTrue(low <= procs.free_port() < high)
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            self.assertLessEqual(high, int(f.read().split()[0]))

    def test_the_range_from_the_kernels(self):
        with tempfile.NamedTemporaryFile("w", suffix=".range") as f:
            f.write("32768\t60999\n")
            f.flush()
            self.assertEqual(procs.listen_port_range(f.name), (22768, 32768))
            f.seek(0)
            f.write("1024 \t65535\n")  # nothing below it to draw from: a fixed range
            f.flush()
            self.assertEqual(procs.listen_port_range(f.name), (20000, 30000))
        self.assertEqual(procs.listen_port_range("/nonexistent"), (20000, 30000))

    def test_thread_ids(self):
        stop = threading.Event()
        t = threading.Thread(target=stop.wait)
        t.start()
        try:
            ids = list(procs.thread_ids([os.getpid(), 2 ** 22 + 7]))  # the second: no such process
        finally:
            stop.set()
            t.join()
        self.assertIn((os.getpid(), os.getpid()), ids)
        self.assertIn((os.getpid(), t.native_id), ids)
        self.assertEqual({pid for pid, _ in ids}, {os.getpid()})

    def test_pidfile_env_load(self):
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("1234\n/data\n")
            f.flush()
            self.assertEqual(procs.read_pidfile(f.name), 1234)
        self.assertIsNone(procs.read_pidfile("/no/such/file"))
        os.environ["SUTLAB_TEST_ONLY"] = "x"
        try:
            env = procs.clean_env({"SUTLAB_OK": "1"})
        finally:
            del os.environ["SUTLAB_TEST_ONLY"]
        self.assertNotIn("SUTLAB_TEST_ONLY", env)
        self.assertEqual(env["SUTLAB_OK"], "1")
        self.assertEqual(len(procs.loadavg().split()), 3)
        self.assertEqual(len(procs.cpu_stat(min(os.sched_getaffinity(0)))), 3)


class ServerAndClient(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.port = procs.free_port()
        self.log = os.path.join(self.tmp, "server.log")

    def tearDown(self):
        for name in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, name))
        os.rmdir(self.tmp)

    def test_start_request_stop(self):
        srv = server.ServerProcess([PYTHON, "-c", HTTP_SERVER, str(self.port)], self.port, self.log,
                                   name="py", ready_hits=3).start()
        try:
            self.assertTrue(srv.running())
            self.assertGreaterEqual(srv.ready_requests, 3)
            r = client.request("http://127.0.0.1:%d/a?b=1" % self.port)
            self.assertEqual((r.status, r.body), (200, b"/a?b=1"))
            self.assertEqual(r.headers["content-length"], "6")
            self.assertGreater(r.header_bytes, len("HTTP/1.0 200 OK\r\n\r\n"))
            self.assertEqual(client.request("http://127.0.0.1:%d/chunked" % self.port).body, b"abcde")
            self.assertGreaterEqual(procs.cpu_seconds([srv.pid]), 0)
        finally:
            rc = srv.stop(signal.SIGTERM, timeout=10)
        self.assertEqual(rc, 3)
        self.assertIn("stopping", srv.log_tail())
        self.assertEqual(procs.cpu_seconds([srv.pid]), 0)
        with self.assertRaises(OSError):
            client.request("http://127.0.0.1:%d/" % self.port, timeout=1)

    def test_exit_at_start_up(self):
        srv = server.ServerProcess([PYTHON, "-c", "import sys; sys.stderr.write('no way\\n'); sys.exit(2)"],
                                   self.port, self.log, name="py")
        with self.assertRaisesRegex(server.ServerStartError, "exited with status 2(.|\n)*no way"):
            srv.start()

    def test_never_ready(self):
        srv = server.ServerProcess(["/bin/sleep", "30"], self.port, self.log, name="sleeper", start_timeout=0.5)
        with self.assertRaisesRegex(server.ServerStartError, "did not answer 200"):
            srv.start()
        self.assertFalse(srv.running())
        with self.assertRaisesRegex(server.ServerStartError, "cannot start"):
            server.ServerProcess(["/no/such/binary"], self.port, self.log).start()


class RunTool(unittest.TestCase):
    def test_output_and_cpu(self):
        run = tools.run_tool([PYTHON, "-c", "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.2: pass\nprint('done')"], 30, "burner")
        self.assertEqual(run.output, "done\n")
        self.assertGreaterEqual(run.cpu_s, 0.15)
        self.assertGreater(run.wall_s, 0.15)

    def test_failure_and_timeout(self):
        with self.assertRaisesRegex(RunError, "exited with status 4(.|\n)*said this"):
            tools.run_tool(["/bin/sh", "-c", "echo said this; exit 4"], 30, "sh")
        t0 = time.monotonic()
        with self.assertRaisesRegex(RunError, "did not finish within 1 s"):
            tools.run_tool(["/bin/sleep", "30"], 1, "sleep")
        self.assertLess(time.monotonic() - t0, 10)


if __name__ == "__main__":
    unittest.main()
