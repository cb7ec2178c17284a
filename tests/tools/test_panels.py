"""report.html's shared panels (sutlab_lab/panels.py): the runs' CPU timelines found in a
command's results, put end to end on one clock with each run marked, a tier not sampled in a run
left blank (not zero), the sampler's too-close last look folded in; --prometheus resolved."""

import csv
import os
import tempfile
import types
import unittest

import toolstest  # noqa: F401  (first: it puts loadscripts/ on the path, for package sutlab_lab)
from sutlab_lab import panels  # noqa: I100


def timeline(t0, cpus, every=0.25):
    """Looks every `every` s from t0, each tier's cumulative CPU seconds as given per look."""
    return [(t0 + i * every, dict(c)) for i, c in enumerate(cpus)]


class Segments(unittest.TestCase):
    def test_found_where_they_sit_and_labelled_so(self):
        a, b, c = timeline(0, [{"web": 0}]), timeline(5, [{"web": 0}]), timeline(9, [{"db": 0}])
        results = {"results": {"status.txt": {"sutlab": [{"rps": 1, "cpu_timeline": a}, {"cpu_timeline": b}]}},
                   "runs": {("near", "sync"): [{"cpu_timeline": c}]}, "sizes": ["x"], "load_before": "0.1"}
        self.assertEqual(panels.segments_in(results, ("static",)),
                         [("static status.txt sutlab r1", a), ("static status.txt sutlab r2", b),
                          ("static near sync r1", c)])

    def test_a_result_without_a_timeline_gives_none(self):
        self.assertEqual(panels.segments_in({"kinds": {"health": {"instructions": 12}}}, ("cost",)), [])


class Curve(unittest.TestCase):
    def test_runs_end_to_end_in_the_order_they_ran(self):
        # "on" ran first (its first look is earlier) though listed second
        off = timeline(100.0, [{"web": 0.0}, {"web": 0.125}, {"web": 0.25}])
        on = timeline(10.0, [{"web": 1.0, "db": 0.0}, {"web": 1.25, "db": 0.05}])
        names, points = panels.curve([("off", off), ("on", on)])
        self.assertEqual(names, ["web", "db"])  # tiers.TIERS' order
        self.assertEqual([(round(t, 2), label) for t, label, _ in points], [(0.25, "on"), (0.5, "off"), (0.75, "off")])
        self.assertAlmostEqual(points[0][2]["web"], 1.0)   # 0.25 s of CPU in 0.25 s: a core
        self.assertAlmostEqual(points[0][2]["db"], 0.2)
        self.assertAlmostEqual(points[1][2]["web"], 0.5)
        self.assertIsNone(points[1][2]["db"])  # not sampled in "off": blank, not zero

    def test_the_last_look_too_close_is_folded_in(self):
        looks = [(0.0, {"web": 0.0}), (0.25, {"web": 0.25}), (0.5, {"web": 0.5}), (0.501, {"web": 0.5})]
        _, points = panels.curve([("x", looks)])
        self.assertEqual([round(p[0], 3) for p in points], [0.25, 0.501])
        self.assertAlmostEqual(points[-1][2]["web"], 0.25 / 0.251, places=3)

    def test_a_run_of_one_look_is_left_out(self):
        self.assertEqual(panels.curve([("x", timeline(0, [{"web": 0}])), ("y", [])]), ([], []))

    def test_csv(self):
        names, points = panels.curve([("2", timeline(0, [{"web": 0.0}, {"web": 0.1}])),
                                      ("4", timeline(9, [{"web": 0.1, "load": 0.0}, {"web": 0.3, "load": 0.05}]))])
        path = os.path.join(tempfile.mkdtemp(prefix="sutlab-panels-"), "cpu.csv")
        panels.write_csv(points, names, "level", path)
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows, [["t", "level", "cpu_web_pct", "cpu_load_pct"], ["0.25", "2", "40.0", ""],
                                ["0.5", "4", "80.0", "20.0"]])


class Page:
    def __init__(self):
        self.texts, self.images = [], []

    def add_text(self, title, text, panel=""):
        self.texts.append((title, text, panel))

    def add_image(self, title, path, panel=""):
        self.images.append((title, path, panel))
        return True


class CpuPanel(unittest.TestCase):
    def test_nothing_sampled_is_said(self):
        page = Page()
        out = tempfile.mkdtemp(prefix="sutlab-panels-")
        self.assertEqual(panels.cpu_panel(page, out, [], unsampled=["suite cost samples no tier over time"]), [])
        self.assertEqual(page.images, [])
        self.assertEqual(len(page.texts), 1)
        self.assertIn("suite cost samples no tier over time", page.texts[0][1])
        self.assertIn("no tier was sampled", page.texts[0][1])
        self.assertFalse(os.path.exists(os.path.join(out, "cpu.csv")))


class Prometheus(unittest.TestCase):
    def test_settings(self):
        var = tempfile.mkdtemp(prefix="sutlab-panels-")  # no var/monitoring/prometheus.pid: no lab's
        self.assertIsNone(panels.prometheus_url("auto", var))
        self.assertIsNone(panels.prometheus_url("none", var))
        self.assertEqual(panels.prometheus_url("http://10.0.0.1:9090", var), "http://10.0.0.1:9090")

    def test_none_reachable_puts_nothing_on_the_page(self):
        page = Page()
        self.assertFalse(panels.prometheus_panel(page, tempfile.mkdtemp(), "none", "/nonexistent", 0, 0))
        self.assertEqual((page.texts, page.images), ([], []))

    def test_tier_roots_given_win_over_the_lab(self):
        args = types.SimpleNamespace(web_pid=[11, 12], lb_pid=[], db_pid=[13], redis_pid=[], lab_var="/nonexistent")
        self.assertEqual(panels.tier_roots(args), {"web": [11, 12], "db": [13]})
        args.web_pid, args.db_pid = [], []
        self.assertEqual(panels.tier_roots(args), {})  # no lab there


if __name__ == "__main__":
    unittest.main()
