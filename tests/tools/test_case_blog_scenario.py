"""loadscripts/sutlab_lab/cases/blog_scenario.py's checks, on measured tables shaped as its run() gives
them ({stage: rows as steps.csv gives them}, and the baseline's routes at 32 users): every figure of
the write-up's matching gives "reproduced"; the count's removal making no difference, another tier
limiting, or another route taking the most server time, "not reproduced"; each figure missing alone,
"partly reproduced" naming it. Each test fails if its check is loosened to always-true."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_miss_alone, row  # noqa: E402,I100
from sutlab_lab.cases import blog_scenario, checks  # noqa: E402

# (stage, users): req/s ten times the write-up's (000 L168-L227), its ms, its db CPU as a share
MATCHING = {
    ("baseline", 8): dict(rps=170, mean_ms=98, db=0.47), ("baseline", 32): dict(rps=320, mean_ms=628, db=0.97),
    ("count removed", 8): dict(rps=190, mean_ms=63, db=0.25),
    ("count removed", 32): dict(rps=550, mean_ms=200, db=0.84),
    ("name index", 32): dict(rps=630, mean_ms=144, db=0.66), ("two web", 32): dict(rps=340, mean_ms=507, db=0.97),
    ("db x2", 32): dict(rps=400, mean_ms=400, db=0.97), ("db x4", 64): dict(rps=1200, mean_ms=165, db=0.81),
}
ROUTES = [("/api/articles", 0.82), ("/api/profiles/:username", 0.09), ("/api/articles/:slug", 0.05)]
LATER = {"count removed": ("name index", "two web", "db x4"), "name index": ("two web", "db x4"),
         "two web": ("db x4",)}


def scaled(stage, users, field, factor):
    """A change that moves one ratio alone: the row and every later row of the chain by `factor`
    (the ratios after it stay as they were)."""
    keys = [(stage, users)] + [(s, 64 if s == "db x4" else 32) for s in LATER.get(stage, ())]
    return [(k, field, MATCHING[k][field] * factor) for k in keys]


# each counted figure, and the changes of measured values that take it alone out of its band
MISSES = {
    "baseline 8 -> count removed 8: req/s": [(("baseline", 8), "rps", 80)],            # 2.4x against 1.12x
    "baseline 8 -> count removed 8: mean ms": [(("count removed", 8), "mean_ms", 98)],  # 1.0x against 0.64x
    "baseline 32 -> count removed 32: req/s": [(("baseline", 32), "rps", 150)],        # 3.7x against 1.72x
    "baseline 32 -> count removed 32: mean ms": [(("baseline", 32), "mean_ms", 250)],  # 0.8x against 0.32x
    "count removed 32 -> name index 32: req/s": scaled("name index", 32, "rps", 2),
    "count removed 32 -> name index 32: mean ms": scaled("name index", 32, "mean_ms", 2),
    "name index 32 -> two web 32: req/s": scaled("two web", 32, "rps", 0.5),
    "name index 32 -> two web 32: mean ms": scaled("two web", 32, "mean_ms", 2),
    "two web 32 -> db x4 64: req/s": [(("db x4", 64), "rps", 2000)],                   # 5.9x against 3.53x
    "two web 32 -> db x4 64: mean ms": [(("db x4", 64), "mean_ms", 400)],
    "baseline 8: db CPU of its budget": [(("baseline", 8), "db", 0.90)],
    "baseline 32: db CPU of its budget": [(("baseline", 32), "db", 0.50)],
    "count removed 8: db CPU of its budget": [(("count removed", 8), "db", 0.60)],
    "count removed 32: db CPU of its budget": [(("count removed", 32), "db", 0.40)],
    "name index 32: db CPU of its budget": [(("name index", 32), "db", 0.95)],
    "two web 32: db CPU of its budget": [(("two web", 32), "db", 0.60)],
    "db x4 64: db CPU of its budget": [(("db x4", 64), "db", 0.30)],
}


def runs(figures=None, verdicts=None):
    figures, verdicts = figures or MATCHING, verdicts or {}
    out = {}
    for (stage, users), f in figures.items():
        out.setdefault(stage, []).append(row(users, web=0.5, load=0.1, verdict=verdicts.get((stage, users), "db"),
                                             **f))
    return out


def changed(changes):
    figures = {k: dict(v) for k, v in MATCHING.items()}
    for key, field, value in changes:
        figures[key][field] = value
    return figures


class BlogScenario(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        cs = blog_scenario.checks(runs(), ROUTES)
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])
        self.assertEqual(sorted(c.what for c in cs if c.role == "figure"), sorted(MISSES))
        self.assertEqual(len([c for c in cs if c.role == "direction"]), 4)  # 63 -> 34 is no fix
        self.assertEqual(len([c for c in cs if c.role == "tier"]), 4)

    def test_every_check_cites_the_write_ups_lines(self):
        for c in blog_scenario.checks(runs(), ROUTES):
            self.assertRegex(c.cite, r"^000 L(1[6-8]\d|22\d)", c.what)

    def test_the_count_making_no_difference_is_not_reproduced(self):
        figures = changed([])
        for users in (8, 32):
            figures[("count removed", users)] = dict(figures[("baseline", users)])
        word, line = checks.verdict(blog_scenario.checks(runs(figures), ROUTES))
        self.assertEqual(word, "not reproduced")
        self.assertIn("baseline 8 -> count removed 8: req/s up", line)
        self.assertIn("baseline 32 -> count removed 32: req/s up", line)

    def test_the_index_or_the_cpu_making_things_worse_is_not_reproduced(self):
        for changes, what in ((scaled("name index", 32, "rps", 0.8), "count removed 32 -> name index 32: req/s up"),
                              ([(("db x4", 64), "rps", 300)], "two web 32 -> db x4 64: req/s up")):
            word, line = checks.verdict(blog_scenario.checks(runs(changed(changes)), ROUTES))
            self.assertEqual(word, "not reproduced", what)
            self.assertIn(what, line)

    def test_another_tier_limiting_is_not_reproduced(self):
        for key in (("baseline", 32), ("two web", 32), ("db x2", 32)):
            for tier in ("web", "load", "below limits", "disturbed"):
                word, line = checks.verdict(blog_scenario.checks(runs(verdicts={key: tier}), ROUTES))
                self.assertEqual(word, "not reproduced", (key, tier))
                self.assertIn("%s %d: the tier that limits" % key, line)

    def test_another_route_on_top_is_not_reproduced(self):
        for routes in (ROUTES[1:], [], [ROUTES[1], ROUTES[0]]):
            word, line = checks.verdict(blog_scenario.checks(runs(), routes))
            self.assertEqual(word, "not reproduced", routes)
            self.assertIn("baseline 32: the route with the most server time", line)

    def test_each_figure_missing_alone_is_partly_reproduced_naming_it(self):
        assert_each_miss_alone(self, lambda r: blog_scenario.checks(r, ROUTES), runs(),
                               [(what, runs(changed(change))) for what, change in MISSES.items()])

    def test_a_stage_not_run_fails(self):
        r = runs()
        del r["db x4"]
        failed = [c.what for c in blog_scenario.checks(r, ROUTES) if not c.ok]
        self.assertEqual(failed, ["two web 32 -> db x4 64: req/s", "two web 32 -> db x4 64: mean ms",
                                  "two web 32 -> db x4 64: req/s up", "db x4 64: db CPU of its budget"])

    def test_the_bands_are_the_write_ups_figures(self):
        cs = {c.what: c for c in blog_scenario.checks(runs(), ROUTES)}
        self.assertEqual(cs["baseline 32 -> count removed 32: req/s"].band, "1.15x-2.58x")  # 55 / 32
        self.assertEqual(cs["count removed 32 -> name index 32: req/s"].band, "0.76x-1.72x")  # 63 / 55
        self.assertEqual(cs["name index 32 -> two web 32: req/s"].band, "0.36x-0.81x")  # 34 / 63
        self.assertEqual(cs["two web 32 -> db x4 64: req/s"].band, "2.35x-5.29x")  # 120 / 34
        self.assertEqual(cs["two web 32 -> db x4 64: mean ms"].band, "0.22x-0.49x")  # 165 / 507
        self.assertEqual(cs["two web 32: db CPU of its budget"].band, "85-100 %")
        self.assertEqual(cs["count removed 8: db CPU of its budget"].band, "10-40 %")


if __name__ == "__main__":
    unittest.main()
