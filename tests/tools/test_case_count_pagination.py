"""loadscripts/sutlab_lab/cases/count_pagination.py: the scale model's fits on the 8-user anchors
(000 L168, L180) and its checks on the 32-user rows, on measured tables shaped as its run() gives
them ({"on": rows, "off": rows}, rows as steps.csv gives them): the write-up's figures in the model
give "reproduced"; each counted check fails alone in a run of its own; a row changed moves the
fitted value as its arithmetic says; no counted check reads a row a fit read."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, failing, model, row  # noqa: E402,I100
from sutlab_lab.cases import calibrate, checks, count_pagination as cp  # noqa: E402

S = 0.35
CAP = {"web": 0.7, "db": 0.7}  # the budgets at s = 0.35: 2 vCPU x 0.35
# (count, users): the write-up's rows in the model (rates x s, times / s), shares as written
MATCHING = {("on", 8): dict(rps=17 * S, mean_ms=98 / S, db=0.47, web=0.19, load=0.05),
            ("off", 8): dict(rps=19 * S, mean_ms=63 / S, db=0.25, web=0.19, load=0.05),
            ("on", 32): dict(rps=32 * S, mean_ms=628 / S, db=0.99, web=0.40, load=0.08),
            ("off", 32): dict(rps=55 * S, mean_ms=200 / S, db=0.84, web=0.77, load=0.14)}
# each counted check, and the change of one measured value that takes it alone out of its band
ALONE = {"32 users, count on: mean latency": (("on", 32), "mean_ms", 5000),
         "32 users, count on: db CPU": (("on", 32), "db", 0.5),
         "32 users, count on: web CPU": (("on", 32), "web", 0.9),
         "32 users, count off: mean latency": (("off", 32), "mean_ms", 2000),
         "32 users, count off: db CPU": (("off", 32), "db", 0.5),
         "32 users, count off: web CPU": (("off", 32), "web", 0.3),
         "32 users: req/s, count off / on": (("off", 32), "rps", 55 * S * 2),   # 3.4x against 1.15-2.58x
         "32 users, count on: the tier that limits": (("on", 32), "verdict", "web"),
         "every step: not the load tool": (("off", 8), "verdict", "load")}


def runs(changes=()):
    figures = {k: dict(v, verdict="db") for k, v in MATCHING.items()}
    for key, field, value in changes:
        figures[key][field] = value
    return {side: [row(users, capacity=CAP, **figures[(side, users)]) for users in (8, 32)] for side in ("on", "off")}


def made(changes=()):
    return cp.checks(runs(changes), model(cp, S))


def matching_checks():
    return made()


def alone_checks():
    return {what: made([change]) for what, change in ALONE.items()}


class CountPagination(unittest.TestCase):
    def test_the_write_ups_figures_in_the_model_are_reproduced(self):
        cs = made()
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())

    def test_the_parts(self):
        parts = {c.what: c.part for c in made() if c.role != "set"}
        self.assertEqual(sorted(w for w, p in parts.items() if p == "bottleneck"),
                         ["32 users, count on: the tier that limits", "32 users: req/s, count off / on",
                          "every step: not the load tool"])

    def test_the_count_making_no_difference_is_not_reproduced(self):
        word, line = checks.verdict(made([(("off", 32), "rps", 32 * S)]))
        self.assertEqual(word, "not reproduced")
        self.assertIn("32 users: req/s, count off / on [bottleneck]", line)

    def test_the_bands_are_the_write_ups_figures_in_the_model(self):
        cs = {c.what: c for c in made()}
        self.assertEqual(cs["32 users: req/s, count off / on"].band, "1.15x-2.58x")  # 55 / 32 = 1.72x
        self.assertEqual(cs["32 users, count on: mean latency"].band, "1196-2691 ms")  # 628 ms / 0.35, x/÷ 1.5
        self.assertEqual(cs["32 users, count on: db CPU"].band, "84-100 %")
        self.assertEqual(cs["32 users, count off: web CPU"].band, "50-100 %")       # 65-90 % +/- 15

    def test_a_figure_not_measured_fails(self):
        r = runs()
        del r["on"][1]["cpu_db_pct"]
        self.assertEqual(failing(cp.checks(r, model(cp, S))), ["32 users, count on: db CPU"])


class Fits(unittest.TestCase):
    """A fabricated write-up row moves each fitted value by what its arithmetic says."""

    def setUp(self):
        self.m = model(cp, S, own=calibrate.Own(400.0, 300.0, 2.0, {"/api/articles": 0.3}, 100.0),
                       work_us=2.0, count_us_per_row=0.2)

    def fit(self, knob):
        return next(f for f in cp.FITS if f.knob == knob)

    def test_think_time(self):
        self.assertAlmostEqual(self.fit("think time").value(self.m), 8 / 19 - 0.063)
        self.assertAlmostEqual(self.fit("think time").with_figures(rps=38).value(self.m), 8 / 38 - 0.063)

    def test_app_cpu(self):
        php = 19 / 100 * 2 / 19 * 1e6  # the middle of 8-30 % of 2 vCPU over 19 req/s
        self.assertEqual(self.fit("--app-cpu-us").value(self.m), round(php - 400))
        self.assertEqual(self.fit("--app-cpu-us").with_figures(rps=38).value(self.m), round(php / 2 - 400))

    def test_db_work(self):
        theirs = 0.25 * 2 / 19 * 1e6
        self.assertEqual(self.fit("--db-work").value(self.m), round((theirs - 300) / 2.0 / 2.0))
        self.assertEqual(self.fit("--db-work").with_figures(db=50).value(self.m), round((2 * theirs - 300) / 4.0))

    def test_db_work_with_a_database_not_the_labs(self):
        # SUTLAB_LAB_DB_URL: the sampler cannot read its CPU, so nothing of PostgreSQL's own is taken off
        m = model(cp, S, own=calibrate.Own(400.0, None, 2.0, {"/api/articles": 0.3}, 100.0), work_us=2.0,
                  count_us_per_row=0.2)
        fit = self.fit("--db-work")
        self.assertEqual(fit.value(m), round(0.25 * 2 / 19 * 1e6 / 2.0 / 2.0))
        self.assertIn("not read", fit.check(m).band)

    def test_size(self):
        # L168 adds 0.47 x 2 / 17 - 0.25 x 2 / 19 = 29.0 ms a request; a third ... 0.3 of them an index page:
        # 96.6 ms a count; at 0.2 us a row, 483,000 rows: large (x2.1) is nearer than medium (x4.8)
        self.assertEqual(self.fit("size").value(self.m), "large")
        self.assertEqual(self.fit("size").with_figures(db=27).value(self.m), "medium")   # 8 ms a count: 40,000 rows
        self.assertEqual(self.fit("size").with_figures(db=22.9).value(self.m), "small")   # 2 ms: 10,000 rows

    def test_the_costs_come_from_the_calibration_at_the_size_and_the_size_from_the_first(self):
        # prepare(): a first calibration at small fits the size; a second, at that size, becomes
        # measured["own"] and the first measured["own_small"]. The index's share differs between
        # them here so that a size read from the wrong one would move (0.9 against 0.3: 161,000 rows,
        # medium, against 483,000, large).
        at_size = calibrate.Own(900.0, 20000.0, 2.0, {"/api/articles": 0.9}, 100.0)
        self.m.measured.update(own_small=self.m.measured["own"], own=at_size)
        self.assertEqual(self.fit("size").value(self.m), "large")
        theirs = 0.25 * 2 / 19 * 1e6
        self.assertEqual(self.fit("--db-work").value(self.m), round((theirs - 20000) / 2.0 / 2.0))
        self.assertEqual(self.fit("--app-cpu-us").value(self.m), round(19 / 100 * 2 / 19 * 1e6 - 900))
        self.assertIn("less PostgreSQL's own 20000 us", self.fit("--db-work").check(self.m).band)


class AnchorUnit(unittest.TestCase):
    """calibrate.on_anchor: the --db-work unit read again on a fabricated run of the anchor L180,
    under its budget; the knob moves by what the reading says, and a run at the row's own share
    leaves it where it was."""

    THEIRS = 0.25 * 2 / 19 * 1e6  # L180's database CPU a request, µs

    def setUp(self):
        self.m = model(cp, S, own=calibrate.Own(400.0, 300.0, 2.0, {"/api/articles": 0.3}, 100.0),
                       work_us=2.0, count_us_per_row=0.2)
        self.fit = next(f for f in cp.FITS if f.knob == "--db-work")

    def test_the_unit_from_one_reading(self):
        # 6504 units a statement, 2 statements: a request of 52,632 us (35 % of a core at 6.65 req/s)
        # carried 52,332 us beyond PostgreSQL's own 300: 4.02 us a unit, twice the idle reading
        unit = calibrate.anchor_unit(6504, 2.0, 300.0, 35.0, 6.65)
        self.assertAlmostEqual(unit, (1e4 * 35.0 / 6.65 - 300.0) / (6504 * 2.0))
        self.assertIsNone(calibrate.anchor_unit(0, 2.0, 300.0, 35.0, 6.65))     # no work carried
        self.assertIsNone(calibrate.anchor_unit(6504, 2.0, None, 35.0, 6.65))   # not the lab's database
        self.assertIsNone(calibrate.anchor_unit(6504, 2.0, 300.0, None, 6.65))  # its CPU not read
        self.assertIsNone(calibrate.anchor_unit(6504, 2.0, 300.0, 0.1, 6.65))   # nothing beyond its own

    def run_rounds(self, shares):
        """on_anchor over fabricated anchor runs whose database took shares[i] of a core (%), at
        L180's rate in the model; returns the restarts and the knob each round ran with."""
        ran, restarts, notes = [], [], []
        model = self.m

        class Ctx:
            def steps(self, label, args):
                ran.append((label, model.knob("--db-work")))
                return [{"rps": 19 * S, "cpu_db_pct": shares[len(ran) - 1]}]

            def note(self, line):
                notes.append(line)

        calibrate.on_anchor(Ctx(), self.m, "anchor-L180", lambda: restarts.append(1), ["--levels", "8"])
        return ran, restarts, notes

    def test_a_unit_twice_as_dear_halves_the_knob(self):
        before = self.fit.value(self.m)
        self.assertEqual(before, round((self.THEIRS - 300) / 2.0 / 2.0))
        per_request = 300 + 2 * (self.THEIRS - 300)  # every unit cost 4 us, not 2
        ran, restarts, notes = self.run_rounds([per_request * 19 * S / 1e4, self.THEIRS * 19 * S / 1e4])
        self.assertEqual([label for label, _ in ran], ["anchor-L180-1", "anchor-L180-2"])
        self.assertEqual(len(restarts), 2)
        self.assertEqual(ran[0][1], before)
        self.assertAlmostEqual(ran[1][1], before / 2, delta=1)
        # the second run held the row's own share: the unit it reads leaves the knob where it was
        self.assertAlmostEqual(self.fit.value(self.m), before / 2, delta=1)
        self.assertIn("read on the anchor under its budget (anchor-L180, round 2", self.fit.check(self.m).band)
        self.assertEqual(len(notes), 2)

    def test_a_run_that_reads_nothing_keeps_the_unit(self):
        ran, _, notes = self.run_rounds([None, None])
        self.assertEqual(len(ran), 1)
        self.assertEqual(self.m.measured["work_us"], 2.0)
        self.assertIn("unit not read", notes[0])
        self.assertIn("the fastest of five on the idle database", self.fit.check(self.m).band)

    def test_a_database_not_the_labs_runs_no_anchor(self):
        self.m.measured["own"] = calibrate.Own(400.0, None, 2.0, {"/api/articles": 0.3}, 100.0)
        ran, restarts, notes = self.run_rounds([25.0, 25.0])
        self.assertEqual((ran, restarts), ([], []))
        self.assertIn("not read here", notes[0])


if __name__ == "__main__":
    unittest.main()
