"""loadscripts/sutlab_lab/cases/count_pagination.py's checks, on measured tables shaped as its run() gives
them ({"on": rows, "off": rows}, rows as steps.csv gives them): every figure of the write-up's at
both levels matching gives "reproduced"; the count making no difference, or another tier limiting,
"not reproduced"; each figure missing alone, "partly reproduced" naming it. Each test fails if its
check is loosened to always-true."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_miss_alone, row  # noqa: E402,I100
from sutlab_lab.cases import checks, count_pagination  # noqa: E402

# (side, level): the write-up's figures (000 L168-L169, L180-L181) as a run could measure them:
# req/s scaled to the lab's, the ratios, mean ms and CPU shares inside their bands
MATCHING = {
    ("on", 8): dict(rps=1700, mean_ms=98, db=0.47, web=0.20, load=0.06),
    ("off", 8): dict(rps=1900, mean_ms=63, db=0.25, web=0.20, load=0.06),
    ("on", 32): dict(rps=3200, mean_ms=628, db=0.99, web=0.40, load=0.08),
    ("off", 32): dict(rps=5500, mean_ms=200, db=0.84, web=0.77, load=0.14),
}

# each counted figure, and a change of one measured value that takes it alone out of its band
MISSES = {
    "8: req/s, count off / on": (("off", 8), "rps", 3400),          # 2.0x against 0.75-1.68x
    "8: mean ms, count off / on": (("off", 8), "mean_ms", 98),      # 1.00x against 0.43-0.96x
    "8, count on: db CPU": (("on", 8), "db", 0.80),
    "8, count on: web CPU": (("on", 8), "web", 0.60),
    "8, count on: load CPU": (("on", 8), "load", 0.40),
    "8, count off: db CPU": (("off", 8), "db", 0.60),
    "8, count off: web CPU": (("off", 8), "web", 0.60),
    "8, count off: load CPU": (("off", 8), "load", 0.40),
    "32: req/s, count off / on": (("off", 32), "rps", 9600),        # 3.0x against 1.15-2.58x
    "32: mean ms, count off / on": (("off", 32), "mean_ms", 628),
    "32, count on: db CPU": (("on", 32), "db", 0.50),
    "32, count on: web CPU": (("on", 32), "web", 0.90),
    "32, count on: load CPU": (("on", 32), "load", 0.50),
    "32, count off: db CPU": (("off", 32), "db", 0.40),
    "32, count off: web CPU": (("off", 32), "web", 0.20),
    "32, count off: load CPU": (("off", 32), "load", 0.50),
}


def runs(figures=None, verdict_on_32="db"):
    figures = figures or MATCHING
    return {side: [row(level, verdict=verdict_on_32 if (side, level) == ("on", 32) else "db",
                       **figures[(side, level)]) for level in (8, 32)] for side in ("on", "off")}


def changed(key, field, value):
    figures = {k: dict(v) for k, v in MATCHING.items()}
    figures[key][field] = value
    return figures


class CountPagination(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        cs = count_pagination.checks(runs())
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])
        self.assertEqual(len([c for c in cs if c.role == "figure"]), len(MISSES))
        self.assertEqual(sorted(c.what for c in cs if c.role == "figure"), sorted(MISSES))
        self.assertFalse([c for c in cs if c.role == "set"])  # no figure here is a knob's

    def test_every_check_cites_the_write_ups_lines(self):
        for c in count_pagination.checks(runs()):
            self.assertRegex(c.cite, r"^000 L1[678]\d", c.what)

    def test_the_count_making_no_difference_is_not_reproduced(self):
        figures = {k: dict(v) for k, v in MATCHING.items()}
        for level in (8, 32):
            figures[("off", level)] = dict(figures[("on", level)])
        word, line = checks.verdict(count_pagination.checks(runs(figures)))
        self.assertEqual(word, "not reproduced")
        self.assertIn("8: req/s up without the count", line)
        self.assertIn("32: req/s up without the count", line)

    def test_the_count_slowing_one_level_is_not_reproduced(self):
        word, line = checks.verdict(count_pagination.checks(runs(changed(("off", 8), "rps", 1600))))
        self.assertEqual(word, "not reproduced")
        self.assertIn("8: req/s up without the count (write-up 17 -> 19, measured 1700 -> 1600)", line)

    def test_another_tier_limiting_is_not_reproduced(self):
        for tier in ("web", "load", "below limits", "disturbed"):
            word, line = checks.verdict(count_pagination.checks(runs(verdict_on_32=tier)))
            self.assertEqual(word, "not reproduced", tier)
            self.assertIn("32, count on: the tier that limits", line)

    def test_each_figure_missing_alone_is_partly_reproduced_naming_it(self):
        assert_each_miss_alone(self, count_pagination.checks, runs(),
                               [(what, runs(changed(*change))) for what, change in MISSES.items()])

    def test_a_figure_not_measured_fails(self):
        r = runs()
        del r["on"][1]["cpu_db_pct"]
        failed = [c.what for c in count_pagination.checks(r) if not c.ok]
        self.assertEqual(failed, ["32, count on: db CPU"])
        r = runs()
        r["off"] = r["off"][:1]  # level 32 not run without the count
        self.assertEqual(checks.verdict(count_pagination.checks(r))[0], "not reproduced")

    def test_the_bands_are_the_write_ups_figures(self):
        cs = {c.what: c for c in count_pagination.checks(runs())}
        self.assertEqual(cs["8: req/s, count off / on"].band, "0.75x-1.68x")   # 19 / 17 = 1.12x
        self.assertEqual(cs["32: req/s, count off / on"].band, "1.15x-2.58x")  # 55 / 32 = 1.72x
        self.assertEqual(cs["32: mean ms, count off / on"].band, "0.21x-0.48x")  # 200 / 628
        self.assertEqual(cs["32, count on: db CPU"].band, "84-100 %")
        self.assertEqual(cs["8, count off: db CPU"].band, "10-40 %")
        self.assertEqual(cs["32, count off: web CPU"].band, "50-100 %")      # 65-90 % +/- 15


if __name__ == "__main__":
    unittest.main()
