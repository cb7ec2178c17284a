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
  - a figure that follows from the lab's own settings, or from a value fitted on the write-up's
    rows (cases/scale.py), is `set` too: a check counts only where a run could fail it;
  - a check has a role: `figure` (a number in its band), `direction` (the fix helps rather than
    hurts) or `tier` (the tier that limits is the write-up's), and a part of the verdict:
    `bottleneck` (the fix's direction at each of the write-up's levels, the limiting tier where
    the write-up names one, the fix's ratio) or `profile` (every other figure: tier shares,
    latencies, rates in the scale model). verdict() is `reproduced` when the whole bottleneck part
    and at least two thirds of the profile hold, `not reproduced` when the bottleneck part misses,
    `partly reproduced` otherwise, and `illustrated` when the write-up gives nothing a run could
    fail; its line gives both parts' counts and names every miss.
"""

import re

from .. import report

RATIO_BAND = 1.5
SHARE_POINTS = 15
ROLES = ("figure", "direction", "tier", "set")
PARTS = ("bottleneck", "profile")
PROFILE_NEEDED = 2 / 3.0


class Check:
    """One figure: `ok` is True or False for a counted check, None for a `set` one; `part` is
    bottleneck or profile (None for a `set` one): directions and tiers are the bottleneck's by
    default, figures the profile's."""

    def __init__(self, what, writeup, cite, measured, band, ok, role="figure", part=None):
        if role not in ROLES:
            raise ValueError("unknown role %r" % role)
        if not cite:
            raise ValueError("a check cites the write-up's line: %r" % what)
        if role == "set":
            part = None
        elif part is None:
            part = "profile" if role == "figure" else "bottleneck"
        if part not in PARTS + (None,):
            raise ValueError("unknown part %r" % part)
        self.what, self.writeup, self.cite, self.measured = what, writeup, cite, measured
        self.band, self.ok, self.role, self.part = band, (None if role == "set" else bool(ok)), role, part


def lines(cite):
    """The rows a cite names, {(write-up, "L168")}: "000 L168, L180", "000 L168-L170", "001 L47";
    a line range is each of its lines, a following item without a write-up number is the last
    one's."""
    out, doc = set(), None
    for item in re.split(r"[,;]\s*", cite):
        m = re.match(r"\s*(?:(\d{3})\s+)?L(\d+)(?:\s*-\s*L?(\d+))?", item)
        if not m:
            continue
        doc = m.group(1) or doc
        first = int(m.group(2))
        for n in range(first, int(m.group(3) or first) + 1):
            out.add((doc, "L%d" % n))
    return out

    def __repr__(self):
        return "Check(%r, %s, %s)" % (self.what, self.measured, {True: "holds", False: "fails"}.get(self.ok, "set"))


def _x(v):
    return "%.2fx" % v if v < 10 else "%.1fx" % v


def ratio(what, cite, figure, measured, writeup=None, low=None, high=None, role="figure", part=None,
          open_ended=False):
    """A ratio of the write-up (figure, e.g. 1.8) against the measured one (None: not measured,
    which fails). The band is figure ÷/x RATIO_BAND unless the write-up's own range [low, high] is
    given. open_ended: the write-up's figures are lower bounds ("above 6000" / "150-plus"), so the
    ratio has no upper end: the band is figure / RATIO_BAND and up."""
    if low is None and high is None:
        low, high = figure / RATIO_BAND, (None if open_ended else figure * RATIO_BAND)
    if low is None or (high is None and not open_ended) or not 0 < low < (high or float("inf")):
        raise ValueError("a ratio's band has two ends, low < high: %r" % what)
    ok = measured is not None and low <= measured and (high is None or measured <= high)
    return Check(what, writeup or _x(figure), cite, report.MISSING if measured is None else _x(measured),
                 "%s-%s" % (_x(low), "" if high is None else _x(high)), ok, role, part)


def quotient(what, cite, figures, measured, part=None):
    """A ratio the write-up gives as two of its figures, figures = (a, b): a / b, shown as
    "a / b = 1.15x", in the band of a ratio."""
    a, b = figures
    return ratio(what, cite, a / b, measured, writeup="%d / %d = %.2fx" % (a, b, a / b), part=part)


def share(what, cite, figure_pct, measured_share, writeup=None, role="figure"):
    """A CPU share of the write-up (figure_pct, in % of the tier's capacity) against the measured
    one (a share 0..1, or None), within ± SHARE_POINTS points. A figure under SHARE_POINTS has 0
    as its lower end, so its check holds any share up to figure + SHARE_POINTS: it says the tier
    was not busier than the write-up's, not that it was as busy. A share read at or over the top
    of its scale is the top: a CFS quota's share can read a little over 100 % (the quota is
    enforced over periods, the CPU read over the step), and 100 % is all a tier can give."""
    low, high = max(0, figure_pct - SHARE_POINTS), min(100, figure_pct + SHARE_POINTS)
    measured = None if measured_share is None else measured_share * 100
    ok = measured is not None and low <= min(measured, 100) <= high
    return Check(what, writeup or "%g %%" % figure_pct, cite,
                 report.MISSING if measured is None else "%.0f %%" % measured, "%g-%g %%" % (low, high), ok, role)


def value(what, cite, writeup, measured, low, high, unit="", role="figure", part=None):
    """A figure the write-up gives as a range or a bound (say "in the 1,800 range") against the
    measured one, in [low, high] (either may be None: an open end the write-up itself leaves)."""
    ok = measured is not None and (low is None or measured >= low) and (high is None or measured <= high)
    band = "%s-%s%s" % ("" if low is None else "%g" % low, "" if high is None else "%g" % high, unit)
    return Check(what, writeup, cite, report.MISSING if measured is None else "%.0f%s" % (measured, unit), band,
                 ok, role, part)


def latency(what, cite, figure_s, measured_ms, writeup=None):
    """A latency of the write-up (figure_s, in seconds, as compared: a scale model's time) against
    the measured one (in ms, or None), x/÷ RATIO_BAND, as a ratio's band."""
    return value(what, cite, writeup or "%.2f s" % figure_s, measured_ms, round(1000 * figure_s / RATIO_BAND),
                 round(1000 * figure_s * RATIO_BAND), " ms")


def rate(what, cite, writeup, figure, measured, unit=" req/s"):
    """An absolute rate of the write-up (figure, as compared: a scale model's s x rate) against the
    measured one, x/÷ RATIO_BAND. Only ever a scale model's: sutlab's raw rate against PHP's says
    nothing."""
    return value(what, cite, writeup, measured, figure / RATIO_BAND, figure * RATIO_BAND, unit)


def not_limited_by_load(what, cite, verdicts):
    """The load tool, which ran on machines of its own, did not limit: no step's verdict is
    `load` (nor `disturbed`, a step nothing can be read from). A check of the bottleneck part:
    a run the load tool limited measured the tool."""
    verdicts = list(verdicts)
    ok = bool(verdicts) and all(v not in ("load", "disturbed", "", None) for v in verdicts)
    return Check(what, "another machine", cite, ", ".join(str(v) for v in verdicts) or report.MISSING,
                 "no step load", ok, "tier")


def direction(what, cite, writeup, before, after, better="higher", part=None):
    """The fix moves the figure the write-up's way: `after` above `before` (better="higher", e.g.
    req/s) or below it ("lower", e.g. a latency). A missing figure fails."""
    if better not in ("higher", "lower"):
        raise ValueError("better is higher or lower")
    ok = before is not None and after is not None and (after > before if better == "higher" else after < before)
    measured = "%s -> %s" % tuple(report.MISSING if v is None else "%.0f" % v for v in (before, after))
    return Check(what, writeup, cite, measured, better, ok, "direction", part)


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


def verdict(checks, full_speed=False, warning=None):
    """(word, line). The bottleneck part decides: `not reproduced` when any of its checks misses;
    then `reproduced` when at least PROFILE_NEEDED of the profile holds (or it has none), else
    `partly reproduced`; `illustrated` when nothing is counted. full_speed: sutlab at its own
    speed, the profile shown but not judged. The line counts both parts and names every miss;
    warning (a busy machine) is said at its end."""
    counted = [c for c in checks if c.role != "set" and not (full_speed and c.part == "profile")]
    bottleneck = [c for c in counted if c.part == "bottleneck"]
    profile = [c for c in counted if c.part == "profile"]
    held = lambda cs: sum(1 for c in cs if c.ok)  # noqa: E731
    if not counted:
        word, parts = "illustrated", "nothing the write-up gives is a figure a run could miss; shown, not reproduced"
    else:
        if held(bottleneck) < len(bottleneck):
            word = "not reproduced"
        elif not profile or held(profile) >= PROFILE_NEEDED * len(profile):
            word = "reproduced"
        else:
            word = "partly reproduced"
        parts = "bottleneck %d of %d, profile %s" % (
            held(bottleneck), len(bottleneck),
            "not judged (full speed)" if full_speed else "%d of %d" % (held(profile), len(profile)))
    failed = [c for c in counted if not c.ok]
    why = "; ".join("%s [%s] (write-up %s, measured %s)" % (c.what, c.part, c.writeup, c.measured) for c in failed)
    line = "verdict: %s: %s%s" % (word, parts, "; missed: " + why if why else "")
    return word, line + ("; WARNING: %s" % warning if warning else "")


def exit_code(word):
    """case's exit status for a verdict: 0 reproduced, 1 otherwise (partly, not, illustrated)."""
    return 0 if word == "reproduced" else 1


def table(checks):
    rows = [[c.what, c.part or "-", c.writeup, c.cite, c.measured, c.band,
             {True: "yes", False: "**no**", None: "set"}[c.ok]] for c in checks]
    return report.table(["figure", "part", "write-up", "line", "measured", "reproduced when", "holds"], rows,
                        framed=True)
