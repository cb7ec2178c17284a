"""Every parser of loadscripts/sutlab_lab on what the tools really printed (tests/data/loadtools, made
by its `capture` script): a clean run, and runs with errors, timeouts and non-2xx responses. The
expected figures are read off the files."""

import unittest

from toolstest import data, read  # first: it puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import parsers  # noqa: I100


class Wrk(unittest.TestCase):
    def test_latency_report(self):
        r = parsers.parse_wrk(read("wrk_latency.txt"))
        self.assertEqual(r["requests"], 104545)
        self.assertEqual(r["rps"], 52246.43)
        self.assertEqual(r["duration_s"], 2.0)
        self.assertAlmostEqual(r["bytes"], 22.43 * 1024 ** 2)
        self.assertEqual((r["errors"], r["socket_errors"], r["status_errors"]), (0, 0, 0))
        self.assertEqual(r["percentiles"], [(50.0, 0.081), (75.0, 0.121), (90.0, 0.15), (99.0, 0.289)])
        self.assertEqual((r["p50"], r["p99"]), (0.081, 0.289))
        self.assertAlmostEqual(r["mean"], 0.10208)
        self.assertEqual(r["max"], 4.0)

    def test_sutlab_wrk_line_wins_over_the_report(self):
        r = parsers.parse_wrk(read("wrk_script.txt"))
        self.assertEqual((r["requests"], r["rps"], r["duration_s"], r["bytes"]), (58295, 27756.29, 2.1, 139528491))
        self.assertEqual((r["p50"], r["p95"], r["p99"], r["p99.9"]), (0.228, 0.657, 2.447, 4.148))
        # the Lua histogram's 100th percentile reads 0: left out, the max is there
        self.assertEqual(r["percentiles"][-1], (99.99, 5.367))
        self.assertEqual(r["max"], 5.456)
        self.assertEqual(r["errors"], 0)

    def test_non2xx(self):
        r = parsers.parse_wrk(read("wrk_non2xx.txt"))
        self.assertEqual((r["requests"], r["status_errors"], r["socket_errors"], r["errors"]), (52564, 52564, 0, 52564))
        self.assertEqual(r["p99"], 2.78)

    def test_every_request_timed_out(self):
        # wrk prints 0.00us latencies when none was recorded: they are not times
        r = parsers.parse_wrk(read("wrk_timeout.txt"))
        self.assertEqual((r["requests"], r["socket_errors"], r["errors"]), (8, 8, 8))
        self.assertEqual(r["percentiles"], [])
        self.assertIsNone(r.get("p50"))
        self.assertIsNone(r["max"])

    def test_percentiles_printed_as_zero_are_left_out(self):
        # wg/wrk#354: 0.00us for the 90th and 99th percentiles of a run whose max is 6.56 ms
        r = parsers.parse_wrk(read("wrk_zero_percentiles.txt"))
        self.assertEqual(r["requests"], 183590)
        self.assertEqual(r["percentiles"], [(50.0, 1.78), (75.0, 2.44)])
        self.assertEqual(r["p50"], 1.78)
        self.assertIsNone(r["p99"])
        self.assertEqual(r["max"], 6.56)

    def test_timeouts_and_non2xx_beside_answers(self):
        r = parsers.parse_wrk(read("wrk_mixed.txt"))
        self.assertEqual((r["requests"], r["socket_errors"], r["status_errors"], r["errors"]), (30, 8, 11, 19))
        self.assertEqual((r["p50"], r["p99"]), (0.081, 0.49))

    def test_refused(self):
        with self.assertRaisesRegex(ValueError, "unable to connect to .* Connection refused"):
            parsers.parse_wrk(read("wrk_refused.txt"))

    def test_not_wrk(self):
        with self.assertRaises(ValueError):
            parsers.parse_wrk(read("hey_report.txt"))

    def test_times(self):
        self.assertEqual(parsers.wrk_ms("112.00us"), 0.112)
        self.assertEqual(parsers.wrk_ms("3.54ms"), 3.54)
        self.assertEqual(parsers.wrk_ms("1.20s"), 1200.0)
        self.assertEqual(parsers.wrk_ms("2m"), 120000.0)
        self.assertRaises(ValueError, parsers.wrk_ms, "12 parsecs")


class Hey(unittest.TestCase):
    def test_report(self):
        r = parsers.parse_hey(read("hey_report.txt"))
        self.assertEqual((r["requests"], r["rps"], r["duration_s"], r["bytes"]), (2000, 15910.8544, 0.1257, 4000.0))
        self.assertEqual(r["errors"], 0)
        self.assertEqual(r["percentiles"][0], (10.0, 0.1))
        self.assertEqual((r["p50"], r["p95"], r["p99"]), (0.4, 1.3, 2.4))
        self.assertEqual((r["mean"], r["max"]), (0.5, 5.0))

    def test_non2xx(self):
        r = parsers.parse_hey(read("hey_non2xx.txt"))
        self.assertEqual((r["requests"], r["status_errors"], r["socket_errors"]), (200, 200, 0))

    def test_timeouts(self):
        r = parsers.parse_hey(read("hey_timeout.txt"))
        self.assertEqual((r["requests"], r["socket_errors"], r["errors"]), (8, 8, 8))
        self.assertEqual(r["percentiles"], [])
        self.assertIsNone(r["mean"])  # hey's 'NaN secs'

    def test_refused(self):
        r = parsers.parse_hey(read("hey_refused.txt"))
        self.assertEqual((r["requests"], r["socket_errors"], r["status_errors"]), (20, 20, 0))
        self.assertEqual(r["rps"], 2853.72)

    def test_not_hey(self):
        with self.assertRaises(ValueError):
            parsers.parse_hey(read("wrk_latency.txt"))


class Ab(unittest.TestCase):
    def test_report(self):
        r = parsers.parse_ab(read("ab_report.txt"))
        self.assertEqual((r["requests"], r["rps"], r["duration_s"], r["bytes"]), (2000, 7828.92, 0.255, 440000.0))
        self.assertEqual((r["errors"], r["length_failures"]), (0, 0))
        self.assertEqual((r["p50"], r["p99"], r["p100"]), (1.0, 3.0, 4.0))
        self.assertEqual(len(r["percentiles"]), 9)
        self.assertEqual((r["mean"], r["max"]), (1.0, 4.0))

    def test_non2xx(self):
        r = parsers.parse_ab(read("ab_non2xx.txt"))
        self.assertEqual((r["requests"], r["status_errors"], r["socket_errors"], r["errors"]), (300, 300, 0, 300))

    def test_length_failures_are_not_errors(self):
        r = parsers.parse_ab(read("ab_length.txt"))  # /metrics: its length changes every request
        self.assertEqual((r["requests"], r["length_failures"], r["errors"]), (300, 299, 0))
        self.assertEqual(r["max"], 17.0)

    def test_timeout_and_refused_have_no_report(self):
        with self.assertRaisesRegex(ValueError, "timeout specified has expired"):
            parsers.parse_ab(read("ab_timeout.txt"))
        with self.assertRaisesRegex(ValueError, "Connection refused"):
            parsers.parse_ab(read("ab_refused.txt"))


class Pgbench(unittest.TestCase):
    def test_report(self):
        r = parsers.parse_pgbench(read("pgbench_run.txt"))
        self.assertEqual((r["requests"], r["rps"], r["errors"]), (45748, 24268.157088, 0))
        self.assertEqual((r["mean"], r["duration_s"]), (0.165, 2.0))

    def test_failed_transactions(self):
        r = parsers.parse_pgbench(read("pgbench_failures.txt"))
        self.assertEqual((r["requests"], r["status_errors"], r["errors"]), (5528, 6613, 6613))
        self.assertEqual(r["rps"], 2852.107299)

    def test_aborted(self):
        with self.assertRaisesRegex(ValueError, "aborted.*division by zero"):
            parsers.parse_pgbench(read("pgbench_aborted.txt"))

    def test_log(self):
        with open(data("pgbench_run.log")) as f:
            lat, failed = parsers.pgbench_latencies(f)
        self.assertEqual((len(lat), failed), (894, 0))
        self.assertEqual((lat[0], lat[-1]), (0.037, 17.066))
        r = parsers.with_log_percentiles({}, lat)
        self.assertEqual(r["p50"], 0.117)  # the 447th of 894
        self.assertEqual(r["p99"], 0.471)  # the 886th: ceil(885.06)

    def test_log_with_failures(self):
        with open(data("pgbench_failures.log")) as f:
            lat, failed = parsers.pgbench_latencies(f)
        self.assertEqual((len(lat), failed), (296, 314))
        r = parsers.with_log_percentiles({}, lat)
        self.assertEqual((r["p50"], r["p99"]), (0.437, 1.147))  # 148th and 294th of 296

    def test_no_log(self):
        r = parsers.with_log_percentiles({}, [])
        self.assertEqual((r["p50"], r["p99"], r["percentiles"]), (None, None, []))


class RedisBenchmark(unittest.TestCase):
    def test_csv(self):
        r = parsers.parse_redis_benchmark(read("redis_benchmark.csv"))
        self.assertEqual(r["rps"], 32786.88)
        self.assertEqual((r["p50"], r["p95"], r["p99"]), (0.103, 0.359, 0.535))
        self.assertEqual((r["mean"], r["max"], r["errors"]), (0.149, 3.663, 0))

    def test_server_error_and_refused(self):
        with self.assertRaisesRegex(ValueError, "WRONGTYPE"):
            parsers.parse_redis_benchmark(read("redis_benchmark_errors.txt"))
        with self.assertRaisesRegex(ValueError, "Could not connect .* refused"):
            parsers.parse_redis_benchmark(read("redis_benchmark_refused.txt"))


class Locust(unittest.TestCase):
    def test_aggregate_with_failures(self):
        r = parsers.locust_aggregate(data("locust_stats.csv"))
        self.assertEqual((r["requests"], r["errors"], r["status_errors"]), (285, 146, 146))
        self.assertAlmostEqual(r["rps"], 71.35282806616925)
        self.assertEqual((r["p50"], r["p95"], r["p99"], r["max"]), (2.0, 27.0, 47.0, 71.0))
        self.assertAlmostEqual(r["bytes"], 31.712280701754388 * 285)

    def test_aggregate_refused(self):
        r = parsers.locust_aggregate(data("locust_refused_stats.csv"))
        self.assertEqual((r["requests"], r["errors"]), (20, 20))

    def test_seconds_and_steps(self):
        secs = parsers.locust_seconds(data("locust_seconds.csv"))
        self.assertEqual([s["users"] for s in secs], [1, 1, 1, 2, 2])
        self.assertEqual((secs[1]["requests"], secs[1]["failures"], secs[1]["p99_ms"]), (59, 27, 31.0))
        steps = parsers.locust_steps(data("locust_steps.csv"))
        self.assertEqual([(s["users"], s["seconds"], s["requests"], s["failures"]) for s in steps],
                         [(1, 2, 133, 58), (2, 1, 65, 38)])
        self.assertEqual(steps[0]["error_pct"], 43.609)

    def test_history(self):
        rows, full = parsers.locust_history(data("locust_stats_history.csv"))
        self.assertFalse(full)
        self.assertEqual([r["Total Request Count"] for r in rows], ["0", "53", "124", "195", "285"])


class Numbers(unittest.TestCase):
    def test_missing_is_none(self):
        for text in ("", "N/A", "NaN", "nan", None, "x"):
            self.assertIsNone(parsers.number(text), text)
        self.assertEqual(parsers.number("1.5"), 1.5)


class ErrorKinds(unittest.TestCase):
    """Errors by kind (what loadscripts/steps prints), on the same captured outputs."""

    def test_each_tool(self):
        self.assertEqual(parsers.parse_ab(read("ab_non2xx.txt"))["error_kinds"], {"non-2xx": 300})
        self.assertEqual(parsers.parse_hey(read("hey_non2xx.txt"))["error_kinds"], {"404": 200})
        self.assertEqual(parsers.parse_hey(read("hey_refused.txt"))["error_kinds"], {"refused": 20})
        self.assertEqual(parsers.parse_hey(read("hey_timeout.txt"))["error_kinds"], {"read timeout": 8})
        self.assertEqual(parsers.parse_wrk(read("wrk_non2xx.txt"))["error_kinds"], {"non-2xx": 52564})
        self.assertEqual(parsers.parse_wrk(read("wrk_timeout.txt"))["error_kinds"], {"read timeout": 8})
        self.assertEqual(parsers.parse_wrk(read("wrk_latency.txt"))["error_kinds"], {})
        self.assertEqual(parsers.locust_error_kinds(data("locust_failures.csv")), {"413": 146})
        self.assertEqual(parsers.locust_error_kinds(data("locust_refused_failures.csv")), {"refused": 20})

    def test_classify(self):
        self.assertEqual(parsers.classify("HTTPError('503 Server Error: x')"), "503")
        self.assertEqual(parsers.classify("ConnectionResetError(104, 'Connection reset by peer')"), "reset")
        self.assertEqual(parsers.classify("ReadTimeout('timed out')"), "read timeout")
        self.assertEqual(parsers.classify("something else"), "other")


class ReadTimeouts(unittest.TestCase):
    """A client read timeout (steps --read-timeout) is a kind of its own, told apart from connect
    errors, connect timeouts and error statuses, on outputs captured against a stalled route
    (/work/sleep slower than the client's timeout) and a listener that never accepts."""

    def test_hey_gives_up_and_sends_again(self):
        # 4 users, 3 s, a 1 s timeout on a 1.5 s route: each abandons its request at 1 s, 3 times
        r = parsers.parse_hey(read("hey_read_timeout.txt"))
        self.assertEqual(r["error_kinds"], {"read timeout": 12})
        self.assertEqual((r["errors"], r["requests"]), (12, 12))
        self.assertIsNone(r["mean"])

    def test_hey_connect_and_read_timeouts_apart(self):
        r = parsers.parse_hey(read("hey_connect_timeout.txt"))
        self.assertEqual(r["error_kinds"], {"connect timeout": 7, "read timeout": 5})

    def test_wrk_timeouts_beside_404s_and_successes(self):
        r = parsers.parse_wrk(read("wrk_mixed.txt"))
        self.assertEqual(r["error_kinds"], {"read timeout": 8, "non-2xx": 11})

    def test_wrk_lua_summary(self):
        line = ('SUTLAB_WRK {"rps": 2.0, "requests": 8, "duration_s": 4.0, "bytes": 100, "latency_ms": '
                '{"mean": 1.0, "max": 2.0}, "percentiles": [], "errors": {"connect": 2, "read": 0, '
                '"write": 0, "timeout": 5, "status": 1}}')
        self.assertEqual(parsers.parse_wrk(line)["error_kinds"], {"refused": 2, "read timeout": 5, "non-2xx": 1})

    def test_classify_by_phase(self):
        cases = {
            'Get "http://h/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)':
                "read timeout",
            'Get "http://h/": dial tcp 127.0.0.1:1: i/o timeout (Client.Timeout exceeded while awaiting headers)':
                "connect timeout",
            'Get "http://h/": net/http: request canceled while waiting for connection '
            '(Client.Timeout exceeded while awaiting headers)': "connect timeout",
            "ReadTimeout(ReadTimeoutError(\"HTTPConnectionPool(host='h', port=1): Read timed out. "
            "(read timeout=2)\"))": "read timeout",
            "ConnectTimeout(MaxRetryError(\"... (Caused by ConnectTimeoutError(<x>, 'Connection to h "
            "timed out. (connect timeout=2)'))\"))": "connect timeout",
            # Locust's FastHttpUser says the same for both phases (seen on both): not a read timeout
            "RetriesExceeded('http://127.0.0.1:1/', 1, original=timed out)": "timeout",
            'Get "http://h/": dial tcp 127.0.0.1:1: connect: connection refused': "refused",
            "HTTPError('504 Server Error: Gateway Timeout for url: http://h/')": "504",
        }
        for message, kind in cases.items():
            self.assertEqual(parsers.classify(message), kind, message)


if __name__ == "__main__":
    unittest.main()
