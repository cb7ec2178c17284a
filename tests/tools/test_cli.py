"""sutlab_lab.cli: a usage error is one line and exit 2; guarded ends a long command's run."""

import io
import signal
import subprocess
import unittest
from contextlib import redirect_stderr

import toolstest  # noqa: F401  (the library on sys.path)
from sutlab_lab import cli  # noqa: I100
from sutlab_lab.errors import RunError


class Guarded(unittest.TestCase):
    def setUp(self):
        self.said, self.cleaned = [], []
        saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        self.addCleanup(lambda: [signal.signal(s, h) for s, h in saved.items()])

    def end(self, run, **kw):
        return cli.guarded(run, self.said.append, "stopped", lambda: self.cleaned.append(True), **kw)

    def raising(self, exc):
        def run():
            raise exc
        return run

    def test_the_run_status_and_the_cleanup(self):
        self.assertEqual(self.end(lambda: 3), 3)
        self.assertEqual((self.said, self.cleaned), ([], [True]))

    def test_a_failure_is_one_line_and_exit_1(self):
        self.assertEqual(self.end(self.raising(RunError("no server")), prefix="bench: error: "), 1)
        self.assertEqual(self.said, ["bench: error: no server"])
        self.assertEqual(self.cleaned, [True])

    def test_a_tool_that_timed_out_is_exit_1(self):
        self.assertEqual(self.end(self.raising(subprocess.TimeoutExpired(["wrk"], 5))), 1)
        self.assertTrue(self.said[0].startswith("error: timed out: "), self.said)

    def test_an_interrupt_is_exit_130_and_still_cleans_up(self):
        self.assertEqual(self.end(self.raising(KeyboardInterrupt())), 130)
        self.assertEqual((self.said, self.cleaned), (["stopped"], [True]))

    def test_the_cleanup_runs_with_interrupts_ignored(self):
        seen = []
        cli.guarded(lambda: 0, self.said.append,
                    cleanup=lambda: seen.append(signal.getsignal(signal.SIGINT)))
        self.assertEqual(seen, [signal.SIG_IGN])

    def test_anything_else_is_not_swallowed(self):
        with self.assertRaises(ValueError):
            self.end(self.raising(ValueError("a bug")))
        self.assertEqual(self.cleaned, [True])


class UsageErrors(unittest.TestCase):
    def test_one_line_and_exit_2(self):
        p = cli.Parser(prog="flip")
        p.add_argument("--rounds", type=int)
        err = io.StringIO()
        with redirect_stderr(err), self.assertRaises(SystemExit) as ex:
            p.parse_args(["--rounds", "x"])
        self.assertEqual(ex.exception.code, 2)
        self.assertEqual(err.getvalue().count("\n"), 1, err.getvalue())
        self.assertTrue(err.getvalue().startswith("flip: "), err.getvalue())


if __name__ == "__main__":
    unittest.main(verbosity=2)
