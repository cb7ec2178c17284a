"""The experiment engine (loadscripts/sutlab_lab/engine): arms in alternated rounds, by
themselves (run_rounds) and on a target that takes each arm's flags (run_on)."""

import os
import threading
import time
import unittest

import toolstest  # first: it puts loadscripts/ on the path, for package sutlab_lab
from sutlab_lab import engine  # noqa: I100
from sutlab_lab.engine import targets
from sutlab_lab.errors import RunError


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


class RunOnLive(unittest.TestCase):
    def test_live_arms_alternated_without_a_restart_and_set_back(self):
        admin, seen = FakeAdmin(), []
        target = FakeTarget([])
        target.admin = admin
        arms = [engine.Arm("off", live={"x": "off"}), engine.Arm("on", live={"x": "on"})]
        rows = engine.run_on(target, arms, lambda arm, rnd, s: seen.append((arm.name, admin.state)) or rnd,
                             rounds=2, seconds=1)
        self.assertEqual(seen, [("off", "off"), ("on", "on"), ("on", "on"), ("off", "off")])  # each run in its state
        self.assertEqual(target.calls, [])  # no restart
        self.assertEqual([c[:3] for c in admin.calls], [("check", "x"), ("set", "x", "off"), ("set", "x", "on"),
                                                        ("set", "x", "on"), ("set", "x", "off"), ("set", "x", "was")])
        self.assertEqual(rows, {"off": [1, 2], "on": [1, 2]})

    def test_live_arms_need_an_admin_listener(self):
        with self.assertRaisesRegex(RunError, "admin listener"):
            engine.run_on(FakeTarget([]), [engine.Arm("on", live={"x": "on"})], lambda *a: self.fail("measured"),
                          rounds=1, seconds=1)


RATE = {"off": 100.0, "on": 1000.0}  # the fabricated server's requests a second in each state


class FakeAdmin:
    """An admin listener in front of a fabricated server whose request counter grows at
    RATE[state]: the calls are recorded with their time, so the counter a scrape reads steps
    exactly when (and only if) a change was made."""

    def __init__(self):
        self.calls, self.state, self.count, self.since = [], "was", 0.0, time.monotonic()
        self.lock = threading.Lock()

    def requests(self):
        with self.lock:
            now = time.monotonic()
            return self.count + RATE.get(self.state, 0.0) * (now - self.since)

    def check_live(self, flag):
        self.calls.append(("check", flag))
        if flag != "x":
            raise RunError("--%s does not change live" % flag)
        return "was"

    def set(self, flag, value):
        with self.lock:
            now = time.monotonic()
            self.count += RATE.get(self.state, 0.0) * (now - self.since)
            self.state, self.since = value, now
        self.calls.append(("set", flag, value, now))


def metrics_text(admin):
    """The fabricated server's /metrics: its counter, one latency bucket, its flag."""
    n = int(admin.requests())
    return ('# TYPE http_requests_total counter\n'
            'http_requests_total{route="/r",method="GET",code="200"} %d\n'
            '# TYPE http_request_duration_seconds histogram\n'
            'http_request_duration_seconds_bucket{route="/r",le="0.001"} %d\n'
            'http_request_duration_seconds_bucket{route="/r",le="+Inf"} %d\n'
            'http_request_duration_seconds_sum{route="/r"} 0\n'
            'http_request_duration_seconds_count{route="/r"} %d\n'
            '# TYPE sutlab_build_info gauge\n'
            'sutlab_build_info{version="1",flags="--x=%s"} 1\n' % (n, n, n, n, admin.state))


class LiveTarget:
    def __init__(self, admin, url):
        self.admin, self.url = admin, url

    def pids(self):
        return [os.getpid()]

    def pg_pid(self):
        return None


class RunLive(unittest.TestCase):
    """run_live: one load, the second arm's change made live at its half, each arm's row from its
    stretch of the scrapes, the flag set back."""

    def setUp(self):
        self.admin = FakeAdmin()
        self.target = LiveTarget(self.admin, toolstest.text_server(self, lambda: metrics_text(self.admin)))
        self.arms = [engine.Arm("off", live={"x": "off"}), engine.Arm("on", live={"x": "on"})]

    def test_the_change_at_the_half_and_each_arm_its_stretch(self):
        events = []

        def load(seconds):
            events.append(("load", seconds, time.monotonic(), self.admin.state))
            time.sleep(seconds)
            return {"requests": 7}
        rows, run = engine.run_live(self.target, self.arms, load, seconds=1.5, settle=0.3,
                                    warm=lambda: events.append(("warm", self.admin.state)))
        self.assertEqual([c[:3] for c in self.admin.calls],
                         [("check", "x"), ("set", "x", "off"), ("set", "x", "on"), ("set", "x", "was")])
        self.assertEqual(events[0], ("warm", "off"))  # the first arm's state, before the load
        self.assertEqual(events[1][:2], ("load", 3.0))  # one load: both arms' seconds
        self.assertAlmostEqual(events[1][2], run.t0, delta=0.1)
        t_on = self.admin.calls[2][3]
        self.assertAlmostEqual(t_on - run.t0, 1.5, delta=0.25)  # the change at the half
        self.assertEqual([name for name, _ in run.changes], ["off", "on"])
        self.assertAlmostEqual(run.changes[1][1], t_on, delta=0.1)
        self.assertEqual(run.load, {"requests": 7})
        # each row reads the counter of its own state: a change made early, late or not at all
        # gives a row the other state's rate
        self.assertAlmostEqual(rows["off"][0]["rps"], RATE["off"], delta=RATE["off"] * 0.2)
        self.assertAlmostEqual(rows["on"][0]["rps"], RATE["on"], delta=RATE["on"] * 0.2)
        self.assertEqual((rows["off"][0]["build_flags"], rows["on"][0]["build_flags"]), ("--x=off", "--x=on"))
        self.assertLessEqual(rows["on"][0]["seconds"], 1.5 - 0.3 + 0.05)  # the settle left out
        timelines = {arm: rows[arm][0]["cpu_timeline"] for arm in ("off", "on")}  # the tiers' looks, split
        self.assertTrue(timelines["off"] and timelines["on"], timelines)
        self.assertTrue(all(p[0] <= t_on for p in timelines["off"]) and all(p[0] >= t_on for p in timelines["on"]))

    def test_the_flag_is_set_back_when_the_load_fails(self):
        def load(seconds):
            raise RuntimeError("wrk failed")
        with self.assertRaisesRegex(RuntimeError, "wrk failed"):
            engine.run_live(self.target, self.arms, load, seconds=0.5)
        self.assertEqual(self.admin.calls[-1][:3], ("set", "x", "was"))

    def test_a_flag_that_does_not_change_live_stops_the_run_before_any_change(self):
        arms = [engine.Arm("off", live={"x": "off"}), engine.Arm("on", live={"y": "on"})]
        with self.assertRaisesRegex(RunError, "--y does not change live"):
            engine.run_live(self.target, arms, lambda s: self.fail("no load"), seconds=0.5)
        self.assertEqual(self.admin.calls, [("check", "x"), ("check", "y")])

    def test_no_admin_listener(self):
        self.target.admin = None
        with self.assertRaisesRegex(RunError, "admin listener"):
            engine.run_live(self.target, self.arms, lambda s: self.fail("no load"), seconds=0.5)


class FakeServer:
    """A ServerProcess's lifecycle, recorded: started, stopped, running or not."""

    def __init__(self, calls, flags, label, fail=False):
        self.calls, self.flags, self.label, self.fail, self.up = calls, flags, label, fail, False
        self.pid = 100 + len(calls)

    def start(self):
        self.calls.append(("start", self.label, tuple(self.flags)))
        if self.fail:
            raise RunError("no answer")
        self.up = True
        return self

    def stop(self):
        self.calls.append(("stop", self.label))
        self.up = False

    def running(self):
        return self.up


class ServerTargets(unittest.TestCase):
    """targets.ServerTarget (bench's board suite) and SpawnTarget share one restart rule."""

    def test_restarted_when_the_flags_differ_or_it_was_stopped(self):
        calls = []
        t = targets.ServerTarget(lambda flags, label: FakeServer(calls, flags, label))
        t.apply(["--a"], "one")
        t.apply(["--a"], "one")  # same flags, running: left as it is
        self.assertEqual(t.pids(), [t.server.pid])
        t.apply(["--b"], "two")
        t.stop()
        t.apply(["--b"], "two")  # stopped (an arm's teardown): a fresh one
        t.server.up = False
        t.apply(["--b"], "two")  # died: started again
        t.restore()
        self.assertEqual(calls, [("start", "one", ("--a",)), ("stop", "one"), ("start", "two", ("--b",)),
                                 ("stop", "two"), ("start", "two", ("--b",)), ("stop", "two"),
                                 ("start", "two", ("--b",)), ("stop", "two")])
        self.assertEqual((t.server, t.pids()), (None, []))

    def test_a_fresh_server_for_every_run_through_run_on(self):
        calls = []
        t = targets.ServerTarget(lambda flags, label: FakeServer(calls, flags, label))
        arms = [engine.Arm(m, flags=[f], teardown=t.stop) for m, f in (("off", "--no-x"), ("on", "--x"))]
        rows = engine.run_on(t, arms, lambda arm, rnd, s: t.server.label, rounds=2, seconds=1)
        self.assertEqual(rows, {"off": ["off", "off"], "on": ["on", "on"]})
        self.assertEqual([c for c in calls if c[0] == "start"], [("start", "off", ("--no-x",)),
                                                                 ("start", "on", ("--x",)), ("start", "on", ("--x",)),
                                                                 ("start", "off", ("--no-x",))])
        self.assertEqual(len(calls), 8)  # each start stopped

    def test_a_failed_start_says_why(self):
        calls = []
        t = targets.ServerTarget(lambda flags, label: FakeServer(calls, flags, label, fail=True))
        with self.assertRaisesRegex(RunError, "no answer"):
            t.apply(["--a"], "one")


if __name__ == "__main__":
    unittest.main()
