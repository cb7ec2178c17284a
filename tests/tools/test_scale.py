"""sutlab_lab/cases/scale.py: a scale model's budgets (the stated vCPUs x s, a stage's machines, none
at full speed), its clock (rates x s, times / s, think time / s), a fit on one row only, and every
case's model printed (its topology, scale and fits) as case prints it."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import model  # noqa: E402,I100
from sutlab_lab.cases import CASES, calibrate, checks, scale  # noqa: E402

TOPOLOGY = scale.Topology([scale.Machine("web", "a web server", 2, "000 L22"),
                           scale.Machine("db", "a database", 4, "000 L229"),
                           scale.Machine("redis", "a cache, not stated", None, "001 L21"),
                           scale.Machine("load", "the load generator", None, "000 L9")], "a closed loop")


class Model(unittest.TestCase):
    def test_budgets_are_the_stated_vcpus_times_s(self):
        m = scale.Model(TOPOLOGY, 0.25)
        self.assertEqual(m.budgets(), {"web": 0.5, "db": 1.0})
        m.stage(web=4, db=0)
        self.assertEqual(m.budgets(), {"web": 1.0})
        m.stage()
        self.assertEqual(m.budgets(), {"web": 0.5, "db": 1.0})

    def test_a_load_generator_with_its_vcpus_stated_is_budgeted(self):
        t = scale.Topology(TOPOLOGY.machines[:2] + [scale.Machine("load", "nGrinder", 4, "001 L65")], "")
        self.assertEqual(scale.Model(t, 0.1).budgets(), {"web": 0.2, "db": 0.4, "load": 0.4})

    def test_the_clock(self):
        m = scale.Model(TOPOLOGY, 0.25)
        self.assertEqual((m.rate(100), m.time(100), m.think(0.5)), (25, 400, 2.0))

    def test_full_speed_is_no_model(self):
        m = scale.Model(TOPOLOGY, 0.25, full=True)
        self.assertEqual(m.budgets(), {})
        self.assertEqual((m.rate(100), m.time(100), m.think(0.5)), (100, 100, 0.5))
        self.assertEqual(m.knob("--app-cpu-us", 7), 7)

    def test_a_scale_is_a_share_of_a_core(self):
        for s in (0, 1.5, -0.1):
            with self.assertRaises(ValueError):
                scale.Model(TOPOLOGY, s)

    def test_a_fit_reads_one_row(self):
        with self.assertRaises(ValueError):
            scale.Fit("x", "000 L168, L180", {}, lambda f, m: (0, ""))
        fit = scale.Fit("x", "000 L168", {"rps": 17}, lambda f, m: (f["rps"] * 2, "rps x 2"))
        self.assertEqual((fit.value(None), fit.with_figures(rps=20).value(None)), (34, 40))
        self.assertEqual(checks.lines(fit.cite), {("000", "L168")})


class EveryCase(unittest.TestCase):
    def test_every_case_prints_its_model(self):
        for name, case in sorted(CASES.items()):
            if not hasattr(case, "TOPOLOGY"):
                continue
            m = model(case, getattr(case, "S", 0.35), own=calibrate.Own(100.0, 100.0, 2.0, {"/api/articles": 0.3},
                                                                          100.0, 50.0),
                      work_us=2.0, count_us_per_row=0.2)
            text = m.section(10)
            self.assertIn("Scale model: s = ", text, name)
            for machine in case.TOPOLOGY.machines:
                self.assertIn(machine.cite, text, name)
            for c in m.set_checks():
                self.assertIsNone(c.ok, (name, c.what))
                self.assertNotEqual(c.measured, "", (name, c.what))


if __name__ == "__main__":
    unittest.main()
