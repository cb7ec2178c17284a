#!/usr/bin/python3
"""Integration tests: --db-latency-ms, a remote database's round trip added to every query (the
php-fpm write-up's show_articles stage needs ~28 ms per request spent outside the web CPU).

Run under loadscripts/sutlab_lab/services/with-services. The uncached store listing runs one statement per request.
Expected (README.md's flag table): each query waits at least MS ms before it is sent; a sync worker sleeps through
it, so concurrent requests on one worker queue behind each other; an async worker holds the query on
a timer, so they overlap. The wait counts in db_query_duration_seconds and the Server-Timing `db`
entry, not in db_pool_wait_seconds.
"""

import re
import threading
import time
import unittest

from sutlab_testlib import assert_usage_error
from test_delivery import Env

LATENCY_MS = 100
CONCURRENT = 6
_DB_DUR = re.compile(r"(?:^|,)\s*db;dur=([0-9.]+)")


class DbLatencyCases:
    MODE = None
    REDIS_DB = 14

    @classmethod
    def setUpClass(cls):
        cls.env = Env(cls.REDIS_DB, mode=cls.MODE, extra=["--db-latency-ms", str(LATENCY_MS)]).start()

    @classmethod
    def tearDownClass(cls):
        cls.env.finish()

    def timed_listing(self):
        start = time.monotonic()
        status, headers, body = self.env.listing(1)
        elapsed = time.monotonic() - start
        self.assertEqual(status, 200, body[:200])
        return elapsed, headers

    def test_one_request_waits_the_round_trip(self):
        elapsed, headers = self.timed_listing()
        self.assertGreaterEqual(elapsed, LATENCY_MS / 1000.0)
        timing = headers.get("Server-Timing") or headers.get("server-timing")
        m = _DB_DUR.search(timing or "")
        self.assertIsNotNone(m, timing)
        self.assertGreaterEqual(float(m.group(1)), LATENCY_MS * 0.99, timing)

    def test_metrics_count_it_as_query_time_not_pool_wait(self):
        before = self.env.srv.metrics()
        self.timed_listing()
        after = self.env.srv.metrics()
        queries = after.total("db_query_duration_seconds_count") - before.total("db_query_duration_seconds_count")
        spent = after.total("db_query_duration_seconds_sum") - before.total("db_query_duration_seconds_sum")
        waited = after.total("db_pool_wait_seconds_sum") - before.total("db_pool_wait_seconds_sum")
        self.assertGreaterEqual(queries, 1)
        self.assertGreaterEqual(spent, queries * LATENCY_MS / 1000.0 * 0.99)
        self.assertLess(waited, 0.5 * LATENCY_MS / 1000.0 * queries)

    def concurrent_wall(self):
        """Wall time of CONCURRENT listings sent at once, each on its own connection, to one worker."""
        errors, go = [], threading.Barrier(CONCURRENT + 1)

        def one():
            try:
                go.wait()
                self.timed_listing()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=one) for _ in range(CONCURRENT)]
        for t in threads:
            t.start()
        go.wait()
        start = time.monotonic()
        for t in threads:
            t.join(30)
        self.assertEqual(errors, [])
        return time.monotonic() - start


class Sync(DbLatencyCases, unittest.TestCase):
    MODE = "sync"

    def test_the_worker_blocks_through_it(self):
        # one worker, one request at a time: the round trips add up
        self.assertGreaterEqual(self.concurrent_wall(), CONCURRENT * LATENCY_MS / 1000.0 * 0.95)


class Async(DbLatencyCases, unittest.TestCase):
    MODE = "async"

    def test_the_loop_goes_on_meanwhile(self):
        # held on a timer: the round trips overlap, far below CONCURRENT of them end to end
        self.assertLess(self.concurrent_wall(), CONCURRENT * LATENCY_MS / 1000.0 / 2)


class Flag(unittest.TestCase):
    def test_bad_values_exit_2(self):
        for bad in ("-1", "x", "10001", ""):
            assert_usage_error(self, ["serve", "--db-latency-ms", bad, "--listen", "127.0.0.1:1"], "--db-latency-ms")


if __name__ == "__main__":
    unittest.main()
