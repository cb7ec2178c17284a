"""flip --live's figures, from the engine's live sampler (loadscripts/sutlab_lab/engine/live.py): a
scrape of /metrics as one point, the latency quantiles interpolated within a bucket, and a half's
figures (a stretch of the scrapes)."""

import os
import shutil
import tempfile
import unittest
from unittest import mock

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.services import metrics  # noqa: E402,I100
from sutlab_lab.errors import RunError  # noqa: E402
from sutlab_lab.engine import live  # noqa: E402
from sutlab_lab.commands import flip  # noqa: E402

TEXT = """# TYPE http_requests_total counter
http_requests_total{route="/stores",method="GET",code="200"} %(ok)d
http_requests_total{route="/stores",method="GET",code="503"} %(bad)d
http_requests_total{route="/metrics",method="GET",code="200"} 999
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{route="/stores",le="0.001"} %(b1)d
http_request_duration_seconds_bucket{route="/stores",le="0.01"} %(b2)d
http_request_duration_seconds_bucket{route="/stores",le="+Inf"} %(b3)d
http_request_duration_seconds_sum{route="/stores"} 1
http_request_duration_seconds_count{route="/stores"} %(b3)d
http_request_duration_seconds_bucket{route="/metrics",le="0.001"} 0
http_request_duration_seconds_bucket{route="/metrics",le="0.01"} 0
http_request_duration_seconds_bucket{route="/metrics",le="+Inf"} 999
http_request_duration_seconds_sum{route="/metrics"} 1
http_request_duration_seconds_count{route="/metrics"} 999
"""


def point(t, ok, bad, b1, b2, b3, cpu):
    return live.point(t, metrics.parse_metrics(TEXT % dict(ok=ok, bad=bad, b1=b1, b2=b2, b3=b3)), cpu)


class Live(unittest.TestCase):
    def test_a_point_leaves_metrics_out_and_counts_error_codes(self):
        p = point(0.0, 90, 10, 50, 90, 100, 1.5)
        self.assertEqual((p["requests"], p["errors"], p["cpu"]), (100, 10, 1.5))
        self.assertEqual(p["buckets"], {0.001: 50, 0.01: 90, float("inf"): 100})

    def test_quantiles_interpolate_within_a_bucket(self):
        lo, hi = point(0.0, 0, 0, 0, 0, 0, 0.0), point(1.0, 100, 0, 50, 90, 100, 0.0)
        self.assertAlmostEqual(live.quantile(0.5, lo, hi), 1.0)        # the first bucket's top
        self.assertAlmostEqual(live.quantile(0.7, lo, hi), 5.5)        # halfway into 1..10 ms
        self.assertAlmostEqual(live.quantile(0.99, lo, hi), 10.0)      # in +Inf: the last finite bound
        self.assertIsNone(live.quantile(0.5, hi, hi))                  # no request in between

    def test_a_point_and_a_stretch_say_the_flags_in_force(self):
        info = '# TYPE sutlab_build_info gauge\nsutlab_build_info{version="1",flags="--gzip=%s"} 1\n'
        texts = [TEXT % dict(ok=n, bad=0, b1=n, b2=n, b3=n) + info % word for n, word in ((0, "off"), (10, "on"))]
        pts = [live.point(float(t), metrics.parse_metrics(text), 0.0) for t, text in enumerate(texts)]
        self.assertEqual(pts[0]["flags"], "--gzip=off")
        self.assertEqual(live.stretch(pts, 0.0, 1.0)["build_flags"], "--gzip=on")  # the last scrape's
        self.assertIsNone(point(0.0, 0, 0, 0, 0, 0, 0.0)["flags"])  # no sutlab_build_info

    def test_a_half(self):
        pts = [point(0.0, 0, 0, 0, 0, 0, 0.0), point(1.0, 90, 10, 50, 90, 100, 0.5),
               point(2.0, 180, 20, 100, 180, 200, 1.0)]
        h = live.stretch(pts, 0.0, 2.0)
        self.assertEqual((h["rps"], h["errors"], h["cpu_pct"]), (100.0, 20, 50.0))
        self.assertAlmostEqual(h["cpu_us_req"], 5000.0)
        with self.assertRaises(RunError):
            live.stretch(pts, 5.0, 9.0)



class LabAdmin(unittest.TestCase):
    """flip --live finds the lab's admin listener in the flags infra/lab up saved, one word a line."""

    def found(self, text):
        var = tempfile.mkdtemp(prefix="sutlab-flip-admin-")
        self.addCleanup(shutil.rmtree, var, ignore_errors=True)
        if text is not None:
            with open(os.path.join(var, "sutlab.flags"), "w") as f:
                f.write(text)
        with mock.patch.dict(os.environ, {"SUTLAB_LAB_VAR": var}):
            return flip.lab_admin()

    def test_up_admin_flags(self):
        self.assertEqual(self.found("--workers\n1\n--admin-listen\n127.0.0.1:9000\n--admin-token-file\n/x/admin.token\n"),
                         ("http://127.0.0.1:9000", "/x/admin.token"))

    def test_the_equals_forms_and_a_bare_port(self):
        self.assertEqual(self.found("--admin-listen=:9100\n--admin-token-file=/t\n"), ("http://127.0.0.1:9100", "/t"))

    def test_no_admin_listener_no_flags_file(self):
        self.assertEqual(self.found("--workers\n1\n"), (None, None))
        self.assertEqual(self.found(None), (None, None))


if __name__ == "__main__":
    unittest.main()
