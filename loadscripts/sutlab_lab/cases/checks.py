"""A case's checks and its verdict: each figure the write-up reports for the experiment against
the measured one, in a band stated before the run.

The rules, which every case module follows through the constructors below:
  - every figure is the write-up's own, and cites the write-up's line (`cite`: "000 L163", the
    write-up's number and the line of its text, checked against the write-ups' figure reference
    kept beside the repository: docs/bottlenecks.md);
  - a ratio's band is the write-up's figure x/÷ RATIO_BAND, unless the write-up gives a range of
    its own; a CPU share's band is its figure ± SHARE_POINTS points; both ends are bounded;
  - a figure the lab sets with a knob (a CPU cost per request, a latency) is shown as `set`, with
    the knob, and is not counted: matching it proves nothing;
  - a check has a role: `figure` (a number in its band), `direction` (the fix helps rather than
    hurts) or `tier` (the tier that limits is the write-up's). The verdict is `reproduced` when
    every counted check holds, `not reproduced` when a direction or a tier fails, and otherwise
    `partly reproduced: K of N`, naming each figure that missed with its measured value.
"""

from .. import report

RATIO_BAND = 1.5
SHARE_POINTS = 15
ROLES = ("figure", "direction", "tier", "set")


class Check:
    """One figure: `ok` is True or False for a counted check, None for a `set` one."""

    def __init__(self, what, writeup, cite, measured, band, ok, role="figure"):
        if role not in ROLES:
            raise ValueError("unknown role %r" % role)
        if not cite:
            raise ValueError("a check cites the write-up's line: %r" % what)
        self.what, self.writeup, self.cite, self.measured = what, writeup, cite, measured
        self.band, self.ok, self.role = band, (None if role == "set" else bool(ok)), role

    def __repr__(self):
        return "Check(%r, %s, %s)" % (self.what, self.measured, {True: "holds", False: "fails"}.get(self.ok, "set"))


def _x(v):
    return "%.2fx" % v if v < 10 else "%.1fx" % v


def ratio(what, cite, figure, measured, writeup=None, low=None, high=None, role="figure"):
    """A ratio of the write-up (figure, e.g. 1.8) against the measured one (None: not measured,
    which fails). The band is figure ÷/x RATIO_BAND unless the write-up's own range [low, high] is
    given."""
    if low is None and high is None:
        low, high = figure / RATIO_BAND, figure * RATIO_BAND
    if low is None or high is None or not 0 < low < high:
        raise ValueError("a ratio's band has two ends, low < high: %r" % what)
    ok = measured is not None and low <= measured <= high
    return Check(what, writeup or _x(figure), cite, report.MISSING if measured is None else _x(measured),
                 "%s-%s" % (_x(low), _x(high)), ok, role)


def quotient(what, cite, figures, measured):
    """A ratio the write-up gives as two of its figures, figures = (a, b): a / b, shown as
    "a / b = 1.15x", in the band of a ratio."""
    a, b = figures
    return ratio(what, cite, a / b, measured, writeup="%d / %d = %.2fx" % (a, b, a / b))


def share(what, cite, figure_pct, measured_share, writeup=None, role="figure"):
    """A CPU share of the write-up (figure_pct, in % of the tier's capacity) against the measured
    one (a share 0..1, or None), within ± SHARE_POINTS points. A figure under SHARE_POINTS has 0
    as its lower end, so its check holds any share up to figure + SHARE_POINTS: it says the tier
    was not busier than the write-up's, not that it was as busy."""
    low, high = max(0, figure_pct - SHARE_POINTS), min(100, figure_pct + SHARE_POINTS)
    measured = None if measured_share is None else measured_share * 100
    ok = measured is not None and low <= measured <= high
    return Check(what, writeup or "%g %%" % figure_pct, cite,
                 report.MISSING if measured is None else "%.0f %%" % measured, "%g-%g %%" % (low, high), ok, role)


def value(what, cite, writeup, measured, low, high, unit="", role="figure"):
    """A figure the write-up gives as a range or a bound (say "in the 1,800 range") against the
    measured one, in [low, high] (either may be None: an open end the write-up itself leaves)."""
    ok = measured is not None and (low is None or measured >= low) and (high is None or measured <= high)
    band = "%s-%s%s" % ("" if low is None else "%g" % low, "" if high is None else "%g" % high, unit)
    return Check(what, writeup, cite, report.MISSING if measured is None else "%.0f%s" % (measured, unit), band,
                 ok, role)


def latency(what, cite, figure_s, measured_ms):
    """A latency of the write-up (figure_s, in seconds) against the measured one (in ms, or None),
    x/÷ RATIO_BAND, as a ratio's band."""
    return value(what, cite, "%.2f s" % figure_s, measured_ms, round(1000 * figure_s / RATIO_BAND),
                 round(1000 * figure_s * RATIO_BAND), " ms")


def direction(what, cite, writeup, before, after, better="higher"):
    """The fix moves the figure the write-up's way: `after` above `before` (better="higher", e.g.
    req/s) or below it ("lower", e.g. a latency). A missing figure fails."""
    if better not in ("higher", "lower"):
        raise ValueError("better is higher or lower")
    ok = before is not None and after is not None and (after > before if better == "higher" else after < before)
    measured = "%s -> %s" % tuple(report.MISSING if v is None else "%.0f" % v for v in (before, after))
    return Check(what, writeup, cite, measured, better, ok, "direction")


def tier(what, cite, expected, verdicts):
    """The tier that limits every step in `verdicts` is the write-up's `expected` (a verdict name of
    verdict.py: web, db, load, none, ...). A `disturbed` step fails it: rerun on a quiet machine."""
    verdicts = list(verdicts)
    ok = bool(verdicts) and all(v == expected for v in verdicts)
    return Check(what, expected, cite, ", ".join(verdicts) or report.MISSING, "every step " + expected, ok, "tier")


def set_by(what, cite, writeup, knob, measured=None):
    """A figure the lab makes with a knob: printed as `set`, never counted."""
    return Check(what, writeup, cite, measured or report.MISSING, "set: " + knob, None, "set")


class Key:
    """In a case's table of checks (declared), the place of a measured value, by its name."""

    def __init__(self, name):
        self.name = name


def declared(rows, measured):
    """A case's checks declared as a table: each row is a constructor above and its arguments in
    order (what, cite, then the write-up's figure and band as the constructor takes them), with
    Key(name) where the value measured[name] goes."""
    return [row[0](*[measured[a.name] if isinstance(a, Key) else a for a in row[1:]]) for row in rows]


def verdict(checks):
    """(word, line): `reproduced`, `partly reproduced: K of N` or `not reproduced`, and the line
    that says so with each counted check that failed."""
    counted = [c for c in checks if c.role != "set"]
    failed = [c for c in counted if not c.ok]
    if not counted:
        raise ValueError("a case with no counted check has no verdict")
    why = "; ".join("%s (write-up %s, measured %s)" % (c.what, c.writeup, c.measured) for c in failed)
    if not failed:
        return "reproduced", "verdict: reproduced (all %d counted checks hold)" % len(counted)
    if any(c.role in ("direction", "tier") for c in failed):
        return "not reproduced", "verdict: not reproduced: " + why
    word = "partly reproduced: %d of %d" % (len(counted) - len(failed), len(counted))
    return word, "verdict: %s; missed: %s" % (word, why)


def exit_code(word):
    """case's exit status for a verdict: 0 reproduced, 1 partly or not."""
    return 0 if word == "reproduced" else 1


def table(checks):
    rows = [[c.what, c.writeup, c.cite, c.measured, c.band, {True: "yes", False: "**no**", None: "set"}[c.ok]]
            for c in checks]
    return report.table(["figure", "write-up", "line", "measured", "reproduced when", "holds"], rows, framed=True)
