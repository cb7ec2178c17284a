"""loadscripts/sutlab_lab/cases/missing_index.py: both 32-user rows (000 L181 without the index, L186
with it) predicted by the scenario's model (fitted on the 8-user rows, blog000.py), on alternated
rounds shaped as its run() gives them ({"with": rows, "without": rows}, a row a round): the
write-up's figures in the model give "reproduced"; each counted check fails alone in a run of its
own; the worst round decides the direction, the median the figures."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, model, row  # noqa: E402,I100
from sutlab_lab.cases import checks, missing_index as mi  # noqa: E402

S, CAP = 0.35, {"web": 0.7, "db": 0.7}
MATCHING = {"without": dict(rps=55 * S, mean_ms=200 / S, db=0.84, web=0.775, load=0.1),
            "with": dict(rps=63 * S, mean_ms=144 / S, db=0.66, web=0.65, load=0.1)}
ALONE = {"without the index: mean latency": ("without", "mean_ms", 2000),
         "without the index: db CPU": ("without", "db", 0.5),
         "without the index: web CPU": ("without", "web", 0.3),
         "with the index: mean latency": ("with", "mean_ms", 1000),
         "with the index: db CPU": ("with", "db", 0.95),
         "with the index: web CPU": ("with", "web", 0.2),
         "req/s, with / without the index": ("with", "rps", 63 * S * 2),           # 2.3x against 0.76-1.72x
         "every run: not the load tool": ("without", "verdict", "load")}


def runs(change=None, rounds=3):
    out = {}
    for side, f in MATCHING.items():
        figures = dict(f, verdict="db")
        if change and change[0] == side:
            figures[change[1]] = change[2]
        out[side] = [row(32, capacity=CAP, **figures) for _ in range(rounds)]
    return out


def made(r):
    return mi.checks(r, model(mi, S))


def matching_checks():
    return made(runs())


def alone_checks():
    out = {what: made(runs(change)) for what, change in ALONE.items()}
    # the direction alone: one round where the index slows it, inside the ratio's band at the median
    r = runs()
    r["with"][1] = row(32, capacity=CAP, **dict(MATCHING["with"], rps=50 * S, verdict="db"))
    out["req/s up with the index, every round (the worst shown)"] = made(r)
    return out


class MissingIndex(unittest.TestCase):
    def test_the_write_ups_figures_in_the_model_are_reproduced(self):
        self.assertEqual(checks.verdict(matching_checks())[0], "reproduced")

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())

    def test_the_median_over_the_rounds(self):
        r = runs()
        r["with"][0] = row(32, capacity=CAP, **dict(MATCHING["with"], mean_ms=5000, verdict="db"))  # one slow round
        self.assertEqual([c.what for c in made(r) if c.ok is False], [])

    def test_the_bands(self):
        cs = {c.what: c for c in matching_checks()}
        self.assertEqual(cs["req/s, with / without the index"].band, "0.76x-1.72x")  # 63 / 55 = 1.15x
        self.assertEqual(cs["with the index: mean latency"].band, "274-617 ms")       # 144 ms / 0.35, x/÷ 1.5
        self.assertEqual(cs["with the index: db CPU"].band, "51-81 %")
        self.assertEqual(cs["with the index: mean latency"].cite, "000 L186")


if __name__ == "__main__":
    unittest.main()
