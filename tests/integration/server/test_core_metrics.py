#!/usr/bin/python3
"""Integration tests: GET /metrics of the sutlab core (Prometheus text format 0.0.4).

Counters are checked by deltas of requests this test made itself; histograms for internal
consistency; sutlab_build_info for the flags the server was started with.
"""

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
import uuid

from sutlab_testlib import (
    Server, build_request, check_histograms, content_type_params, media_type, parse_float, parse_metrics, run_cli,
    start_class_server, stop_class_server,
)

REQ = "http_requests_total"
DUR = "http_request_duration_seconds"


def build_flags(metrics):
    """sutlab_build_info's flags label -> {name: value}, asserting the `--name=value ...` syntax."""
    samples = metrics.samples("sutlab_build_info")
    if len(samples) != 1:
        raise AssertionError("expected exactly one sutlab_build_info sample, got %r" % samples)
    labels, value = samples[0]
    if value != 1:
        raise AssertionError("sutlab_build_info value is %r, not 1" % value)
    flags = {}
    for item in labels["flags"].split():
        m = re.match(r"^--([a-z0-9][a-z0-9-]*)=(.*)$", item)
        if not m:
            raise AssertionError("flags item %r is not --name=value (flags=%r)" % (item, labels["flags"]))
        name, val = m.group(1), m.group(2)
        if name in flags and name != "listen":
            raise AssertionError("flag --%s listed twice in %r" % (name, labels["flags"]))
        flags.setdefault(name, val)
    return labels, flags


class CoreMetrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-metrics-")
        cls.docroot = os.path.join(cls.tmp, "docroot")
        os.makedirs(cls.docroot)
        with open(os.path.join(cls.docroot, "file.txt"), "wb") as f:
            f.write(b"static file for metrics\n")
        cls.srv = start_class_server(Server(docroot=cls.docroot), cls.tmp)

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, cls.tmp)

    def scrape(self):
        return self.srv.metrics()

    def test_content_type_and_format(self):
        status, headers, body = self.srv.get("/metrics")
        self.assertEqual(status, 200)
        ct = headers.get("content-type")
        self.assertEqual(media_type(ct), "text/plain", ct)
        self.assertEqual(content_type_params(ct).get("version"), "0.0.4", ct)
        m = parse_metrics(body.decode("utf-8"))
        self.assertEqual(m.types.get(REQ), "counter")
        self.assertEqual(m.types.get(DUR), "histogram")
        self.assertEqual(m.types.get("http_connections_open"), "gauge")
        self.assertEqual(m.types.get("sutlab_build_info"), "gauge")
        for labels, _ in m.samples(REQ):
            self.assertEqual(set(labels), {"route", "method", "code"}, labels)
            self.assertRegex(labels["code"], r"^[1-5][0-9][0-9]$")
        for (name, lbls), _ in m.items():
            if name.startswith(DUR):
                self.assertIn("route", dict(lbls), name)

    def test_promtool_check(self):
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool not on PATH")
        self.srv.get("/health_check")
        status, _, body = self.srv.get("/metrics")
        p = subprocess.run([promtool, "check", "metrics"], input=body, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        self.assertEqual(p.returncode, 0, p.stdout.decode("utf-8", "replace"))

    def test_health_check_counter_exact_delta(self):
        key = dict(route="/health_check", method="GET", code="200")
        before = self.scrape()
        k = 7
        for _ in range(k):
            self.assertEqual(self.srv.get("/health_check")[0], 200)
        after = self.scrape()
        self.assertEqual(after.value(REQ, **key) - before.value(REQ, **key), k)
        # the K requests landed in the histogram of that route, all below 1 s (and so below 60 s)
        for le in ("1", "60", "+Inf"):
            self.assertEqual(self.bucket(after, "/health_check", le) - self.bucket(before, "/health_check", le), k,
                             "le=%s" % le)
        self.assertEqual(after.value(DUR + "_count", route="/health_check")
                         - before.value(DUR + "_count", route="/health_check"), k)
        dsum = after.value(DUR + "_sum", route="/health_check") - before.value(DUR + "_sum", route="/health_check")
        self.assertGreaterEqual(dsum, 0.0)
        self.assertLess(dsum, k * 1.0)

    def test_keepalive_requests_each_counted(self):
        key = dict(route="/health_check", method="GET", code="200")
        before = self.scrape()
        with self.srv.raw_conn() as conn:
            for _ in range(5):
                conn.send(build_request("GET", "/health_check"))
                self.assertEqual(conn.read_response().body, b"ok")
        after = self.scrape()
        self.assertEqual(after.value(REQ, **key) - before.value(REQ, **key), 5)

    def bucket(self, m, route, le):
        want = parse_float(le)
        for labels, v in m.samples(DUR + "_bucket", route=route):
            if parse_float(labels["le"]) == want and set(labels) == {"route", "le"}:
                return v
        return 0.0

    def test_metrics_route_counts_completed_scrapes(self):
        key = dict(route="/metrics", method="GET", code="200")
        m1 = self.scrape()
        self.scrape()
        m3 = self.scrape()
        # scrapes 1 and 2 completed before scrape 3 was served; scrape 3 itself is still in flight
        self.assertEqual(m3.value(REQ, **key) - m1.value(REQ, **key), 2)

    def test_route_labels_are_templates(self):
        token = uuid.uuid4().hex
        before = self.scrape()
        paths_404 = ["/nope-%s" % token, "/nope-%s/deeper/x?q=%s" % (token, token), "/api-%s" % token]
        for p in paths_404:
            self.assertEqual(self.srv.get(p)[0], 404)
        for _ in range(2):
            self.assertEqual(self.srv.get("/file.txt")[0], 200)
        self.assertEqual(self.srv.get("/file.txt?v=%s" % token)[0], 200)
        self.assertEqual(self.srv.request("POST", "/health_check", body=b"{}")[0], 405)
        after = self.scrape()
        for (name, lbls), _ in after.items():
            for k, v in lbls:
                self.assertNotIn(token, v, "raw path leaked into a label: %s{%s=%r}" % (name, k, v))
        self.assertEqual(after.value(REQ, route="unmatched", method="GET", code="404")
                         - before.value(REQ, route="unmatched", method="GET", code="404"), len(paths_404))
        self.assertEqual(after.value(REQ, route="static", method="GET", code="200")
                         - before.value(REQ, route="static", method="GET", code="200"), 3)
        # the 405 is counted once, under some template route, with method POST and code 405
        self.assertEqual(after.total(REQ, method="POST", code="405") - before.total(REQ, method="POST", code="405"), 1)
        for labels, _ in after.samples(REQ):
            r = labels["route"]
            self.assertTrue(r in ("unmatched", "static") or r.startswith("/"), "odd route label %r" % r)

    def test_histograms_consistent_with_counter(self):
        for p in ("/health_check", "/file.txt", "/nope-x"):
            self.srv.get(p)
        m = self.scrape()
        series = check_histograms(self, m, DUR)
        self.assertIn(frozenset({("route", "/health_check")}), series)
        # per route, the histogram count equals the sum of the counter over methods and codes
        routes = {labels["route"] for labels, _ in m.samples(REQ)}
        self.assertTrue({"/health_check", "static", "unmatched", "/metrics"} <= routes, routes)
        for route in routes:
            with self.subTest(route=route):
                self.assertEqual(m.value(DUR + "_count", route=route), m.total(REQ, route=route))

    def test_connections_open_gauge(self):
        held = []
        try:
            for _ in range(3):
                c = self.srv.raw_conn()
                c.send(build_request("GET", "/health_check"))
                self.assertEqual(c.read_response().status, 200)
                held.append(c)
            m = self.scrape()
            during = m.get_value("http_connections_open")
            self.assertIsNotNone(during, "http_connections_open has no unlabelled sample: %r"
                                 % m.samples("http_connections_open"))
            # 3 held idle keep-alive connections + the scrape's own
            self.assertGreaterEqual(during, 4)
        finally:
            for c in held:
                c.close()
        deadline = time.monotonic() + 3
        while True:
            now = self.scrape().get_value("http_connections_open")
            if now <= during - 3 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertLessEqual(now, during - 3, "gauge did not drop after closing 3 connections")
        self.assertGreaterEqual(now, 1)

    def test_build_info_defaults(self):
        labels, flags = build_flags(self.scrape())
        rc, out, _ = run_cli(["--version"])
        self.assertEqual(rc, 0)
        self.assertEqual(out.strip(), "sutlab " + labels["version"])
        self.assertEqual(flags.get("workers"), "1")
        if "keepalive-timeout" in flags:
            self.assertEqual(flags["keepalive-timeout"], "10")
        if "gzip" in flags:
            self.assertEqual(flags["gzip"], "off")
        if "log" in flags:
            self.assertEqual(flags["log"], "off")


class MetricsTwoWorkers(unittest.TestCase):
    def test_counts_summed_across_workers_and_build_info(self):
        with Server(workers=2, extra_args=["--keepalive-timeout", "0", "--gzip", "--backlog", "512"]) as srv:
            key = dict(route="/health_check", method="GET", code="200")
            _, flags = build_flags(srv.metrics())
            self.assertEqual(flags.get("workers"), "2")
            self.assertEqual(flags.get("keepalive-timeout"), "0")
            self.assertEqual(flags.get("gzip"), "on")
            self.assertEqual(flags.get("backlog"), "512")

            before = srv.metrics()
            errors = []

            def client(n):
                try:
                    for _ in range(n):
                        status, _, body = srv.get("/health_check")  # a new connection each time
                        if (status, body) != (200, b"ok"):
                            errors.append((status, body))
                except Exception as e:  # noqa: BLE001
                    errors.append(repr(e))

            threads = [threading.Thread(target=client, args=(10,)) for _ in range(5)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            self.assertEqual(errors, [])
            after = srv.metrics()
            self.assertEqual(after.value(REQ, **key) - before.value(REQ, **key), 50)
            self.assertEqual(after.value(DUR + "_count", route="/health_check")
                             - before.value(DUR + "_count", route="/health_check"), 50)
            check_histograms(self, after, DUR)


if __name__ == "__main__":
    unittest.main()
