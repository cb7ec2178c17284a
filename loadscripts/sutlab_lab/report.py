"""Numbers into report text. A value that is unknown or not involved is None, everywhere (never
NaN, never 0), and prints as MISSING."""

import statistics

MISSING = "n/a"


def fmt(v, nd=1, template="{}"):
    """v with nd decimals, put in template ('{}x', 'x{}'); MISSING when v is None."""
    return MISSING if v is None else template.format("%.*f" % (nd, v))


def ratio(a, b):
    """a / b; None when either is missing or b is 0."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def busy_percent(rps, cpu_us_per_req):
    """The share of one core a process used: requests per second times its CPU microseconds per
    request. None when either is missing."""
    if rps is None or cpu_us_per_req is None:
        return None
    return rps * cpu_us_per_req / 1e4


def median(values):
    """The median of the values that are not None; None when there are none."""
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def medians(runs, keys):
    """{key: median over the runs} for each key, plus errors: their sum."""
    m = {k: median(r.get(k) for r in runs) for k in keys}
    m["errors"] = sum(r.get("errors") or 0 for r in runs)
    return m


def round_ratios(runs_a, runs_b, key="rps"):
    """(ratio of the medians, '1.23x (per round: median 1.20x [1.10 1.20 1.30])'): the ratio of
    the medians, then of each round's pair, the comparison least disturbed by drift."""
    value = ratio(median(r.get(key) for r in runs_a), median(r.get(key) for r in runs_b))
    per = [ratio(a.get(key), b.get(key)) for a, b in zip(runs_a, runs_b)]
    return value, "%s (per round: median %s [%s])" % (
        fmt(value, 2, "{}x"), fmt(median(per), 2, "{}x"), " ".join(fmt(x, 2) for x in per))


def table(header, rows, left=2, framed=True):
    """Columns padded to their widest cell, the first `left` aligned left and the others right;
    framed: a Markdown table (| a | b |), else columns two spaces apart."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells):
        padded = [str(c).ljust(w) if i < left else str(c).rjust(w)
                  for i, (c, w) in enumerate(zip(cells, widths))]
        return "| " + " | ".join(padded) + " |" if framed else "  ".join(padded)

    out = [line(header)]
    if framed:
        out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out + [line(r) for r in rows])


def flags_diff(named):
    """[(label, flags text)] -> lines: the flags all runs share, then each run's own."""
    toks = [(label, (text or "").split()) for label, text in named]
    if not toks:
        return []
    common = [t for t in toks[0][1] if all(t in other for _, other in toks[1:])]
    lines = ["flags (all runs): " + (" ".join(common) or "-")]
    for label, tk in toks:
        own = [t for t in tk if t not in common]
        lines.append("%s: %s" % (label, " ".join(own) or "(same)"))
    return lines
