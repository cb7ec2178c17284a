"""Each case's tests can fail: for every case module, every counted check its tests make
is loosened, alone, to always-true (checks.Check built with ok=True for that figure), and the case's
own test module (test_case_NAME.py) is run again; some test of it must then fail. A check no test
notices when it stops checking is a check the tests do not hold."""

import importlib
import io
import types
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import CASES, checks  # noqa: E402,I100


class Loosened:
    """checks.Check with one figure (its `what`) forced to hold; records every counted `what` made."""

    def __init__(self):
        self.target, self.seen = None, set()
        self.original = checks.Check.__init__

    def __enter__(self):
        original, mutant = self.original, self

        def init(check, what, writeup, cite, measured, band, ok, role="figure"):
            if role != "set":
                mutant.seen.add(what)
                if what == mutant.target:
                    ok = True
            original(check, what, writeup, cite, measured, band, ok, role)
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
            ok, whats, loose = unheld(importlib.import_module("test_case_" + name.replace("-", "_")))
            self.assertTrue(ok, "%s: its tests fail as they stand" % name)
            self.assertTrue(whats, "%s: its tests make no counted check" % name)
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
        self.assertEqual(len(whats), 3)
        self.assertEqual(loose, whats)

    def test_the_loosening_is_seen(self):
        # with gzip's direction forced, a table where gzip makes no difference reads "reproduced",
        # and the check is itself again afterwards
        from sutlab_lab.cases import gzip
        runs = {side: [{"level": 16.0, "rps": 300.0}] for side in ("off", "on")}
        self.assertEqual(checks.verdict(gzip.checks(runs))[0], "not reproduced")
        with Loosened() as m:
            m.target = "gzip on against off: req/s under the cap"
            self.assertEqual(checks.verdict(gzip.checks(runs))[0], "reproduced")
        self.assertEqual(checks.verdict(gzip.checks(runs))[0], "not reproduced")


if __name__ == "__main__":
    unittest.main()
