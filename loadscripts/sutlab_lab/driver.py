"""Contenders measured in alternated rounds: A B C in odd rounds, C B A in even ones, so that a
machine drifting during the runs favours none of them. bench's suites and flip's off/on runs go
through it; what a contender measures, and how its results are reported, is theirs.

    results = run_rounds([Contender("sutlab", run_sutlab), Contender("nginx", run_nginx)],
                         rounds=3, seconds=5, warmup=1, log=print)
    results["sutlab"]   # [round 1's result, round 2's, round 3's]
"""


class Contender:
    """One side of a comparison. measure(seconds) runs the load and returns its result (a dict);
    warm(seconds) is the unmeasured run before the rounds (by default a measure, dropped)."""

    def __init__(self, name, measure, warm=None):
        self.name = name
        self.measure = measure
        self.warm = warm or measure


def round_order(items, rnd):
    """items in order in odd rounds (1, 3, ...), reversed in even ones."""
    return list(items) if rnd % 2 == 1 else list(reversed(items))


def run_rounds(contenders, rounds, seconds, warmup=0, log=None, on_result=None):
    """Each contender's warm-up (when warmup > 0 seconds), then `rounds` alternated rounds of
    `seconds`. on_result(round, name, result) is called after every measured run (a progress
    line). Returns {name: [result of round 1, of round 2, ...]}."""
    if warmup:
        for c in contenders:
            if log:
                log("warm-up %s (%gs)" % (c.name, warmup))
            c.warm(warmup)
    results = {c.name: [] for c in contenders}
    for rnd in range(1, rounds + 1):
        for c in round_order(contenders, rnd):
            r = c.measure(seconds)
            results[c.name].append(r)
            if on_result:
                on_result(rnd, c.name, r)
    return results
