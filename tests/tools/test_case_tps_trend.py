"""loadscripts/sutlab_lab/cases/tps_trend.py's checks against the TPS-trend write-up's figures (004
L52-L79), on rows shaped as steps.csv gives them: every figure matching is "reproduced"; printing
that costs nothing, or another tier limiting while printing, is "not reproduced"; each figure
missed alone is "partly reproduced" naming it, so loosening any check to always-true fails a test
here."""

import copy
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, tps_trend  # noqa: E402,I100

LEVELS = (1, 2, 5, 10, 25, 50, 100)


def rows(rps, **extra):
    """cpu_web_pct is the server's own CPU (% of one core) over capacity_web cores, as steps.csv
    has it; busy_web adds time runnable, which the server's CPU check does not read."""
    return [dict({"level": float(n), "rps": float(v), "mean_ms": 0.6, "p50_ms": 0.5, "busy_web": 0.2,
                  "cpu_web_pct": 30.0, "capacity_web": 1.0, "busy_load": 0.5, "send_q_max": 0.0,
                  "verdict": "below limits"}, **extra)
            for n, v in zip(LEVELS, rps)]


def matching():
    """Printing off: 1500 TPS at 1 user, 3000 at 2, up to 6500; printing on: ~150 whatever the
    users, the server nearly idle, the load tool the limit from 10 users on."""
    off = rows((1500, 3000, 4500, 5500, 6200, 6500, 6400))
    # the server's CPU 3 % of its core, its busy share 40 % (waiting for a core on a shared machine)
    on = rows((150, 152, 151, 149, 150, 151, 150), busy_web=0.4, cpu_web_pct=3.0, busy_load=1.0, mean_ms=300.0)
    for r in on:
        if r["level"] >= tps_trend.TIER_FROM:
            r["verdict"] = "load"
    return off, on


def setting(level, **kv):
    def change(off_on):
        for r in off_on:
            if r["level"] == level:
                r.update(kv)
    return change


def off_at(*pairs):
    def change(off, on):
        for level, kv in pairs:
            setting(level, **kv)(off)
    return change


# each counted figure, and a change to the matching run that misses it alone
MISSES = {
    "printing off, 1 user: TPS": off_at((1, {"rps": 900.0})),  # 3000 / 900 = 3.3x, still in its band
    "printing off, 2 users: TPS": off_at((1, {"rps": 1300.0}), (2, {"rps": 2400.0})),
    "printing off, 2 users / 1": off_at((1, {"rps": 1900.0}), (2, {"rps": 2600.0})),  # 1.37x: not proportional
    "printing off, 1-2 users: mean response": off_at((1, {"mean_ms": 1.5})),
    "printing off: top TPS": off_at(*((n, {"rps": 5500.0}) for n in (25, 50, 100))),
    "printing off / on, TPS": lambda off, on: [r.update(rps=100.0) for r in on],  # 65x
    "printing on: the server's CPU": lambda off, on: setting(50, cpu_web_pct=30.0)(on),
}


def verdict(off, on):
    return checks.verdict(tps_trend.checks(off, on))


class TpsTrendChecks(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        cs = tps_trend.checks(*matching())
        self.assertEqual(verdict(*matching())[0], "reproduced", [(c.what, c.measured) for c in cs if not c.ok])
        self.assertEqual(len([c for c in cs if c.role != "set"]), len(MISSES) + 2)  # + the direction, the tier
        self.assertTrue(all(c.cite.startswith("004 L") for c in cs))

    def assert_not_reproduced(self, off, on, naming):
        word, line = verdict(off, on)
        self.assertEqual(word, "not reproduced")
        self.assertIn(naming, line)

    def test_printing_that_costs_nothing_is_not_reproduced(self):
        off, _ = matching()
        self.assert_not_reproduced(off, copy.deepcopy(off), "printing on -> off: TPS")  # the switch did nothing

    def test_another_tier_limiting_while_printing_is_not_reproduced(self):
        off, on = matching()
        setting(50, verdict="web")(on)
        self.assert_not_reproduced(off, on, "the tier that limits")

    def test_the_send_q_rule_names_the_load_generator_too(self):
        off, on = matching()
        setting(100, verdict="client not reading")(on)
        self.assertEqual(verdict(off, on)[0], "reproduced")

    def test_each_figure_missed_alone_is_partly_reproduced(self):
        n = len(MISSES) + 2
        for what, miss in MISSES.items():
            off, on = copy.deepcopy(matching())
            miss(off, on)
            word, line = verdict(off, on)
            self.assertEqual(word, "partly reproduced: %d of %d" % (n - 1, n), (what, line))
            self.assertIn(what + " (write-up", line)

    def test_the_printing_on_tps_is_set_not_counted(self):
        off, on = matching()
        cs = {c.what: c for c in tps_trend.checks(off, on)}
        self.assertIsNone(cs["printing on: TPS"].ok)
        self.assertIn("--rate", cs["printing on: TPS"].band)

    def test_a_missing_level_fails_its_figures(self):
        off, on = matching()
        off = [r for r in off if r["level"] != 2]
        failed = [c.what for c in tps_trend.checks(off, on) if c.ok is False]
        self.assertEqual(sorted(failed), ["printing off, 1-2 users: mean response", "printing off, 2 users / 1",
                                          "printing off, 2 users: TPS"])


if __name__ == "__main__":
    unittest.main()
