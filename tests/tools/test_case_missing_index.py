"""loadscripts/sutlab_lab/cases/missing_index.py's checks, on measured tables shaped as its run() gives
them ({"with": rows, "without": rows}, one row a round, as steps.csv gives it): the write-up's
figures matching in every round give "reproduced"; the index making no difference, or hurting in
one round, "not reproduced"; each figure missing alone, "partly reproduced" naming it; one round
that matches does not carry a figure (no best of N). Each test fails if its check is loosened to
always-true."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_miss_alone, row  # noqa: E402,I100
from sutlab_lab.cases import checks, missing_index  # noqa: E402

# the write-up's figures (000 L181 without the index, L186 with it) as three rounds could measure
# them: req/s scaled to the lab's, ratios and CPU shares inside their bands, a little noise
MATCHING = {
    "without": [dict(rps=550, mean_ms=200, db=0.84, web=0.77, load=0.14),
                dict(rps=560, mean_ms=196, db=0.83, web=0.78, load=0.14),
                dict(rps=545, mean_ms=204, db=0.85, web=0.76, load=0.13)],
    "with": [dict(rps=630, mean_ms=144, db=0.66, web=0.65, load=0.16),
             dict(rps=640, mean_ms=140, db=0.65, web=0.66, load=0.16),
             dict(rps=625, mean_ms=146, db=0.67, web=0.64, load=0.17)],
}

# each counted figure, and the value that, set in every round, takes it alone out of its band
MISSES = {
    "req/s, with / without the index": ("with", "rps", 1100),        # 2.0x against 0.76-1.72x
    "mean ms, with / without the index": ("with", "mean_ms", 240),   # 1.2x against 0.48-1.08x
    "without the index: db CPU": ("without", "db", 0.50),
    "without the index: web CPU": ("without", "web", 0.30),
    "without the index: load CPU": ("without", "load", 0.45),
    "with the index: db CPU": ("with", "db", 0.99),
    "with the index: web CPU": ("with", "web", 0.99),
    "with the index: load CPU": ("with", "load", 0.45),
}


def runs(figures=None, verdict="db"):
    figures = figures or MATCHING
    return {side: [row(missing_index.USERS, verdict=verdict, **f) for f in figures[side]]
            for side in ("with", "without")}


def changed(side, field, value, rounds=(0, 1, 2)):
    figures = {s: [dict(f) for f in fs] for s, fs in MATCHING.items()}
    for i in rounds:
        figures[side][i][field] = value
    return figures


class MissingIndex(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        cs = missing_index.checks(runs())
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])
        self.assertEqual(sorted(c.what for c in cs if c.role == "figure"), sorted(MISSES))
        self.assertEqual([c.role for c in cs if c.role not in ("figure",)], ["direction"])
        for c in cs:
            self.assertRegex(c.cite, r"^000 L18[16]", c.what)

    def test_the_index_making_no_difference_is_not_reproduced(self):
        figures = {"with": [dict(f) for f in MATCHING["without"]], "without": MATCHING["without"]}
        word, line = checks.verdict(missing_index.checks(runs(figures)))
        self.assertEqual(word, "not reproduced")
        self.assertIn("req/s up with the index, every round", line)

    def test_the_index_hurting_in_one_round_is_not_reproduced(self):
        # the median ratio still holds (1.15x), but one round went the other way: noise, not an effect
        word, line = checks.verdict(missing_index.checks(runs(changed("with", "rps", 540, rounds=(2,)))))
        self.assertEqual(word, "not reproduced")
        self.assertIn("measured 545 -> 540", line)

    def test_the_tier_is_not_checked_the_write_up_names_none(self):
        # 000 L181-L188 name no limiting tier: whatever limits, the verdict stands on the figures
        for tier in ("web", "db", "load"):
            cs = missing_index.checks(runs(verdict=tier))
            self.assertFalse([c for c in cs if c.role == "tier"])
            self.assertEqual(checks.verdict(cs)[0], "reproduced", tier)

    def test_each_figure_missing_alone_is_partly_reproduced_naming_it(self):
        assert_each_miss_alone(self, missing_index.checks, runs(),
                               [(what, runs(changed(*change))) for what, change in MISSES.items()])

    def test_one_matching_round_does_not_carry_a_figure(self):
        # rounds of 2.0x, 2.0x and 1.15x: the median misses the write-up's 1.15x, though one round
        # has it (the former check kept the best of its drops)
        figures = changed("with", "rps", 1100, rounds=(0,))
        figures["with"][1]["rps"] = 1120
        cs = {c.what: c for c in missing_index.checks(runs(figures))}
        self.assertFalse(cs["req/s, with / without the index"].ok)
        self.assertEqual(cs["req/s, with / without the index"].measured, "2.00x")
        # and one round far off does not sink a figure the other two hold
        figures = changed("with", "db", 0.99, rounds=(1,))
        self.assertTrue({c.what: c for c in missing_index.checks(runs(figures))}["with the index: db CPU"].ok)

    def test_a_round_not_measured_fails_its_figures(self):
        r = runs()
        del r["with"][1]["mean_ms"]
        self.assertEqual([c.what for c in missing_index.checks(r) if not c.ok], ["mean ms, with / without the index"])

    def test_the_bands_are_the_write_ups_figures(self):
        cs = {c.what: c for c in missing_index.checks(runs())}
        self.assertEqual(cs["req/s, with / without the index"].band, "0.76x-1.72x")    # 63 / 55 = 1.15x
        self.assertEqual(cs["mean ms, with / without the index"].band, "0.48x-1.08x")  # 144 / 200 = 0.72x
        self.assertEqual(cs["without the index: db CPU"].band, "69-99 %")
        self.assertEqual(cs["with the index: db CPU"].band, "51-81 %")
        self.assertEqual(cs["without the index: web CPU"].band, "50-100 %")
        self.assertEqual(cs["with the index: web CPU"].band, "35-95 %")

    def test_the_rounds_alternate(self):
        self.assertEqual(missing_index.order(3), [(0, "with"), (0, "without"), (1, "without"), (1, "with"),
                                                  (2, "with"), (2, "without")])


if __name__ == "__main__":
    unittest.main()
