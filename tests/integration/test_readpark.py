#!/usr/bin/python3
"""Integration tests: an HTTP/1 connection whose response waits for PostgreSQL stays in the event loop
without being read (servers/core/readpark.h, issue 18).

Run under tests/harness/with-services. --db-latency-ms holds every query long enough for a client to
act during the wait. Expected: what a client sends meanwhile (a pipelined request) is answered after
the pending response, in order; a client that half-closes still gets its answer; one that hangs up
costs the worker no CPU while the query waits (a socket polled but never read again would spin);
and a waiting response costs no epoll_ctl, where libh2o alone makes two per response.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_delivery import Env  # noqa: E402

LATENCY_MS = 300
REDIS_DB = 6


def listing_request(category):
    return ("GET /stores?categoryId=%d HTTP/1.1\r\nHost: t\r\n\r\n" % category).encode()


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
            tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=epoll_ctl", "-p", str(self.env.srv.proc.pid)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                time.sleep(0.5)  # strace attaches
                for i in range(requests):
                    c.send(listing_request(1 + i % 3))
                    self.assert_listing(c.read_response(), 1 + i % 3)
            finally:
                tracer.terminate()
                _, trace = tracer.communicate(timeout=10)
        calls = [line for line in trace.splitlines() if "epoll_ctl(" in line]
        # libh2o alone: EPOLL_CTL_DEL and EPOLL_CTL_ADD per response, 2 * requests
        self.assertLess(len(calls), requests, "\n".join(calls))


if __name__ == "__main__":
    unittest.main()
