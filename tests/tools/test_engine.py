"""The experiment engine (loadscripts/sutlab_lab/engine): arms in alternated rounds, by
themselves (run_rounds) and on a target that takes each arm's flags (run_on)."""

import unittest

import toolstest  # noqa: F401  (first: it puts loadscripts/ on the path, for package sutlab_lab)
from sutlab_lab import engine  # noqa: I100


class Rounds(unittest.TestCase):
    def test_alternated_with_warm_ups_first(self):
        calls = []

        def arm(name):
            return engine.Arm(name, lambda s: calls.append((name, s)) or {"name": name, "n": len(calls)},
                              lambda s: calls.append(("warm " + name, s)))

        seen = []
        results = engine.run_rounds([arm(n) for n in "ABC"], rounds=3, seconds=5, warmup=1,
                                    on_result=lambda rnd, name, r: seen.append((rnd, name)))
        self.assertEqual(calls, [("warm A", 1), ("warm B", 1), ("warm C", 1),
                                 ("A", 5), ("B", 5), ("C", 5), ("C", 5), ("B", 5), ("A", 5),
                                 ("A", 5), ("B", 5), ("C", 5)])
        self.assertEqual(seen[:4], [(1, "A"), (1, "B"), (1, "C"), (2, "C")])
        self.assertEqual([r["n"] for r in results["A"]], [4, 9, 10])  # rounds 1, 2, 3 in order

    def test_no_warm_up(self):
        calls = []
        a = engine.Arm("A", lambda s: calls.append(s) or {})
        self.assertEqual(engine.run_rounds([a], rounds=2, seconds=3), {"A": [{}, {}]})
        self.assertEqual(calls, [3, 3])


class FakeTarget:
    """Records what it was asked to apply, as a target that restarts a server would be."""

    def __init__(self, calls):
        self.calls = calls

    def apply(self, flags, label):
        self.calls.append(("apply", label, tuple(flags)))


class RunOn(unittest.TestCase):
    def test_flags_then_setup_then_measure_alternated(self):
        calls = []
        arms = [engine.Arm("off", flags=["--no-gzip"], change="--no-gzip"),
                engine.Arm("on", flags=["--gzip"], setup=lambda: calls.append(("setup", "on")))]

        def measure(arm, rnd, seconds):
            calls.append(("measure", arm.name, rnd, seconds))
            return {"arm": arm.name, "round": rnd}

        rows = engine.run_on(FakeTarget(calls), arms, measure, rounds=2, seconds=7)
        self.assertEqual(calls, [("apply", "off", ("--no-gzip",)), ("measure", "off", 1, 7),
                                 ("apply", "on", ("--gzip",)), ("setup", "on"), ("measure", "on", 1, 7),
                                 ("apply", "on", ("--gzip",)), ("setup", "on"), ("measure", "on", 2, 7),
                                 ("apply", "off", ("--no-gzip",)), ("measure", "off", 2, 7)])
        self.assertEqual(rows, {"off": [{"arm": "off", "round": 1}, {"arm": "off", "round": 2}],
                                "on": [{"arm": "on", "round": 1}, {"arm": "on", "round": 2}]})

    def test_warm_up_is_round_zero_and_dropped(self):
        calls = []
        arms = [engine.Arm("a", flags=[]), engine.Arm("b")]  # b: no flags, the target left as it is
        rows = engine.run_on(FakeTarget(calls), arms, lambda arm, rnd, s: calls.append((arm.name, rnd, s)) or rnd,
                             rounds=1, seconds=3, warmup=1)
        self.assertEqual(calls, [("apply", "a", ()), ("a", 0, 1), ("b", 0, 1), ("apply", "a", ()), ("a", 1, 3),
                                 ("b", 1, 3)])
        self.assertEqual(rows, {"a": [1], "b": [1]})

    def test_a_failing_measure_stops_the_rounds_its_teardown_run(self):
        calls = []

        def measure(arm, rnd, seconds):
            raise RuntimeError("tool failed in %s" % arm.name)
        arm = engine.Arm("x", flags=["--y"], setup=lambda: calls.append("off"), teardown=lambda: calls.append("on"))
        with self.assertRaisesRegex(RuntimeError, "tool failed in x"):
            engine.run_on(FakeTarget(calls), [arm], measure, rounds=2, seconds=1)
        self.assertEqual(calls, [("apply", "x", ("--y",)), "off", "on"])

    def test_no_target_for_arms_without_flags(self):
        """The missing-index case: an index dropped for one arm and made again after each of its runs."""
        calls = []
        arms = [engine.Arm("with"), engine.Arm("without", setup=lambda: calls.append("drop"),
                                               teardown=lambda: calls.append("create"))]
        rows = engine.run_on(None, arms, lambda arm, rnd, s: calls.append((arm.name, rnd)) or rnd, rounds=3, seconds=1)
        self.assertEqual(calls, [("with", 1), "drop", ("without", 1), "create", "drop", ("without", 2), "create",
                                 ("with", 2), ("with", 3), "drop", ("without", 3), "create"])
        self.assertEqual(rows, {"with": [1, 2, 3], "without": [1, 2, 3]})


if __name__ == "__main__":
    unittest.main()
