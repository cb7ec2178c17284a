"""Arms measured in alternated rounds: A B C in odd rounds, C B A in even ones, so that a machine
drifting during the runs favours none of them.

    rows = run_rounds([Arm("sutlab", measure=run_sutlab), Arm("nginx", measure=run_nginx)],
                      rounds=3, seconds=5, warmup=1, log=print)
    rows["sutlab"]   # [round 1's row, round 2's, round 3's]

    rows = run_on(target, [Arm("off", flags=["--no-gzip"]), Arm("on", flags=["--gzip"])],
                  measure=lambda arm, rnd, seconds: {...}, rounds=3, seconds=10)

run_on is the usual experiment: before each measured run the target takes the arm's flags (a
restart when they differ from the ones in force) or its live change, then the arm's setup runs,
then measure. (Live arms as stretches of one load rather than runs: live.run_live.)
"""

from . import live


class Arm:
    """One side of a comparison.

    name     the label its rows are filed under ("off", "on", "sync", "nginx")
    flags    the server's flags for it (a target restarts the server with them), or None
    change   what differs in it, as a table shows it ("--no-gzip"), or None
    setup    callable() run once the target has the arm's flags, before each measured run (an
             action on the data: `sutlab db indexes off`), or None
    teardown callable() run after each of its runs, whatever happened (the action undone)
    measure  callable(seconds) -> row: the arm's own measured run (run_rounds); run_on makes it
    warm     callable(seconds): the unmeasured run before the rounds (default: a measure, dropped)
    live     {flag: value} set in the running server through the target's admin listener, no
             restart (run_live, live.py: at the arm's point of one load), or None
    """

    def __init__(self, name, measure=None, warm=None, flags=None, change=None, setup=None, teardown=None,
                 live=None):
        self.name, self.flags, self.change, self.setup, self.teardown = name, flags, change, setup, teardown
        self.live = live
        self.measure = measure
        self.warm = warm or measure


def round_order(items, rnd):
    """items in order in odd rounds (1, 3, ...), reversed in even ones."""
    return list(items) if rnd % 2 == 1 else list(reversed(items))


def run_rounds(arms, rounds, seconds, warmup=0, log=None, on_result=None):
    """Each arm's warm-up (when warmup > 0 seconds), then `rounds` alternated rounds of
    `seconds`. on_result(round, name, row) is called after every measured run (a progress
    line). Returns {name: [row of round 1, of round 2, ...]}."""
    if warmup:
        for arm in arms:
            if log:
                log("warm-up %s (%gs)" % (arm.name, warmup))
            arm.warm(warmup)
    rows = {arm.name: [] for arm in arms}
    for rnd in range(1, rounds + 1):
        for arm in round_order(arms, rnd):
            r = arm.measure(seconds)
            rows[arm.name].append(r)
            if on_result:
                on_result(rnd, arm.name, r)
    return rows


def run_on(target, arms, measure, rounds, seconds, warmup=0, log=None, on_result=None):
    """The arms on one target in alternated rounds: for each run, target.apply(arm.flags,
    arm.name) (when the arm has flags), its live change through the target's admin listener
    (when it has one), arm.setup(), measure(arm, round, seconds) -> row, and arm.teardown()
    however that went (round 0: the warm-up, its row dropped); the live flags set back as they
    were at the end. Returns {name: [row per round]}, as run_rounds."""
    admin, was = live.state_before(target, arms)

    def bound(arm):
        count = [0]

        def one(seconds_, rnd=None):
            if rnd is None:
                count[0] += 1
            if arm.flags is not None:
                target.apply(arm.flags, arm.name)
            if arm.live:
                live.apply_live(admin, arm.live)
            try:
                if arm.setup is not None:
                    arm.setup()
                return measure(arm, count[0] if rnd is None else rnd, seconds_)
            finally:
                if arm.teardown is not None:
                    arm.teardown()
        return Arm(arm.name, one, lambda s: one(s, 0), flags=arm.flags, change=arm.change)
    try:
        return run_rounds([bound(a) for a in arms], rounds, seconds, warmup, log, on_result)
    finally:
        live.apply_live(admin, was)
