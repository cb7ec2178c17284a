"""The /metrics parser on a real scrape of sutlab (tests/data/loadtools/metrics.txt), broken
copies of it, and fetch_flags over real HTTP."""

import http.server
import math
import threading
import unittest

from toolstest import read  # first: it puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.services import metrics  # noqa: I100
from sutlab_lab.services import procs  # noqa: I100

SCRAPE = read("metrics.txt")


class Parse(unittest.TestCase):
    def test_real_scrape(self):
        m = metrics.parse_metrics(SCRAPE)
        self.assertEqual(m.types["http_request_duration_seconds"], "histogram")
        self.assertEqual(m.types["cache_requests_total"], "counter")
        self.assertEqual(m.value("http_requests_total", route="/health_check", method="GET", code="200"), 109101)
        self.assertEqual(m.total("http_requests_total", route="unmatched"), 53078 + 237)
        self.assertEqual(m.total("http_requests_total", code="413"), 237)
        self.assertEqual(m.value("cache_requests_total", result="hit"), 58295)
        self.assertEqual(m.value("cache_local_hits_total"), 0)
        self.assertIsNone(m.get_value("cache_requests_total", result="no-such"))
        self.assertEqual(m.value("event_loop_lag_seconds", worker="0"), 0.001)
        flags = m.samples("sutlab_build_info")[0][0]["flags"]
        self.assertTrue(flags.startswith("--workers=1 "), flags)
        self.assertIn("--redis-cache=on", flags)

    def test_histograms_add_up(self):
        m = metrics.parse_metrics(SCRAPE)
        for labels, count in m.samples("http_request_duration_seconds_count"):
            inf = m.get_value("http_request_duration_seconds_bucket", le="+Inf", **labels)
            self.assertEqual(inf, count, labels)
        self.assertEqual(len(m.samples("db_query_duration_seconds_bucket")), 714)
        self.assertEqual(metrics.parse_float("+Inf"), math.inf)
        self.assertTrue(math.isnan(metrics.parse_float("NaN")))

    def test_malformed_copies_are_refused(self):
        broken = {
            "no final newline": SCRAPE.rstrip("\n"),
            "second TYPE": SCRAPE + "# TYPE http_requests_total counter\n",
            "duplicate sample": SCRAPE + "db_errors_total 0\n",
            "family not contiguous": SCRAPE + 'http_requests_total{route="/x",method="GET",code="200"} 1\n',
            "bad label escape": SCRAPE.replace('route="/metrics"', 'route="/met\\rics"', 1),
            "unquoted label": SCRAPE.replace('result="hit"', "result=hit", 1),
            "bad value": SCRAPE.replace("db_errors_total 0", "db_errors_total zero", 1),
            "bucket without le": SCRAPE.replace('{route="/stores",le="+Inf"}', '{route="/stores"}', 1),
        }
        for what, text in broken.items():
            with self.subTest(what=what):
                self.assertRaises(metrics.MetricsFormatError, metrics.parse_metrics, text)


# Written by hand: a histogram with labels (one of them escaped, one holding ',', '=' and '}'), a
# counter whose TYPE line has no _total, an untyped sample, a timestamp and a summary.
HAND = """# HELP req_seconds Request latency.
# TYPE req_seconds histogram
req_seconds_bucket{route="/a",le="0.1"} 2
req_seconds_bucket{route="/a",le="1"} 5
req_seconds_bucket{route="/a",le="+Inf"} 6
req_seconds_sum{route="/a"} 3.25
req_seconds_count{route="/a"} 6
req_seconds_bucket{ route = "say \\"hi\\" \\\\ back\\nslash" , le="+Inf" ,} 1
req_seconds_sum{route="say \\"hi\\" \\\\ back\\nslash",le="x"} 0.5
req_seconds_count{route="say \\"hi\\" \\\\ back\\nslash"} 1
# TYPE restarts counter
restarts{why="a,b=c}"} 3
# a plain comment
loose_gauge 7 1700000000000
# TYPE rpc summary
rpc{quantile="0.5"} NaN
rpc_sum -Inf
rpc_count 0
"""


class ByHand(unittest.TestCase):
    """Each expected value read off HAND above, not from a run of the parser."""

    def test_histogram_buckets_and_labels(self):
        m = metrics.parse_metrics(HAND)
        self.assertEqual(m.types, {"req_seconds": "histogram", "restarts": "counter", "rpc": "summary"})
        self.assertEqual(sorted((d["le"], v) for d, v in m.samples("req_seconds_bucket", route="/a")),
                         [("+Inf", 6.0), ("0.1", 2.0), ("1", 5.0)])
        self.assertEqual(m.value("req_seconds_sum", route="/a"), 3.25)
        self.assertEqual(m.value("req_seconds_count", route="/a"), 6.0)
        odd = 'say "hi" \\ back\nslash'
        self.assertEqual(m.get_value("req_seconds_bucket", route=odd, le="+Inf"), 1.0)
        self.assertEqual(m.get_value("req_seconds_sum", route=odd, le="x"), 0.5)  # le only binds buckets
        self.assertEqual(m.get_value("req_seconds_count", route=odd), 1.0)
        self.assertEqual(len(m), 13)

    def test_counter_untyped_summary(self):
        m = metrics.parse_metrics(HAND)
        self.assertEqual(m.samples("restarts"), [({"why": "a,b=c}"}, 3.0)])
        self.assertIsNone(m.get_value("restarts_total", why="a,b=c}"))
        self.assertEqual(m.value("loose_gauge"), 7.0)
        self.assertTrue(math.isnan(m.value("rpc", quantile="0.5")))
        self.assertEqual(m.value("rpc_sum"), -math.inf)
        self.assertEqual(m.get_value("rpc_count"), 0.0)

    def test_lenient_reads_what_the_check_refuses(self):
        split = HAND + 'req_seconds_count{route="/b"} 1\n'  # req_seconds no longer contiguous
        self.assertRaises(metrics.MetricsFormatError, metrics.parse_metrics, split)
        self.assertEqual(metrics.parse_metrics(split, check=False).value("req_seconds_count", route="/b"), 1.0)
        for bad in (HAND + 'restarts{why="x"} 1\nrestarts{why="x"} 2\n',              # duplicate sample
                    HAND.replace('le="0.1"', 'le="tenth"'),                          # le not a number
                    HAND.replace('req_seconds_bucket{route="/a",le="1"}', 'req_seconds_bucket{route="/a"}')):
            self.assertRaises(metrics.MetricsFormatError, metrics.parse_metrics, bad, check=False)


class Handler(http.server.BaseHTTPRequestHandler):
    body = SCRAPE.encode()

    def do_GET(self):
        self.send_response(200 if self.path == "/metrics" else 404)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


class FetchFlags(unittest.TestCase):
    def test_over_http(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = "http://127.0.0.1:%d" % server.server_address[1]
            flags = metrics.fetch_flags(url + "/")
            self.assertEqual(flags, metrics.parse_metrics(SCRAPE).samples("sutlab_build_info")[0][0]["flags"])
            self.assertEqual(metrics.scrape(url).value("db_errors_total"), 0)
        finally:
            server.shutdown()
            server.server_close()

    def test_nobody_listening(self):
        self.assertIsNone(metrics.fetch_flags("http://127.0.0.1:%d" % procs.free_port()))


if __name__ == "__main__":
    unittest.main()
