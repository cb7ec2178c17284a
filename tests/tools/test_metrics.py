"""The /metrics parser on a real scrape of sutlab (tests/data/loadtools/metrics.txt), broken
copies of it, and fetch_flags over real HTTP."""

import http.server
import math
import threading
import unittest

from toolstest import read  # first: it puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import metrics  # noqa: I100
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
