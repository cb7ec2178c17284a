"""--fail-if EXPR: a figure a run must meet, as k6's thresholds; a command with one violated exits 1
after printing one line for each, so a CI job can gate on a run.

EXPR is METRIC OP NUMBER[UNIT][@SCOPE], without spaces (`p99<50ms`, `errors<0.1%`, `rps>=1000@8`):

  METRIC  rps (requests a second), p50 p95 p99 mean (latency), errors (share of the requests that
          failed: an error status or no reply), success (the open model's share answered with a
          2xx/3xx, vegeta's), ratio (flip: req/s on / off)
  OP      < <= > >=
  UNIT    latency: us, ms (the default) or s; errors and success: % or none (a fraction: 0.001);
          none for rps and ratio
  SCOPE   what the figure is read on: a level of steps (@8), an arm of flip (@on, @off), a run
          of bench (@static.health_check, @delivery.cache-on), or the whole run (@run: steps'
          requests over its levels' seconds, errors over all requests, the worst level's
          latencies). Without one: every level of steps, both arms of flip, the run of spray,
          every run of bench; ratio is flip's run's only, and each bench run's own (sutlab
          against its reference).

A figure the run did not measure (no p95 from ab, no ratio outside flip) violates the threshold:
a gate that cannot be read must not pass.
"""

import operator
import re

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
LATENCY = ("p50", "p95", "p99", "mean")
SHARES = ("errors", "success")
METRICS = ("rps", "ratio") + LATENCY + SHARES
LATENCY_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}
RUN = "run"

_EXPR = re.compile(r"^([a-z0-9]+)(<=|>=|<|>)([0-9]*\.?[0-9]+)([a-z%]*)(?:@([A-Za-z0-9_.-]+))?$")


class Threshold:
    """One parsed EXPR: `limit` in the metric's own unit (ms, a fraction, req/s)."""

    def __init__(self, text, metric, op, limit, scope, scoped_ratio=False):
        self.text, self.metric, self.op, self.limit, self.scope = text, metric, op, limit, scope
        self.scoped_ratio = scoped_ratio  # bench: every run has a ratio of its own

    def subjects(self, names):
        """The subjects (levels, arms, "run") this threshold is read on."""
        if self.scope is not None:
            return [self.scope]
        if self.metric == "ratio" and not self.scoped_ratio:
            return [RUN]
        return [n for n in names if n != RUN] or [RUN]

    def violations(self, subjects):
        """[(subject, value or None)] where the threshold does not hold."""
        out = []
        for name in self.subjects(list(subjects)):
            value = (subjects.get(name) or {}).get(self.metric)
            if value is None or not OPS[self.op](value, self.limit):
                out.append((name, value))
        return out


def parse(text, scoped_ratio=False):
    """A Threshold from EXPR; ValueError saying what is wrong. scoped_ratio: each subject has a
    ratio of its own (bench), not only the run (flip)."""
    m = _EXPR.match(text.strip())
    if m is None:
        raise ValueError("--fail-if wants METRIC OP NUMBER[UNIT][@SCOPE], e.g. p99<50ms or errors<0.1%%, got %r"
                         % text)
    metric, op, number, unit, scope = m.groups()
    if metric not in METRICS:
        raise ValueError("--fail-if %s: unknown metric %r (%s)" % (text, metric, ", ".join(METRICS)))
    limit = float(number)
    if metric in LATENCY:
        if unit and unit not in LATENCY_UNITS:
            raise ValueError("--fail-if %s: a latency is in us, ms or s" % text)
        limit *= LATENCY_UNITS[unit or "ms"]
    elif metric in SHARES:
        if unit not in ("", "%"):
            raise ValueError("--fail-if %s: %s is a share: NUMBER%% or a fraction" % (text, metric))
        limit = limit / 100.0 if unit == "%" else limit
        if limit > 1:
            raise ValueError("--fail-if %s: a share above 100%%" % text)
    elif unit:
        raise ValueError("--fail-if %s: %s takes no unit" % (text, metric))
    if metric == "ratio" and scope not in (None, RUN) and not scoped_ratio:
        raise ValueError("--fail-if %s: ratio is the whole run's (on / off)" % text)
    return Threshold(text.strip(), metric, op, limit, scope, scoped_ratio)


def argument(without=(), scoped_ratio=False):
    """argparse `type=` for --fail-if of a command whose runs have no figure `without` (steps and
    spray have no ratio): a bad EXPR is one usage line and exit 2."""
    import argparse

    def parse_arg(text):
        try:
            t = parse(text, scoped_ratio)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
        if t.metric in without:
            raise argparse.ArgumentTypeError("--fail-if %s: this command measures no %s" % (text, t.metric))
        return t
    return parse_arg


def _shown(metric, value):
    if value is None:
        return "not measured"
    if metric in LATENCY:
        return "%.3f ms" % value
    if metric in SHARES:
        return "%.3f%%" % (value * 100)
    return "%.2f" % value if metric == "ratio" else "%.0f" % value


def judge(thresholds, subjects, say=print):
    """Print one line per violated threshold (or one line saying all held) and return the exit
    status they give: 0 all met, 1 any violated. subjects: {name: {metric: value}}."""
    if not thresholds:
        return 0
    bad = 0
    for t in thresholds:
        for name, value in t.violations(subjects):
            bad += 1
            where = "" if name == RUN else (" at %s" % name)
            say("fail-if %s violated%s: %s is %s" % (t.text, where, t.metric, _shown(t.metric, value)))
    if not bad:
        say("fail-if: all %d threshold%s met" % (len(thresholds), "" if len(thresholds) == 1 else "s"))
    return 1 if bad else 0


def share(part, whole):
    """part / whole, None when whole is unknown or 0."""
    return None if not whole else part / float(whole)
