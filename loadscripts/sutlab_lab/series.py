"""What loadscripts/plot draws, read from a run's files: per-second series (Locust's CSVs, hey's
-o csv), the user levels of a step run, latency reports (wrk, hey, ab); what kind a file is; the
flags text stored next to it."""

import csv
import os
import re
import statistics

from . import parsers, stats

LOCUST_SUFFIXES = ("_stats_history.csv", "_seconds.csv", "_steps.csv", "_stats.csv", "_flags.txt")
REPORT_PARSERS = {"wrk": parsers.parse_wrk, "hey": parsers.parse_hey, "ab": parsers.parse_ab}


class Series:
    """Per-second rows: t (seconds from the start), users, rps, failures_per_s, error_pct,
    requests, p50, p95, p99 (ms, None when unknown); and the user levels of a step run."""

    def __init__(self, kind, source, pct_note):
        self.kind = kind          # "locust", "hey"
        self.source = source      # the file read
        self.pct_note = pct_note  # how the percentiles were computed (legend note)
        self.rows = []
        self.steps = None         # [(users, rps, p50, p95, p99, error_pct, seconds)] or None
        self.steps_note = ""

    def col(self, name):
        return [r[name] for r in self.rows]


def locust_prefix(path):
    for suffix in LOCUST_SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return None


def sniff(path):
    """'locust-history', 'locust-seconds', 'hey-csv', 'wrk', 'hey', 'ab' or None."""
    try:
        with open(path, "r", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    first = text.splitlines()[0] if text else ""
    if first.startswith("Timestamp,User Count,Type,Name"):
        return "locust-history"
    if first.startswith("timestamp,users,requests,failures"):
        return "locust-seconds"
    if first.startswith("response-time,DNS+dialup"):
        return "hey-csv"
    if "SUTLAB_WRK {" in text or re.search(r"^Running \S+ test @", text, re.M):
        return "wrk"
    if re.search(r"^This is ApacheBench", text, re.M):
        return "ab"
    if re.search(r"^Summary:\s*$", text, re.M) and "Requests/sec:" in text:
        return "hey"
    return None


def read_report(path, kind):
    """The result of a wrk, hey or ab report file."""
    with open(path, errors="replace") as f:
        return REPORT_PARSERS[kind](f.read())


def _level_row(r):
    return (r["users"], r["rps"] or 0.0, r["p50_ms"], r["p95_ms"], r["p99_ms"], r["error_pct"] or 0.0,
            r["seconds"])


def read_locust(path, settle=2.0):
    """A Series from a Locust run: PREFIX_seconds.csv when it is there (exact per-second
    percentiles), else the Aggregated rows of PREFIX_stats_history.csv."""
    prefix = locust_prefix(path) or path
    seconds, history = prefix + "_seconds.csv", prefix + "_stats_history.csv"
    if os.path.exists(seconds) and os.path.getsize(seconds) > 0:
        s = Series("locust", seconds, "exact per-second percentiles (loadscripts/locust)")
        rows = parsers.locust_seconds(seconds)
        t0 = rows[0]["timestamp"] if rows else 0
        for r in rows:
            n = r["requests"]
            s.rows.append({"t": r["timestamp"] - t0, "users": r["users"], "rps": r["rps"] or 0.0,
                           "failures_per_s": r["failures_per_s"] or 0.0,
                           "error_pct": 100.0 * r["failures"] / n if n else 0.0, "requests": n,
                           "p50": r["p50_ms"], "p95": r["p95_ms"], "p99": r["p99_ms"]})
    elif os.path.exists(history):
        s = read_locust_history(history)
    else:
        raise ValueError("%s: neither %s nor %s exists" % (path, seconds, history))
    steps = prefix + "_steps.csv"
    if os.path.exists(steps) and os.path.getsize(steps) > 0:
        s.steps = [_level_row(r) for r in parsers.locust_steps(steps) if r["seconds"] > 0]
        s.steps_note = "exact percentiles per user level (PREFIX_steps.csv)"
    else:
        s.steps = steps_from_rows(s.rows, settle)
        s.steps_note = ("level req/s = mean of its seconds, p95 = median of per-second values; "
                        "first %g s of each level left out" % settle)
    return s


def read_locust_history(path):
    """A Series from PREFIX_stats_history.csv: rates from the differences of its running totals
    (the first row has no interval before it and is left out)."""
    rows, full = parsers.locust_history(path)
    s = Series("locust", path, "Locust percentiles over its ~10 s window (--csv-full-history)" if full
               else "Locust 2.12 percentiles, cumulative since the start")
    prev, t0 = None, None
    for r in rows:
        ts = int(r["Timestamp"])
        t0 = ts if t0 is None else t0
        total = int(float(r["Total Request Count"] or 0))
        fails = int(float(r["Total Failure Count"] or 0))
        dn = df = 0
        rps = fps = 0.0
        if prev is not None and ts > prev[0]:
            dt = ts - prev[0]
            dn, df = total - prev[1], fails - prev[2]
            rps, fps = dn / dt, df / dt
        s.rows.append({"t": ts - t0, "users": int(r["User Count"] or 0), "rps": rps, "failures_per_s": fps,
                       "error_pct": 100.0 * df / dn if dn else 0.0, "requests": dn,
                       "p50": parsers.number(r["50%"]), "p95": parsers.number(r["95%"]),
                       "p99": parsers.number(r["99%"])})
        prev = (ts, total, fails)
    s.rows = s.rows[1:] if len(s.rows) > 1 else s.rows
    return s


def steps_from_rows(rows, settle):
    """Group per-second rows by user count (levels), leaving out the first `settle` seconds of
    each level; None when there are fewer than two levels."""
    levels, start = {}, None
    for r in rows:
        u = r["users"]
        if start is None or start[0] != u:
            start = (u, r["t"])
        if u <= 0 or r["t"] - start[1] < settle or not r.get("requests", 1):
            continue
        levels.setdefault(u, []).append(r)
    if len(levels) < 2:
        return None

    def med(rs, k):
        vals = [x[k] for x in rs if x[k] is not None]
        return statistics.median(vals) if vals else None

    return [(u, statistics.mean(x["rps"] for x in rs), med(rs, "p50"), med(rs, "p95"), med(rs, "p99"),
             statistics.mean(x["error_pct"] for x in rs), len(rs))
            for u, rs in sorted(levels.items())]


def read_hey_csv(path):
    """A Series from `hey -o csv` (one row per response; hey leaves the failed requests out):
    responses binned by the second they completed in, the last (partial) second left out."""
    bins = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rt = float(r["response-time"])
            b = bins.setdefault(int(float(r["offset"]) + rt), [[], 0])
            b[0].append(rt * 1000.0)
            code = int(r["status-code"])
            b[1] += 1 if code >= 400 or code == 0 else 0
    s = Series("hey", path, "exact per-second percentiles (hey -o csv)")
    for sec in range(max(bins) + 1 if bins else 0):
        lat, fails = bins.get(sec, [[], 0])
        lat.sort()
        n = len(lat)
        s.rows.append({"t": sec, "users": 0, "rps": float(n), "failures_per_s": float(fails),
                       "error_pct": 100.0 * fails / n if n else 0.0, "requests": n,
                       "p50": stats.percentile(lat, 50), "p95": stats.percentile(lat, 95),
                       "p99": stats.percentile(lat, 99)})
    if len(s.rows) > 2:
        s.rows = s.rows[:-1]
    return s


def flags_next_to(path):
    """A flags text stored next to a result: PREFIX_flags.txt, FILE.flags or DIR/flags.txt."""
    cands = []
    prefix = locust_prefix(path)
    if prefix:
        cands.append(prefix + "_flags.txt")
    stem = os.path.splitext(path)[0]
    cands += [stem + "_flags.txt", path + ".flags", stem + ".flags",
              os.path.join(os.path.dirname(path) or ".", "flags.txt")]
    for c in cands:
        if os.path.exists(c):
            with open(c, errors="replace") as f:
                text = f.read().strip()
            if text:
                return text
    return None
