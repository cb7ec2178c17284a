#!/usr/bin/python3
"""Integration tests: an HTTP/1 connection whose response waits for PostgreSQL (or a timer) stays in
the event loop without being read (servers/core/readpark.h).

Run under loadscripts/sutlab_lab/services/with-services. --db-latency-ms holds every query long enough for a client to
act during the wait. Expected: what a client sends meanwhile (a pipelined request) is answered after
the pending response, in order; a client that half-closes still gets its answer; one that hangs up
costs the worker no CPU while the query waits (a socket polled but never read again would spin);
and a waiting response costs no epoll_ctl, where libh2o alone makes two per response. Over TLS, where
libh2o decrypts what it reads into the same input buffer, /work/sleep (a timer) is the wait.
"""

import json
import re
import shutil
import socket
import subprocess
import time
import unittest

import test_tls
from sutlab_testlib import cpu_split
from test_delivery import Env
from test_tls import raw_conn_on

LATENCY_MS = 300
REDIS_DB = 6


def listing_request(category):
    return ("GET /stores?categoryId=%d HTTP/1.1\r\nHost: t\r\n\r\n" % category).encode()


def epoll_ctl_calls(pid, exchange):
    """The epoll_ctl calls the server makes (every thread) while exchange() runs, on descriptors it
    polls for reading: a client's, PostgreSQL's. Left out: those only ever polled for writing, the
    connects to the unreachable database of a server started without one, retried all along."""
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=epoll_ctl", "-p", str(pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)  # strace attaches
        exchange()
    finally:
        tracer.terminate()
        _, trace = tracer.communicate(timeout=10)
    calls = [line for line in trace.splitlines() if "epoll_ctl(" in line]
    fd = re.compile(r"epoll_ctl\(\d+, EPOLL_CTL_\w+, (\d+)")
    asks = {}  # fd -> for each ADD/MOD, whether it asked for reading
    for c in calls:
        m = fd.search(c)
        if m is not None and "EPOLL_CTL_DEL" not in c:
            asks.setdefault(m.group(1), []).append("EPOLLIN" in c)
    writers_only = {f for f, reading in asks.items() if not any(reading)}
    return [c for c in calls if fd.search(c) is None or fd.search(c).group(1) not in writers_only]


def cpu_seconds(pid):
    """utime + stime of a process (every thread), in seconds."""
    return sum(cpu_split(pid))


class ReadPark(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = Env(REDIS_DB, mode="async", extra=["--db-latency-ms", str(LATENCY_MS)]).start()

    @classmethod
    def tearDownClass(cls):
        cls.env.finish()

    def assert_listing(self, resp, category):
        self.assertEqual(resp.status, 200, resp.body[:200])
        stores = json.loads(resp.body)
        self.assertTrue(stores, resp.body[:200])
        self.assertEqual({s["categoryId"] for s in stores}, {category})

    def test_pipelined_requests_are_answered_in_order(self):
        with self.env.srv.raw_conn(timeout=10) as c:
            c.send(listing_request(1) + listing_request(2))
            self.assert_listing(c.read_response(), 1)
            self.assert_listing(c.read_response(), 2)

    def test_a_request_sent_during_the_wait_is_answered_next(self):
        with self.env.srv.raw_conn(timeout=10) as c:
            c.send(listing_request(2))
            time.sleep(LATENCY_MS / 1000.0 / 3)
            c.send(listing_request(1))
            self.assert_listing(c.read_response(), 2)
            self.assert_listing(c.read_response(), 1)
            # and the connection goes on as usual
            c.send(listing_request(3))
            self.assert_listing(c.read_response(), 3)

    def test_a_half_closed_client_gets_its_answer(self):
        with self.env.srv.raw_conn(timeout=10) as c:
            c.send(listing_request(1))
            c.sock.shutdown(socket.SHUT_WR)
            self.assert_listing(c.read_response(), 1)
            self.assertIsNotNone(c.wait_eof(5), "the server kept the half-closed connection open")

    def test_clients_hanging_up_during_the_wait_cost_no_cpu(self):
        pid = self.env.srv.proc.pid
        before = cpu_seconds(pid)
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", self.env.srv.port), timeout=5)
            s.sendall(listing_request(1))
            s.close()
        time.sleep(LATENCY_MS / 1000.0 * 2)
        spent = cpu_seconds(pid) - before
        # 20 requests cost a few ms; a worker spinning on the closed sockets would burn the whole wait
        self.assertLess(spent, LATENCY_MS / 1000.0 / 2, "CPU seconds during the wait")
        status, _, body = self.env.listing(1)
        self.assertEqual(status, 200, body[:200])

    @unittest.skipUnless(shutil.which("strace"), "strace is not installed")
    def test_a_waiting_response_costs_no_epoll_ctl(self):
        requests = 8
        with self.env.srv.raw_conn(timeout=10) as c:
            c.send(listing_request(1))  # the connection's first request registers it with epoll
            self.assert_listing(c.read_response(), 1)

            def exchange():
                for i in range(requests):
                    c.send(listing_request(1 + i % 3))
                    self.assert_listing(c.read_response(), 1 + i % 3)
            calls = epoll_ctl_calls(self.env.srv.proc.pid, exchange)
        # libh2o alone: EPOLL_CTL_DEL and EPOLL_CTL_ADD per response, 2 * requests
        self.assertLess(len(calls), requests, "\n".join(calls))


def sleep_request(ms):
    return ("GET /work/sleep?ms=%d HTTP/1.1\r\nHost: localhost\r\n\r\n" % ms).encode()


class ReadParkTLS(test_tls.TLSBase):
    """test_tls's server (a plain and a TLS listener, no database), with one worker."""

    WORKERS = 1
    SLEEP_MS = 200

    def test_pipelined_and_mid_wait_requests_over_tls(self):
        s = self.connect(self.context())
        try:
            c = raw_conn_on(s)
            s.sendall(sleep_request(self.SLEEP_MS) + sleep_request(1))
            time.sleep(self.SLEEP_MS / 1000.0 / 3)
            s.sendall(sleep_request(2))  # a third, sent while the first waits
            for _ in range(3):
                r = c.read_response()
                self.assertEqual(r.status, 200, r.body[:200])
        finally:
            s.close()

    @unittest.skipUnless(shutil.which("strace"), "strace is not installed")
    def test_a_waiting_response_costs_no_epoll_ctl_over_tls(self):
        requests = 6
        s = self.connect(self.context())
        try:
            c = raw_conn_on(s)
            s.sendall(sleep_request(1))
            self.assertEqual(c.read_response().status, 200)

            def exchange():
                for _ in range(requests):
                    s.sendall(sleep_request(50))
                    r = c.read_response()
                    self.assertEqual(r.status, 200, r.body[:200])
            calls = epoll_ctl_calls(self.srv.proc.pid, exchange)
        finally:
            s.close()
        self.assertLess(len(calls), requests, "\n".join(calls))


if __name__ == "__main__":
    unittest.main()
