"""loadscripts/sutlab_lab/cases/php_fpm.py's checks on measured tables shaped as steps.csv gives them:
every figure the knobs set is shown and not counted, and each counted check can fail."""

import copy
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, php_fpm  # noqa: E402,I100

# show_articles at 64 connections, one step per number of children: req/s, web CPU % of the core,
# the step's verdict; near the write-up's best rows (63, 99, 120, 125, 130 rps)
SHOW = {2: (55.0, 38.0, "below limits"), 4: (86.0, 60.0, "web"), 8: (105.0, 80.0, "web"),
        16: (110.0, 85.0, "web"), 32: (130.0, 92.0, "web")}
FIGURES = {"show_articles, 4 / 2 children: req/s": ("rps", 4, 140.0),   # 2.55x, above 2.36x
           "show_articles, 8 / 2 children: req/s": ("rps", 8, 170.0),   # 3.09x, above 2.86x
           "show_articles, 16 / 2 children: req/s": ("rps", 16, 60.0),  # 1.09x, below 1.32x
           "show_articles, 4 children: web CPU": ("cpu_web_pct", 4, 30.0),
           "show_articles, 8 children: web CPU": ("cpu_web_pct", 8, 50.0),
           "show_articles, 16 children: web CPU": ("cpu_web_pct", 16, 50.0)}


def rows(levels, rps, **extra):
    return [dict({"level": float(level), "rps": float(rps), "p99_ms": 100.0, "busy_web": 1.0, "busy_db": 0.05,
                  "busy_load": 0.02}, **extra) for level in levels]


def health():
    return {"2 children": rows((2, 4, 8), 21, verdict="web"), "4 children": rows((2, 4, 8), 21, verdict="web"),
            "OPcache": rows((2, 4, 8), 207, verdict="web"),
            "1 server behind HAProxy": rows((2, 4, 8), 205, verdict="web", busy_lb=0.04),
            "2 servers behind HAProxy": rows((2, 4, 8), 380, verdict="web", busy_lb=0.06)}


def show():
    return {str(n): rows((64,), rps, cpu_web_pct=cpu, verdict=v) for n, (rps, cpu, v) in SHOW.items()}


def verdict(h, s):
    return checks.verdict(php_fpm.checks(h) + php_fpm.show_checks(s))


class PhpFpm(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        cs = php_fpm.checks(health()) + php_fpm.show_checks(show())
        word, line = checks.verdict(cs)
        self.assertEqual(word, "reproduced", line)
        self.assertEqual(len([x for x in cs if x.role != "set"]), 10)
        self.assertTrue(all(x.cite.startswith("000 L") for x in cs))

    def test_what_the_knobs_and_the_pinning_set_is_shown_not_counted(self):
        cs = {x.what: x for x in php_fpm.checks(health()) + php_fpm.show_checks(show())}
        for what in ("/health_check, 2 children: req/s", "/health_check, 4 children / 2",
                     "/health_check, OPcache / none", "/health_check, 2 servers / 1 behind the LB",
                     "show_articles, 2 children: req/s", "show_articles, 2 children: web CPU",
                     "show_articles, 32 children: req/s", "show_articles, 32 children: web CPU"):
            self.assertEqual(cs[what].role, "set", what)
        self.assertEqual(cs["/health_check, 2 servers / 1 behind the LB"].measured, "1.85x")
        h = health()
        h["4 children"] = rows((2, 4, 8), 42, verdict="web")  # whatever the set figures measure
        h["2 servers behind HAProxy"] = rows((8,), 205, verdict="web")
        self.assertEqual(verdict(h, show())[0], "reproduced")

    def test_more_children_making_no_difference_is_not_reproduced(self):
        s = show()
        for n in SHOW:
            s[str(n)][0]["rps"] = 55.0
        word, line = verdict(health(), s)
        self.assertEqual(word, "not reproduced")
        self.assertIn("show_articles, more children (2 -> 4)", line)

    def test_a_wrong_tier_is_not_reproduced(self):
        for case, n, tier in (("show", "32", "db"), ("show", "2", "web"), ("health", "2 children", "load")):
            h, s = health(), show()
            (s if case == "show" else h)[n][-1]["verdict"] = tier
            word, line = verdict(h, s)
            self.assertEqual(word, "not reproduced", (n, tier))
            self.assertIn("the tier that limits", line)

    def test_each_counted_figure_can_miss_alone(self):
        for what, (key, n, v) in FIGURES.items():
            s = copy.deepcopy(show())
            s[str(n)][0][key] = v
            word, line = verdict(health(), s)
            self.assertEqual(word, "partly reproduced: 9 of 10", what)
            self.assertIn(what + " (write-up", line)

    def test_a_missing_step_fails_its_checks(self):
        s = show()
        del s["8"][0]["cpu_web_pct"]
        s["16"] = [dict(s["16"][0], rps="")]
        word, line = verdict(health(), s)
        self.assertEqual(word, "partly reproduced: 8 of 10")
        self.assertIn("show_articles, 8 children: web CPU (write-up 86 %, measured n/a)", line)


if __name__ == "__main__":
    unittest.main()
