"""Load generator outputs -> one result shape (see sutlab_lab/__init__.py): wrk (its report, or the
SUTLAB_WRK line of loadscripts/wrk/*.lua), hey and ab reports, pgbench's report and
per-transaction log, redis-benchmark --csv, and Locust's CSV files.

errors = socket_errors (refused, reset, timed out: no response) + status_errors (a response
outside 2xx/3xx, a failed pgbench transaction, a failed Locust request). A report that holds no
result (the tool could not connect, gave up, or aborted) raises ValueError saying why.
"""

import csv
import json
import os
import math
import re

from . import stats


def number(text):
    """A float from a report field, None for an empty, N/A or NaN one."""
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return None if math.isnan(v) else v


_COMPLAINT = re.compile(r"(?i)^error|error from|refused|expired|unable to|could not connect|aborted")


def _why(text):
    """What a report that holds no result says about it: the tool's first complaint, else its
    last line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    said = [l for l in lines if _COMPLAINT.search(l)]
    return said[0] if said else lines[-1] if lines else "no output"


def _percentile_keys(res, pairs):
    res["percentiles"] = pairs
    for p, ms in pairs:
        res["p%g" % p] = ms


# ---------------------------------------------------------------------------------------------
# wrk

_WRK_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}
_BYTE_UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}


def wrk_ms(text):
    """wrk's '112.00us' / '3.54ms' / '1.20s' -> milliseconds."""
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text.strip())
    if not m:
        raise ValueError("not a wrk time: %r" % text)
    return float(m.group(1)) * _WRK_UNIT_MS[m.group(2)]


def parse_wrk(text):
    """wrk's output: the SUTLAB_WRK line when there is one (exact percentiles), else its report
    (--latency adds p50/p75/p90/p99). Latencies are None when no request completed in time."""
    m = re.search(r"^SUTLAB_WRK (\{.*\})\s*$", text, re.M)
    if m:
        return _wrk_summary(json.loads(m.group(1)))
    m = re.search(r"^Requests/sec:\s*([\d.]+)", text, re.M)
    if not m:
        raise ValueError("no wrk report (no 'Requests/sec:' line): %s" % _why(text))
    res = {"rps": float(m.group(1))}
    m = re.search(r"^\s*(\d+) requests in ([\d.]+\w+), ([\d.]+)(\w+) read", text, re.M)
    if not m:
        raise ValueError("no 'N requests in' line in the wrk report")
    res.update(requests=int(m.group(1)), duration_s=wrk_ms(m.group(2)) / 1000.0,
               bytes=float(m.group(3)) * _BYTE_UNITS[m.group(4)])
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    res["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    res["status_errors"] = int(m.group(1)) if m else 0
    res["errors"] = res["socket_errors"] + res["status_errors"]
    res["error_kinds"] = _wrk_kinds(text)
    m = re.search(r"^\s+Latency\s+(\S+)\s+\S+\s+(\S+)", text, re.M)
    # a max of 0: no latency was recorded (every request timed out), the 0s wrk prints are not times
    timed = m is not None and wrk_ms(m.group(2)) > 0
    res["mean"], res["max"] = (wrk_ms(m.group(1)), wrk_ms(m.group(2))) if timed else (None, None)
    dist = text.partition("Latency Distribution")[2]
    pairs = [(float(p), wrk_ms(v)) for p, v in re.findall(r"^\s+([\d.]+)%\s+([\d.]+\w+)\s*$", dist, re.M)]
    # now and then wrk prints 0.00us for some percentiles of a run that did record latencies, at
    # random (wg/wrk#354; often under pipelining): not times either
    _percentile_keys(res, [(p, ms) for p, ms in pairs if ms > 0] if timed else [])
    for key in ("p50", "p99"):
        res.setdefault(key, None)
    return res


def _wrk_summary(d):
    e = d["errors"]
    sock = e["connect"] + e["read"] + e["write"] + e["timeout"]
    res = {"rps": d["rps"], "requests": d["requests"], "duration_s": d["duration_s"],
           "bytes": d["bytes"], "socket_errors": sock, "status_errors": e["status"],
           "errors": sock + e["status"], "mean": d["latency_ms"]["mean"], "max": d["latency_ms"]["max"],
           "error_kinds": named_kinds({"connect": e["connect"], "read": e["read"], "write": e["write"],
                                       "timeout": e["timeout"], "status": e["status"]},
                                      {"connect": "refused", "read": "reset", "timeout": READ_TIMEOUT,
                                       "status": "non-2xx"})}
    # wrk's Lua histogram answers 0 for the 100th percentile: the max is the real one
    _percentile_keys(res, [(float(p), v) for p, v in d["percentiles"] if p < 100])
    return res


# ---------------------------------------------------------------------------------------------
# hey and ab

def parse_hey(text):
    """hey's text report. requests = responses + errors (hey counts both in its rate)."""
    m = re.search(r"^\s*Requests/sec:\s*([\d.]+)", text, re.M)
    if not m or "Summary:" not in text:
        raise ValueError("no hey summary: %s" % _why(text))
    res = {"rps": float(m.group(1)),
           "duration_s": float(re.search(r"^\s*Total:\s*([\d.]+) secs", text, re.M).group(1))}
    codes = {int(c): int(n) for c, n in re.findall(r"^\s*\[(\d+)\]\s+(\d+) responses", text, re.M)}
    errors = text.partition("Error distribution:")[2]
    res["socket_errors"] = sum(int(n) for n in re.findall(r"^\s*\[(\d+)\]\s", errors, re.M))
    res["status_errors"] = sum(n for c, n in codes.items() if not 200 <= c < 400)
    res["errors"] = res["socket_errors"] + res["status_errors"]
    res["error_kinds"] = _hey_kinds(text)
    res["requests"] = sum(codes.values()) + res["socket_errors"]
    m = re.search(r"^\s*Total data:\s*(\d+) bytes", text, re.M)
    res["bytes"] = float(m.group(1)) if m else None
    if codes:
        res["mean"] = number(re.search(r"^\s*Average:\s*(\S+) secs", text, re.M).group(1)) * 1000.0
        res["max"] = float(re.search(r"^\s*Slowest:\s*([\d.]+) secs", text, re.M).group(1)) * 1000.0
    else:
        res["mean"] = res["max"] = None  # no response: hey's zeros and NaNs are not times
    pairs = [(float(p), float(s) * 1000.0)
             for p, s in re.findall(r"^\s*(\d+)% in ([\d.]+) secs", text, re.M)]
    _percentile_keys(res, pairs)
    return res


def parse_ab(text):
    """ab's report. ab counts a response whose length differs from the first one's as failed
    (length_failures): with dynamic content that is no error, so it is not in errors."""
    m = re.search(r"^Complete requests:\s*(\d+)", text, re.M)
    if not m:
        raise ValueError("no ab report (no 'Complete requests:' line): %s" % _why(text))
    res = {"requests": int(m.group(1)),
           "rps": float(re.search(r"^Requests per second:\s*([\d.]+)", text, re.M).group(1)),
           "duration_s": float(re.search(r"^Time taken for tests:\s*([\d.]+) seconds", text, re.M).group(1)),
           "bytes": float(re.search(r"^Total transferred:\s*(\d+) bytes", text, re.M).group(1))}
    m = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    connect, receive, length, exceptions = (int(x) for x in m.groups()) if m else (0, 0, 0, 0)
    res["length_failures"] = length
    res["socket_errors"] = connect + receive + exceptions
    m = re.search(r"^Non-2xx responses:\s*(\d+)", text, re.M)
    res["status_errors"] = int(m.group(1)) if m else 0
    res["errors"] = res["socket_errors"] + res["status_errors"]
    res["error_kinds"] = _ab_kinds(text)
    m = re.search(r"^Total:\s+\d+\s+(\d+)\s+[\d.]+\s+\d+\s+(\d+)", text, re.M)
    res["mean"], res["max"] = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    served = text.partition("Percentage of the requests served")[2]
    _percentile_keys(res, [(float(p), float(ms)) for p, ms in re.findall(r"^\s*(\d+)%\s+(\d+)", served, re.M)])
    return res


# ---------------------------------------------------------------------------------------------
# pgbench and redis-benchmark

def parse_pgbench(text):
    """pgbench's report: requests = transactions processed (without the failed ones, which are
    status_errors), rps = its tps without the initial connection time. A run with no
    transaction (a short warm-up) has rps 0; an aborted one raises ValueError."""
    aborted = re.search(r"^pgbench: error: (client \d+ .*aborted.*)$", text, re.M)
    if aborted or "Run was aborted" in text:
        raise ValueError("pgbench aborted: %s" % (aborted.group(1) if aborted else _why(text)))
    m = re.search(r"^number of transactions actually processed: (\d+)", text, re.M)
    if not m:
        raise ValueError("no pgbench report (no 'number of transactions actually processed'): %s"
                         % _why(text))
    res = {"requests": int(m.group(1)), "socket_errors": 0}
    t = re.search(r"^tps = ([\d.]+) \(without initial connection time\)", text, re.M)
    if not t and res["requests"]:
        raise ValueError("no 'tps =' line in the pgbench report")
    res["rps"] = float(t.group(1)) if t else 0.0
    m = re.search(r"^number of failed transactions: (\d+)", text, re.M)
    res["status_errors"] = res["errors"] = int(m.group(1)) if m else 0
    m = re.search(r"^latency average = ([\d.]+) ms", text, re.M)
    res["mean"] = float(m.group(1)) if m else None
    m = re.search(r"^duration: (\d+) s", text, re.M)
    res["duration_s"] = float(m.group(1)) if m else None
    return res


def pgbench_latencies(lines):
    """(sorted latencies in ms, failed count) from pgbench -l log lines: 'client transaction
    time_us script epoch epoch_us [...]', time_us being 'failed' or 'skipped' for those."""
    lat, failed = [], 0
    for line in lines:
        parts = line.split()
        if len(parts) < 6:
            continue
        if parts[2].isdigit():
            lat.append(int(parts[2]) / 1000.0)
        elif parts[2] == "failed":
            failed += 1
    lat.sort()
    return lat, failed


def with_log_percentiles(res, latencies):
    """res with p50/p99 (and the curve) from a sorted latency list, the nearest-rank way."""
    _percentile_keys(res, [(q, stats.percentile(latencies, q)) for q in (50, 75, 90, 95, 99, 99.9)]
                     if latencies else [])
    res.setdefault("p50", None)
    res.setdefault("p99", None)
    return res


def parse_redis_benchmark(text):
    """redis-benchmark --csv, one command: rps and its latencies (ms)."""
    rows = list(csv.reader(l for l in text.splitlines() if l.startswith('"')))
    if len(rows) < 2:
        raise ValueError("no redis-benchmark result row: %s" % _why(text))
    row = dict(zip(rows[0], rows[-1]))
    res = {"rps": float(row["rps"]), "mean": number(row.get("avg_latency_ms")),
           "max": number(row.get("max_latency_ms")), "socket_errors": 0, "status_errors": 0,
           "errors": 0}
    _percentile_keys(res, [(p, number(row["p%d_latency_ms" % p])) for p in (50, 95, 99)
                           if "p%d_latency_ms" % p in row])
    return res


# ---------------------------------------------------------------------------------------------
# Locust CSV files (--csv PREFIX; _seconds and _steps are written by loadscripts/locust)

_LOCUST_PCTS = ("50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%")


def locust_aggregate(path):
    """The Aggregated row of PREFIX_stats.csv as a result (Locust's percentiles are rounded to
    whole ms, the 100% one is the max)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("Name") == "Aggregated"]
    if not rows:
        raise ValueError("%s: no Aggregated row" % path)
    r = rows[0]
    n = int(r["Request Count"])
    res = {"requests": n, "status_errors": int(r["Failure Count"]), "socket_errors": 0,
           "rps": float(r["Requests/s"]), "mean": number(r["Average Response Time"]) if n else None,
           "max": number(r["Max Response Time"]) if n else None,
           "bytes": (number(r["Average Content Size"]) or 0.0) * n}
    res["errors"] = res["status_errors"]
    pairs = [(float(k[:-1]), number(r[k])) for k in _LOCUST_PCTS if k != "100%" and k in r]
    _percentile_keys(res, [(p, v) for p, v in pairs if v is not None] if n else [])
    return res


def _rows(path, convert):
    with open(path, newline="") as f:
        return [{k: convert.get(k, number)(v) for k, v in r.items()} for r in csv.DictReader(f)]


def locust_seconds(path):
    """PREFIX_seconds.csv: one dict a second (timestamp, users, requests, failures, rps,
    failures_per_s, p50_ms, p95_ms, p99_ms, max_ms, mean_ms, and histogram: {rounded ms: count},
    None in a file written before the recorder kept it)."""
    return _rows(path, {"timestamp": int, "users": int, "requests": int, "failures": int,
                        "histogram": _histogram})


def _histogram(text):
    """`ms:count ms:count` as {ms: count}; None for a missing cell."""
    if text is None:
        return None
    out = {}
    for pair in text.split():
        ms, n = pair.split(":")
        out[float(ms)] = out.get(float(ms), 0) + int(n)
    return out


def locust_steps(path):
    """PREFIX_steps.csv: one dict a user level (users, seconds, requests, failures, rps,
    error_pct, p50_ms, p95_ms, p99_ms, max_ms, mean_ms)."""
    return _rows(path, {"users": int, "seconds": int, "requests": int, "failures": int})


def locust_history(path):
    """The Aggregated rows of PREFIX_stats_history.csv, and whether the file has per-endpoint
    rows too (--csv-full-history, whose percentiles are over a ~10 s window)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    full = any(r.get("Name") != "Aggregated" for r in rows)
    return [r for r in rows if r.get("Name") == "Aggregated"], full


# ---------------------------------------------------------------------------------------------
# errors by kind: a status code ("404"; a class such as "5xx", or "non-2xx", when the tool counts
# no more than that), "read timeout" (the request was sent and no response came within the client's
# timeout), "connect timeout" (no connection within it), "timeout" (a tool that does not say which),
# "refused", "reset", "other"

READ_TIMEOUT = "read timeout"
CONNECT_TIMEOUT = "connect timeout"

def named_kinds(counts, names):
    """{kind: n} from a tool's own error counters, renamed by `names` (others are "other")."""
    out = {}
    for key, n in counts.items():
        if n:
            kind = names.get(key, "other")
            out[kind] = out.get(kind, 0) + n
    return out


def _ab_kinds(text):
    out = {}
    m = re.search(r"^Non-2xx responses:\s*(\d+)", text, re.M)
    if m and int(m.group(1)):
        out["non-2xx"] = int(m.group(1))
    m = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: \d+, Exceptions: (\d+)\)", text)
    if m:
        out.update(named_kinds({"connect": int(m.group(1)), "receive": int(m.group(2)), "other": int(m.group(3))},
                          {"connect": "refused", "receive": "reset"}))
    return out


def classify(message):
    """The kind of one error message of hey or Locust."""
    m = re.search(r"\b([1-5]\d\d)\b (?:Client|Server) Error|status code:? ?([1-5]\d\d)|code=([1-5]\d\d)", message)
    if m:
        return m.group(1) or m.group(2) or m.group(3)
    text = message.lower()
    if "refused" in text:
        return "refused"
    if "reset" in text or "remotedisconnected" in text or "eof" in text:
        return "reset"
    return _timeout_kind(text) or "other"


def _timeout_kind(text):
    """The kind of a timeout message (lower case), or None if it is none. hey (Go's client
    timeout) names the phase: "dial tcp ...: i/o timeout" or "while waiting for connection" is a
    connect, "while awaiting headers" alone a read (the request went out); so do requests'
    ConnectTimeout and ReadTimeout. Locust's FastHttpUser says "timed out" for both: "timeout"."""
    if not ("timeout" in text or "timed out" in text or "deadline exceeded" in text):
        return None
    if "dial tcp" in text or "waiting for connection" in text or "connecttimeout" in text \
            or "connect timeout" in text:
        return CONNECT_TIMEOUT
    if "awaiting headers" in text or "readtimeout" in text or "read timed out" in text:
        return READ_TIMEOUT
    return "timeout"


def _hey_kinds(text):
    out = {}
    for code, n in re.findall(r"^\s*\[(\d+)\]\s+(\d+) responses", text, re.M):
        if not 200 <= int(code) < 400:
            out[code] = out.get(code, 0) + int(n)
    for n, message in re.findall(r"^\s*\[(\d+)\]\s+(.*)$", text.partition("Error distribution:")[2], re.M):
        kind = classify(message)
        out[kind] = out.get(kind, 0) + int(n)
    return out


def _wrk_kinds(text):
    """wrk's counters by kind. Its timeout is a read timeout: wrk times a request from its write,
    and counts one whose response came later than --timeout (it waits the response out, keeping
    the connection: the user is not freed as hey's is)."""
    out = {}
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        out.update(named_kinds(dict(zip(("connect", "read", "write", "timeout"), (int(x) for x in m.groups()))),
                          {"connect": "refused", "read": "reset", "timeout": READ_TIMEOUT}))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m and int(m.group(1)):
        out["non-2xx"] = int(m.group(1))
    return out

def locust_error_kinds(path):
    """{kind: n} from Locust's PREFIX_failures.csv (empty when the file is not there)."""
    out = {}
    if os.path.exists(path):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                kind = classify(r.get("Error", ""))
                out[kind] = out.get(kind, 0) + int(r.get("Occurrences") or 0)
    return out
