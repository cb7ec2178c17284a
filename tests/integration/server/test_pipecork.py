#!/usr/bin/python3
"""Integration tests: the responses to pipelined HTTP/1 requests leave together
(servers/core/pipecork.h).

Run under loadscripts/sutlab_lab/services/with-services. A client that writes several requests at once gets the
responses made in the same event-loop pass in one TCP transmission, not one each; the client's own
socket counts the segments it received (TCP_INFO's tcpi_segs_in). Expected: a batch of pipelined
trivial requests arrives in a few segments, where the same requests sent one by one arrive in one
segment each; nothing is held back (TCP_CORK holds a partial segment for up to 200 ms if nobody
uncorks it); a request that waits for PostgreSQL inside a batch is answered in order and makes no
cork call, and a client that pipelines only such requests makes none either.
"""

import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
import unittest

from sutlab_testlib import source_root
from test_delivery import Env

REDIS_DB = 6
BATCH = 16
# TCP_CORK's own limit: a partial segment left corked goes out after 200 ms
CORK_LIMIT_S = 0.2


def get(path):
    return ("GET %s HTTP/1.1\r\nHost: t\r\n\r\n" % path).encode()


def segments_in(sock):
    """tcpi_segs_in of struct tcp_info (Linux 4.2 and later): segments this socket received."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return struct.unpack_from("=I", info, 140)[0]


def cork_calls(pid, exchange):
    """The TCP_CORK values the server sets (every thread) while exchange() runs, in order."""
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=setsockopt", "-p", str(pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)  # strace attaches
        exchange()
        time.sleep(0.2)  # the last pass's calls are written out
    finally:
        tracer.terminate()
        _, trace = tracer.communicate(timeout=10)
    return [int(v) for v in re.findall(r"TCP_CORK, \[(\d+)\]", trace)]


class PipeCork(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        static = os.path.join(source_root(), "fixtures", "static")
        with open(os.path.join(static, "status.txt"), "rb") as f:
            cls.status_txt = f.read()
        cls.env = Env(REDIS_DB, mode="async", extra=["--docroot", static]).start()

    @classmethod
    def tearDownClass(cls):
        cls.env.finish()

    def check(self, resp, path):
        self.assertEqual(resp.status, 200, (path, resp.body[:200]))
        if path == "/health_check":
            self.assertEqual(resp.body, b"ok")
        elif path == "/status.txt":
            self.assertEqual(resp.body, self.status_txt)
        else:
            stores = json.loads(resp.body)
            self.assertTrue(stores, resp.body[:200])

    def exchange(self, c, paths, pipelined):
        """Sends paths (all in one write if pipelined, else each after the previous answer) and
        checks every answer, in order. Returns (segments received, seconds)."""
        before, start = segments_in(c.sock), time.monotonic()
        if pipelined:
            c.send(b"".join(get(p) for p in paths))
        for p in paths:
            if not pipelined:
                c.send(get(p))
            self.check(c.read_response(), p)
        return segments_in(c.sock) - before, time.monotonic() - start

    def test_a_pipelined_batch_arrives_in_a_few_segments(self):
        for path in ("/health_check", "/status.txt"):
            with self.subTest(path=path), self.env.srv.raw_conn(timeout=10) as c:
                self.exchange(c, [path], False)  # the connection is set up
                one_by_one, _ = self.exchange(c, [path] * BATCH, False)
                batched, _ = self.exchange(c, [path] * BATCH, True)
                # the count itself: one segment (at least) per response sent on its own
                self.assertGreaterEqual(one_by_one, BATCH)
                # the first response, the rest together, and an ACK of the request or two;
                # libh2o alone sends one segment per response
                self.assertLessEqual(batched, 4, "segments for %d pipelined responses" % BATCH)

    def test_nothing_is_held_back(self):
        with self.env.srv.raw_conn(timeout=10) as c:
            for _ in range(3):
                _, took = self.exchange(c, ["/health_check"] * BATCH, True)
                self.assertLess(took, CORK_LIMIT_S * 0.75, "seconds for a pipelined batch")
                # the socket is uncorked after it: a lone request is answered at once
                _, took = self.exchange(c, ["/health_check"], False)
                self.assertLess(took, CORK_LIMIT_S * 0.75, "seconds for the request after a batch")

    def test_a_request_waiting_for_postgresql_in_a_batch(self):
        paths = ["/health_check", "/stores?categoryId=1", "/status.txt", "/health_check",
                 "/stores?categoryId=2", "/health_check"]
        with self.env.srv.raw_conn(timeout=10) as c:
            for _ in range(3):
                _, took = self.exchange(c, paths, True)
                self.assertLess(took, 1.0, "seconds for a batch with two listings")

    @unittest.skipUnless(shutil.which("strace"), "strace is not installed")
    def test_only_a_batch_answered_in_one_pass_corks(self):
        pid = self.env.srv.proc.pid
        with self.env.srv.raw_conn(timeout=10) as c:
            self.exchange(c, ["/health_check"], False)
            # every response waits for PostgreSQL, so none is made in its predecessor's pass
            slow = cork_calls(pid, lambda: self.exchange(c, ["/stores?categoryId=1"] * 4, True))
            self.assertEqual(slow, [], "TCP_CORK calls for pipelined listings")
            # not pipelined: no call either
            lone = cork_calls(pid, lambda: self.exchange(c, ["/health_check"] * 4, False))
            self.assertEqual(lone, [], "TCP_CORK calls for requests sent one by one")
            fast = cork_calls(pid, lambda: self.exchange(c, ["/health_check"] * BATCH, True))
        # corked once a pass (the batch may come in more than one read), uncorked each time
        self.assertTrue(fast, "no TCP_CORK call for a pipelined batch")
        self.assertLessEqual(len(fast), 4, fast)
        self.assertEqual(fast, [1, 0] * (len(fast) // 2), fast)


if __name__ == "__main__":
    unittest.main(verbosity=2)
