#!/usr/bin/python3
"""Integration tests: loadscripts/spray (the open model, vegeta's report) against the three handler
modes, over IPv4 (httperf) and IPv6 (spray's attacker), its --abort-on-overflow in a network
namespace of its own, and flip --tool spray.

The success ratios are checked against a model of the server, not against a past run: requests
arrive every 1/rate s, a pool of N threads serves them in arrival order, each taking the block,
and a request succeeds when it is answered within the client's timeout. Timed-out requests still
hold a thread (the server cannot tell), as in the write-up's Future.
"""

import json
import os
import subprocess
import threading
import time
import unittest
import uuid

from sutlab_testlib import Server, source_root, sutlab_bin
from sutlab_lab import spray as spray_lib  # noqa: I100  (loadscripts/ is on PYTHONPATH: tests/meson.build)

NO_DB = ["--db-url", "postgresql://nobody@127.0.0.1:1/none"]
SPRAY = os.path.join(source_root(), "loadscripts", "spray")
FLIP = os.path.join(source_root(), "loadscripts", "flip")


def spray(url, *args, prefix=(), timeout=120):
    proc = subprocess.run(list(prefix) + ["/usr/bin/python3", SPRAY, "--url", url, "--json"] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return proc


def summary(proc):
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout.strip().splitlines()[-1])


def modelled_successes(rate, duration, threads, block, timeout):
    """Requests answered within `timeout` by `threads` threads serving `block`-second requests
    in arrival order, rate*duration arrivals 1/rate apart."""
    free = [0.0] * threads
    ok = 0
    for i in range(int(rate * duration)):
        arrival = i / float(rate)
        t = min(range(threads), key=lambda k: free[k])
        start = max(arrival, free[t])
        free[t] = start + block
        ok += free[t] - arrival < timeout
    return ok


class BadUsage(unittest.TestCase):
    def test_bad_values_exit_2_with_one_line(self):
        for bad in (["--rate", "0"], ["--rate", "x"], ["--duration", "0"], ["--timeout", "-1"],
                    ["--url", "https://127.0.0.1:1"], ["--path", "nope"]):
            args = ["/usr/bin/python3", SPRAY] + (bad if bad[0] == "--url" else ["--url", "http://127.0.0.1:1"] + bad)
            proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(proc.returncode, 2, (bad, proc.stderr))
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn(bad[0], proc.stderr)

    def test_console_refuses_a_bad_rate(self):
        console = os.path.join(source_root(), "loadscripts", "console")
        for bad in ("0", "x", "-5k", "1g"):
            proc = subprocess.run(["/usr/bin/python3", console, "--rate", bad], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(proc.returncode, 2, (bad, proc.stderr))
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
            self.assertIn("--rate", proc.stderr)

    def test_console_renders_at_its_rate(self):
        # 64 KiB through a 128 KiB/s console: about half a second, every byte and line counted
        console = os.path.join(source_root(), "loadscripts", "console")
        data = b"".join(b"%05d %s\n" % (i, b"x" * 57) for i in range(1024))  # 64 KiB, 1,024 lines
        t0 = time.monotonic()
        proc = subprocess.run(["/usr/bin/python3", console, "--rate", "128k"], input=data,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        took = time.monotonic() - t0
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(b"1024 lines, 65536 bytes", proc.stderr)
        self.assertGreater(took, 0.45)
        self.assertLess(took, 3.0)

    def test_flip_refuses_a_zero_rate(self):
        proc = subprocess.run(["/usr/bin/python3", FLIP, "--handler-mode", "inline", "--rate", "0",
                               "--url", "http://127.0.0.1:1", "--spawn", "true"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--rate", proc.stderr)


class Modes(unittest.TestCase):
    """At 20 arrivals a second for 3 s against a 0.5 s block with a 2 s timeout."""

    RATE, DURATION, BLOCK_MS, TIMEOUT = 20, 3, 500, 2

    def attack(self, flags):
        with Server(workers=1, extra_args=NO_DB + flags) as srv:
            s = summary(spray("http://127.0.0.1:%d" % srv.port, "--path", "/work/sleep?ms=%d" % self.BLOCK_MS,
                              "--rate", str(self.RATE), "--duration", str(self.DURATION),
                              "--timeout", str(self.TIMEOUT)))
            return s

    def test_offload_answers_every_request(self):
        s = self.attack(["--handler-mode", "offload"])
        self.assertEqual(s["requests"], self.RATE * self.DURATION)
        self.assertEqual(s["success"], 1.0, s)
        self.assertEqual(s["codes"], {"200": self.RATE * self.DURATION})
        self.assertGreaterEqual(s["p50"], self.BLOCK_MS)
        self.assertLess(s["p99"], self.BLOCK_MS + 400, s)

    def test_pool_success_follows_its_size(self):
        n = self.RATE * self.DURATION
        for threads in (2, 4):
            with self.subTest(threads=threads):
                s = self.attack(["--handler-mode", "pool", "--offload-threads", str(threads)])
                want = modelled_successes(self.RATE, self.DURATION, threads, self.BLOCK_MS / 1000.0, self.TIMEOUT)
                self.assertLess(want, n)  # the model itself: the pool is too small for the rate
                got = s["codes"].get("200", 0)
                # a few requests either side: arrivals are paced by httperf's 1 ms timer ticks
                self.assertLessEqual(abs(got - want), 4, (threads, got, want, s))
                self.assertEqual(s["errors"], {"timeout": n - got}, s)
                # the timed-out requests, counted at the timeout, are the slowest; a reply that
                # came in just before it may land in the 1 ms bin above (seen under load)
                self.assertGreaterEqual(s["p99"], self.TIMEOUT * 1000.0, s)
                self.assertLessEqual(s["p99"], self.TIMEOUT * 1000.0 + 5, s)

    def test_inline_answers_one_block_at_a_time(self):
        s = self.attack(["--handler-mode", "inline"])
        # one thread, and nothing else runs while it sleeps: at most timeout/block answers in time
        self.assertLessEqual(s["codes"].get("200", 0), self.TIMEOUT * 1000 // self.BLOCK_MS + 1, s)
        self.assertLess(s["success"], 0.15, s)


@unittest.skipUnless(spray_lib.ipv6_loopback(), "this machine has no ::1 (IPv6 disabled)")
class IPv6(unittest.TestCase):
    """spray's own attacker (httperf has no IPv6): over ::1, the same model as Modes above, its
    failures told apart by kind; and a name dialled as vegeta dials `localhost`, ::1 first, with
    a server that listens on 127.0.0.1 alone, as the write-up's error lines show it (003 L28, L30)."""

    RATE, DURATION, BLOCK_MS, TIMEOUT = 20, 3, 500, 2

    def attack(self, flags, v6=True, url=None, extra=()):
        from sutlab_testlib import free_port
        port = free_port()
        listens = ["--listen", "127.0.0.1:%d" % port] + (["--listen", "[::1]:%d" % port] if v6 else [])
        with Server(workers=1, port=port, listen=False, extra_args=NO_DB + listens + flags):
            return summary(spray((url or "http://[::1]:%d") % port, "--path", "/work/sleep?ms=%d" % self.BLOCK_MS,
                                 "--rate", str(self.RATE), "--duration", str(self.DURATION),
                                 "--timeout", str(self.TIMEOUT), *extra)), port

    def test_offload_over_ipv6_answers_every_request(self):
        s, port = self.attack(["--handler-mode", "offload"])
        self.assertEqual(s["codes"], {"200": self.RATE * self.DURATION}, s)
        self.assertEqual(s["addresses"], ["[::1]:%d" % port])
        self.assertEqual((s["errors"], s["error_set"]), ({}, {}))
        self.assertGreaterEqual(s["p50"], self.BLOCK_MS)
        self.assertLess(s["p99"], self.BLOCK_MS + 400, s)

    def test_a_small_pool_over_ipv6_follows_the_model_and_its_failures_are_reply_timeouts(self):
        n = self.RATE * self.DURATION
        s, port = self.attack(["--handler-mode", "pool", "--offload-threads", "2"])
        want = modelled_successes(self.RATE, self.DURATION, 2, self.BLOCK_MS / 1000.0, self.TIMEOUT)
        got = s["codes"].get("200", 0)
        self.assertLessEqual(abs(got - want), 4, (got, want, s))
        # the loop keeps accepting: every failure waited on its reply, none on its connect
        self.assertEqual(s["errors"], {"reply-timeout": n - got}, s)
        self.assertEqual(s["error_set"], {"[::1]:%d: reply-timeout" % port: n - got}, s)
        # every request has its latency, the timed-out ones at the timeout
        self.assertGreaterEqual(s["p99"], self.TIMEOUT * 1000.0, s)
        self.assertLessEqual(s["max"], self.TIMEOUT * 1000.0 + 50, s)

    def test_a_name_falls_back_to_ipv4_and_reports_the_first_refusal(self):
        flags = ["--handler-mode", "offload"]
        url = "http://localhost:%d"
        ok, _ = self.attack(flags, v6=False, url=url, extra=("--resolve", "::1,127.0.0.1"))
        # ::1 refuses at once and 127.0.0.1 answers: nothing fails
        self.assertEqual(ok["codes"], {"200": self.RATE * self.DURATION}, ok)
        self.assertEqual(ok["error_set"], {})
        # blocked, with a queue of 2: the IPv4 connects that time out are reported by the first
        # address's error, ::1's refusal (Go's dialSerial); the accepted ones wait on their reply
        s, port = self.attack(["--handler-mode", "inline", "--backlog", "2"], v6=False, url=url,
                              extra=("--resolve", "::1,127.0.0.1"))
        self.assertLess(s["success"], 0.15, s)
        self.assertGreaterEqual(s["error_set"].get("[::1]:%d: refused" % port, 0), 1, s)
        self.assertEqual(set(s["error_set"]) - {"[::1]:%d: refused" % port, "127.0.0.1:%d: reply-timeout" % port},
                         set(), s)

    def test_httperf_is_refused_an_ipv6_url(self):
        for extra in (["--url", "http://[::1]:1", "--attacker", "httperf"],
                      ["--url", "http://localhost:1", "--resolve", "::1,nope"]):
            proc = subprocess.run(["/usr/bin/python3", SPRAY] + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=30)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)


class Thresholds(unittest.TestCase):
    """--fail-if on spray's report: met (exit 0, one line), violated (exit 1, the line names the
    measured value), malformed (exit 2, one line)."""

    def test_met_then_violated(self):
        with Server(workers=1, extra_args=NO_DB) as srv:
            url = "http://127.0.0.1:%d" % srv.port
            base = ["--path", "/health_check", "--rate", "20", "--duration", "1", "--timeout", "2"]
            met = spray(url, *base, "--fail-if", "success>=99%", "--fail-if", "errors<1%", "--fail-if", "p99<2s",
                        "--fail-if", "rps>=10")
            bad = spray(url, *base, "--fail-if", "success>=99%", "--fail-if", "p50<1us")
        self.assertEqual(met.returncode, 0, met.stdout + met.stderr)
        self.assertIn("fail-if: all 4 thresholds met", met.stdout)
        self.assertEqual(bad.returncode, 1, bad.stdout + bad.stderr)
        self.assertRegex(bad.stdout, r"(?m)^fail-if p50<1us violated: p50 is [\d.]+ ms$")
        self.assertNotIn("success>=99% violated", bad.stdout)
        self.assertTrue(bad.stdout.strip().splitlines()[-1].startswith("{"))  # --json's line stays last

    def test_malformed_is_exit_2(self):
        p = spray("http://127.0.0.1:1", "--fail-if", "ratio>=2", timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


@unittest.skipUnless(os.geteuid() == 0, "network namespaces need root")
class AbortOnOverflow(unittest.TestCase):
    """tcp_abort_on_overflow is per network namespace: the test makes its own, so it neither
    touches the machine's setting nor disturbs tests running beside it."""

    def setUp(self):
        self.ns = "sutlab-t-%s" % uuid.uuid4().hex[:8]
        subprocess.run(["ip", "netns", "add", self.ns], check=True)
        self.addCleanup(subprocess.run, ["ip", "netns", "delete", self.ns])
        subprocess.run(["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"], check=True)
        self.inside = ["ip", "netns", "exec", self.ns]
        self.server = subprocess.Popen(self.inside + [sutlab_bin(), "serve", "--listen", "127.0.0.1:8080",
                                                      "--workers", "1", "--handler-mode", "inline", "--backlog", "1"]
                                       + NO_DB, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(self.stop_server)
        deadline = time.monotonic() + 15
        while self.sysctl_in_ns() is None or not self.answers():
            self.assertLess(time.monotonic(), deadline, "sutlab did not start in the namespace")
            time.sleep(0.1)

    def stop_server(self):
        self.server.kill()
        self.server.wait()

    def answers(self):
        probe = "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/health_check', timeout=1)"
        return subprocess.run(self.inside + ["/usr/bin/python3", "-c", probe], stderr=subprocess.DEVNULL).returncode == 0

    def sysctl_in_ns(self):
        out = subprocess.run(self.inside + ["sysctl", "-n", "net.ipv4.tcp_abort_on_overflow"],
                             stdout=subprocess.PIPE, text=True)
        return out.stdout.strip() if out.returncode == 0 else None

    def attack(self, *extra):
        # a burst on a one-slot accept queue while the only thread sleeps 1 s a request
        return summary(spray("http://127.0.0.1:8080", "--path", "/work/sleep?ms=1000", "--rate", "50",
                             "--duration", "2", "--timeout", "3", *extra, prefix=self.inside))

    def test_no_reset_without_the_setting_and_the_setting_restored(self):
        # A full accept queue drops the SYN, so the client retries and times out; only a handshake
        # whose final ACK finds the queue full is reset, and only with the setting. On loopback a
        # handshake completes before the next SYN arrives, so even with it resets are rare (the
        # netns lab saw 4 in 3,000): what is asserted is none without it, and the setting applied
        # in this namespace during the run, restored after, the machine's untouched.
        with open("/proc/sys/net/ipv4/tcp_abort_on_overflow") as f:
            machine = f.read().strip()
        self.assertEqual(self.sysctl_in_ns(), "0")
        dropped = self.attack()
        self.assertNotIn("reset/EOF", dropped["errors"], dropped)
        self.assertGreater(dropped["errors"].get("timeout", 0), 0, dropped)
        seen = set()
        watcher = threading.Thread(target=self.watch, args=(seen,), daemon=True)
        self.watching = True
        watcher.start()
        try:
            self.attack("--abort-on-overflow")
        finally:
            self.watching = False
            watcher.join()
        self.assertIn("1", seen, "the setting was never 1 in the namespace during the run")
        self.assertEqual(self.sysctl_in_ns(), "0", "the namespace's setting was not restored")
        with open("/proc/sys/net/ipv4/tcp_abort_on_overflow") as f:
            self.assertEqual(f.read().strip(), machine, "the machine's setting changed")

    def watch(self, seen):
        while self.watching:
            seen.add(self.sysctl_in_ns())
            time.sleep(0.1)


class FlipSpray(unittest.TestCase):
    def test_flip_handler_mode_with_the_open_model(self):
        out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "flip-spray-%s" % uuid.uuid4().hex[:8])
        spawn = "%s serve --listen 127.0.0.1:%%d --workers 1 %s" % (sutlab_bin(), " ".join(NO_DB))
        from sutlab_testlib import free_port
        port = free_port()
        proc = subprocess.run(["/usr/bin/python3", FLIP, "--handler-mode", "inline", "--spawn", spawn % port,
                               "--url", "http://127.0.0.1:%d" % port, "--duration", "3", "--rate", "10",
                               "--timeout", "3", "--no-png", "--probe", "none", "--out", out],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:])
        lines = proc.stdout.splitlines()
        header = next(ln for ln in lines if ln.startswith("run "))
        self.assertIn("ok %", header)
        off = next(ln for ln in lines if ln.startswith("off "))
        self.assertIn("100.0", off.split())  # offload answers all 30 (2 s blocks, 3 s timeout)
        self.assertIn("spray on: codes", proc.stdout)
        self.assertIn("loadscripts/spray --rate 10 --duration 3", proc.stdout)


if __name__ == "__main__":
    unittest.main()
