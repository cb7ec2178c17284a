"""loadscripts/sutlab_lab/flip/plan.py: the off and on runs of a flag, from this build's
`sutlab serve --help` (SUTLAB_BIN) as flip reads it. --count-pagination is a boolean that grew
values (off|on|estimate): flip takes it as a valued flag, and the lab's saved flags may still
hold its boolean forms."""

import os
import types
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.errors import RunError  # noqa: E402,I100
from sutlab_lab.flip import plan  # noqa: E402

BIN = os.environ.get("SUTLAB_BIN")


def runs(value, base="--workers 2 --count-pagination --gzip", off=None):
    args = types.SimpleNamespace(flag="count-pagination", value=value, off=off, base_flags=base, tool=None,
                                 db_url=None, restore_flags=None)
    target = types.SimpleNamespace(kind="spawn", original=[], db_url=None)
    return plan.make_plan(args, target, BIN, "/nonexistent").runs


@unittest.skipUnless(BIN and os.access(BIN, os.X_OK), "needs SUTLAB_BIN (meson test sets it)")
class CountPagination(unittest.TestCase):
    def test_help_shows_a_valued_flag(self):
        self.assertIs(plan.serve_flags(BIN)["count-pagination"], False)
        self.assertIs(plan.serve_flags(BIN)["gzip"], True)

    def test_estimate_against_off(self):
        self.assertEqual(runs("estimate"), [
            ("off", ["--workers", "2", "--gzip", "--count-pagination", "off"], None),
            ("on", ["--workers", "2", "--gzip", "--count-pagination", "estimate"], None)])

    def test_no_value_is_off_against_on(self):
        self.assertEqual([r[1][-1] for r in runs(None)], ["off", "on"])

    def test_estimate_against_on(self):
        self.assertEqual([r[1][-2:] for r in runs("estimate", off="on")],
                         [["--count-pagination", "on"], ["--count-pagination", "estimate"]])
        with self.assertRaises(RunError):
            runs("off")


class StripFlag(unittest.TestCase):
    def test_a_valued_flag_alone_keeps_the_next_flag(self):
        self.assertEqual(plan.strip_flag(["--count-pagination", "--workers", "2"], "count-pagination", False),
                         ["--workers", "2"])
        self.assertEqual(plan.strip_flag(["--count-pagination", "estimate", "--gzip"], "count-pagination", False),
                         ["--gzip"])
        self.assertEqual(plan.strip_flag(["--no-count-pagination", "--count-pagination=on", "x"],
                                         "count-pagination", False), ["x"])


if __name__ == "__main__":
    unittest.main()
