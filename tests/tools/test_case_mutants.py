"""Each case's checks both ways.

- Its tests can fail: for every case module, every counted check its tests make is loosened, alone,
  to always-true (checks.Check built with ok=True for that figure), and the case's own test module
  (test_case_NAME.py) is run again; some test of it must then fail. A check no test notices when it
  stops checking is a check the tests do not hold. A case that counts nothing has nothing to loosen:
  its matching run's verdict must then be `illustrated`.
- No counted check holds for every run: each case's test module gives, for every counted check of
  a run where all hold (matching_checks()), a run in which that check alone fails (alone_checks()).
  A check that cannot fail alone is one that counts a measurement another check counts already,
  or one the lab's own settings decide.
- No counted check reads a row of the write-up a scale model's fit read (FITS: scale.Fit): the
  rows a fit used are the model's, and only the rest are predictions."""

import importlib
import io
import types
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import CASES, checks, scale  # noqa: E402,I100


class Loosened:
    """checks.Check with one figure (its `what`) forced to hold; records every counted `what` made."""

    def __init__(self):
        self.target, self.seen = None, set()
        self.original = checks.Check.__init__

    def __enter__(self):
        original, mutant = self.original, self

        def init(check, what, writeup, cite, measured, band, ok, role="figure", part=None):
            if role != "set":
                mutant.seen.add(what)
                if what == mutant.target:
                    ok = True
            original(check, what, writeup, cite, measured, band, ok, role, part)
        checks.Check.__init__ = init
        return self

    def __exit__(self, *exc):
        checks.Check.__init__ = self.original


def passes(module):
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    return unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite).wasSuccessful()


def unheld(module):
    """(whether `module` passes as it stands, the counted checks its tests make, those of them that
    no test notices when loosened to always-true)."""
    with Loosened() as m:
        ok = passes(module)
        whats, loose = sorted(m.seen), []
        for what in whats:
            m.target = what
            if passes(module):
                loose.append(what)
    return ok, whats, loose


class Mutants(unittest.TestCase):
    def test_every_counted_check_of_every_case_is_held_by_its_tests(self):
        for name in sorted(CASES):
            module = importlib.import_module("test_case_" + name.replace("-", "_"))
            ok, whats, loose = unheld(module)
            self.assertTrue(ok, "%s: its tests fail as they stand" % name)
            if not whats:  # a case that counts nothing: its matching run says "illustrated", nothing more
                self.assertEqual(checks.verdict(module.matching_checks())[0], "illustrated",
                                 "%s: its tests make no counted check" % name)
            self.assertEqual(loose, [], "%s: no test fails with these checks always true" % name)

    def test_a_test_that_asserts_nothing_is_caught(self):
        # the harness can fail: a test module that runs keepalive's checks and asserts nothing
        # holds none of them
        from sutlab_lab.cases import keepalive
        module = types.ModuleType("test_case_nothing")

        class Nothing(unittest.TestCase):
            def test_runs(self):
                rows = [{"level": 16.0, "rps": 1000.0, "verdict": "web"}]
                keepalive.checks({"keep-alive": rows, "close": rows})
        module.Nothing = Nothing
        ok, whats, loose = unheld(module)
        self.assertTrue(ok)
        self.assertEqual(len(whats), 2)  # the ratio and the load tool not limiting
        self.assertEqual(loose, whats)

    def test_the_loosening_is_seen(self):
        # with keepalive's ratio forced, a table where keep-alive makes no difference reads
        # "reproduced", and the check is itself again afterwards
        from sutlab_lab.cases import keepalive
        rows = [{"level": 16.0, "rps": 30000.0, "verdict": "web"}]
        runs = {"keep-alive": rows, "close": rows}
        self.assertEqual(checks.verdict(keepalive.checks(runs))[0], "not reproduced")
        with Loosened() as m:
            m.target = "close / keep-alive, req/s"
            self.assertEqual(checks.verdict(keepalive.checks(runs))[0], "reproduced")
        self.assertEqual(checks.verdict(keepalive.checks(runs))[0], "not reproduced")

    def test_a_case_that_counts_nothing_is_illustrated(self):
        # gzip: its one figure, the direction, is the lab's cap's; nothing to hold, nothing loosened
        import test_case_gzip
        ok, whats, loose = unheld(test_case_gzip)
        self.assertEqual((ok, whats, loose), (True, [], []))
        self.assertEqual(checks.verdict(test_case_gzip.matching_checks())[0], "illustrated")


def test_module(name):
    return importlib.import_module("test_case_" + name.replace("-", "_"))


def counted(cs):
    return [c for c in cs if c.role != "set"]


def fitted_rows_read(case, cs):
    """The counted checks of cs that read a row one of case.FITS read: [(what, rows)]."""
    rows = {ln for f in getattr(case, "FITS", ()) for ln in checks.lines(f.cite)}
    return [(c.what, sorted(checks.lines(c.cite) & rows)) for c in counted(cs) if checks.lines(c.cite) & rows]


class EachAlone(unittest.TestCase):
    def test_every_counted_check_of_every_case_fails_alone_in_some_run(self):
        for name in sorted(CASES):
            module = test_module(name)
            matching, alone = module.matching_checks(), module.alone_checks()
            self.assertEqual([c.what for c in matching if c.ok is False], [], "%s: its matching run misses" % name)
            self.assertEqual(sorted(alone), sorted(c.what for c in counted(matching)),
                             "%s: a counted check with no run of its own" % name)
            for what, cs in alone.items():
                self.assertEqual([c.what for c in cs if c.ok is False], [what], "%s: %s" % (name, what))

    def test_a_check_that_cannot_fail_alone_is_caught(self):
        # two checks of one measurement: keepalive-like, the ratio and its direction at one level
        twice = [checks.ratio("ratio", "002 L61", 1 / 3.0, 0.34),
                 checks.direction("direction", "002 L61", "up", 0.34, 1.0)]
        self.assertEqual([c.what for c in twice if not c.ok], [])
        # the only run in which the direction fails (close above keep-alive) fails the ratio too
        flipped = [checks.ratio("ratio", "002 L61", 1 / 3.0, 1.5), checks.direction("direction", "002 L61", "up",
                                                                                     1.5, 1.0)]
        self.assertEqual([c.what for c in flipped if not c.ok], ["ratio", "direction"])


class FittedRows(unittest.TestCase):
    def test_no_counted_check_reads_a_row_a_fit_read(self):
        for name, case in sorted(CASES.items()):
            module = test_module(name)
            self.assertEqual(fitted_rows_read(case, module.matching_checks()), [], name)

    def test_a_fit_on_a_counted_row_is_caught(self):
        case = type("Case", (), {"FITS": [scale.Fit("think time", "000 L169", {}, lambda f, m: (0, ""))]})
        cs = [checks.latency("32 users: latency", "000 L169", 1.8, 1800.0),
              checks.latency("32 users, count off: latency", "000 L181", 0.6, 600.0)]
        self.assertEqual(fitted_rows_read(case, cs), [("32 users: latency", [("000", "L169")])])


if __name__ == "__main__":
    unittest.main()
