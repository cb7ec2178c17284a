"""Shared code of loadscripts/plot and loadscripts/flip (standard library; matplotlib only
for the PNGs, imported when a plot is drawn). Run with Debian's /usr/bin/python3.

Readers turn load-generator output into series:
  Locust   PREFIX_stats_history.csv (+ PREFIX_seconds.csv, PREFIX_steps.csv, PREFIX_flags.txt
           written by loadscripts/locust when they are there)
  hey      `hey -o csv` output (one row per request)
  wrk      wrk's text report, with the "SUTLAB_WRK {json}" line of loadscripts/wrk/*.lua or
           wrk's own --latency distribution
"""

import csv
import json
import math
import os
import re
import statistics
import textwrap
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------
# The server: flags in force, processes, CPU.

BUILD_INFO_RE = re.compile(r'^sutlab_build_info\{([^}]*)\}', re.M)


def fetch_flags(url, timeout=3):
    """The `flags` label of sutlab_build_info at URL/metrics, or None."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=timeout) as r:
            text = r.read().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - any failure means "unknown"
        return None
    m = BUILD_INFO_RE.search(text)
    if not m:
        return None
    fm = re.search(r'flags="((?:[^"\\]|\\.)*)"', m.group(1))
    return fm.group(1).replace('\\"', '"').replace("\\\\", "\\") if fm else None


def proc_stat(pid):
    """(ppid, utime+stime, cutime+cstime) in clock ticks, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rindex(")") + 2:].split()
    # rest[0] = state (field 3); utime = field 14 -> rest[11]
    return int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rindex(")") + 2:].split()[0] != "Z"


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st:
                kids.setdefault(st[0], []).append(int(d))
    return kids


def tree_ticks(root):
    """CPU ticks (user+system, all threads) of root and every process under it, plus the
    children they reaped (cutime+cstime), so that backends that exit are still counted."""
    if not root:
        return None
    kids = children_map()
    total, pending, seen = 0, [root], set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        st = proc_stat(pid)
        if st is None:
            continue
        total += st[1] + st[2]
        pending.extend(kids.get(pid, []))
    return total


def read_pidfile(path):
    try:
        with open(path) as f:
            return int(f.readline().strip())
    except (OSError, ValueError):
        return None


def listening_pid(port, host="127.0.0.1"):
    """The pid of the process holding a listening TCP socket on host:port (read from /proc),
    or None."""
    want_port = "%04X" % port
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    local, state, inode = parts[1], parts[3], parts[9]
                    if state == "0A" and local.rsplit(":", 1)[1] == want_port:
                        inodes.add("socket:[%s]" % inode)
        except OSError:
            continue
    if not inodes:
        return None
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % d):
                try:
                    if os.readlink("/proc/%s/fd/%s" % (d, fd)) in inodes:
                        return int(d)
                except OSError:
                    continue
        except OSError:
            continue
    return None


# ---------------------------------------------------------------------------------------------
# Readers

def _float(v):
    try:
        if v in ("", "N/A", None):
            return None
        f = float(v)
        return None if math.isnan(f) else f
    except ValueError:
        return None


class Series:
    """Per-second rows: t (seconds from the start), users, rps, failures_per_s, error_pct,
    p50, p95, p99 (ms; None when unknown)."""

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
    for suffix in ("_stats_history.csv", "_seconds.csv", "_steps.csv", "_stats.csv", "_flags.txt"):
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return None


def sniff(path):
    """'locust-history', 'locust-seconds', 'hey', 'wrk' or None."""
    try:
        with open(path, "r", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return None
    first = head.splitlines()[0] if head else ""
    if first.startswith("Timestamp,User Count,Type,Name"):
        return "locust-history"
    if first.startswith("timestamp,users,requests,failures"):
        return "locust-seconds"
    if first.startswith("response-time,DNS+dialup"):
        return "hey"
    if "SUTLAB_WRK {" in head or "Requests/sec:" in head or re.search(r"Running \S+ test @", head):
        return "wrk"
    if path.endswith("_stats_history.csv"):
        return "locust-history"
    if "SUTLAB_WRK" in open(path, errors="replace").read():
        return "wrk"
    return None


def read_locust(path, settle=2.0):
    """A Series from a Locust run: PREFIX_seconds.csv when it is there (exact per-second
    percentiles), else the Aggregated rows of PREFIX_stats_history.csv."""
    prefix = locust_prefix(path) or path
    seconds = prefix + "_seconds.csv"
    history = prefix + "_stats_history.csv"
    if os.path.exists(seconds) and os.path.getsize(seconds) > 0:
        s = Series("locust", seconds, "exact per-second percentiles (loadscripts/locust)")
        with open(seconds, newline="") as f:
            rows = list(csv.DictReader(f))
        t0 = None
        for r in rows:
            ts = int(r["timestamp"])
            t0 = ts if t0 is None else t0
            n = int(r["requests"])
            fails = int(r["failures"])
            s.rows.append({"t": ts - t0, "users": int(r["users"]), "rps": _float(r["rps"]) or 0.0,
                           "failures_per_s": _float(r["failures_per_s"]) or 0.0,
                           "error_pct": 100.0 * fails / n if n else 0.0, "requests": n,
                           "p50": _float(r["p50_ms"]), "p95": _float(r["p95_ms"]), "p99": _float(r["p99_ms"])})
    elif os.path.exists(history):
        s = read_locust_history(history)
    else:
        raise ValueError("%s: neither %s nor %s exists" % (path, seconds, history))
    steps = prefix + "_steps.csv"
    if os.path.exists(steps) and os.path.getsize(steps) > 0:
        with open(steps, newline="") as f:
            s.steps = [(int(r["users"]), _float(r["rps"]) or 0.0, _float(r["p50_ms"]), _float(r["p95_ms"]),
                        _float(r["p99_ms"]), _float(r["error_pct"]) or 0.0, int(r["seconds"]))
                       for r in csv.DictReader(f) if int(r["seconds"]) > 0]
        s.steps_note = "exact percentiles per user level (PREFIX_steps.csv)"
    else:
        s.steps = steps_from_rows(s.rows, settle)
        s.steps_note = ("level req/s = mean of its seconds, p95 = median of per-second values; "
                        "first %g s of each level left out" % settle)
    return s


def read_locust_history(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("Name") == "Aggregated"]
    full = False
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("Name") not in ("Aggregated", None):
                full = True
                break
    note = ("Locust percentiles over its ~10 s window (--csv-full-history)" if full else
            "Locust 2.12 percentiles, cumulative since the start")
    s = Series("locust", path, note)
    prev = None
    t0 = None
    for r in rows:
        ts = int(r["Timestamp"])
        t0 = ts if t0 is None else t0
        total = int(float(r["Total Request Count"] or 0))
        fails = int(float(r["Total Failure Count"] or 0))
        if prev is not None and ts > prev[0]:
            dt = ts - prev[0]
            dn, df = total - prev[1], fails - prev[2]
            rps, fps = dn / dt, df / dt
        else:
            dn = df = 0
            rps = fps = 0.0
        s.rows.append({"t": ts - t0, "users": int(r["User Count"] or 0), "rps": rps, "failures_per_s": fps,
                       "error_pct": 100.0 * df / dn if dn else 0.0, "requests": dn,
                       "p50": _float(r["50%"]), "p95": _float(r["95%"]), "p99": _float(r["99%"])})
        prev = (ts, total, fails)
    if s.rows:
        s.rows = s.rows[1:] if len(s.rows) > 1 else s.rows  # the first row has no interval
    return s


def steps_from_rows(rows, settle):
    """Group per-second rows by user count (levels), leaving out the first `settle` seconds of
    each level; None when there are fewer than two levels."""
    levels = {}
    start = None
    for r in rows:
        u = r["users"]
        if start is None or start[0] != u:
            start = (u, r["t"])
        if u <= 0 or r["t"] - start[1] < settle or not r.get("requests", 1):
            continue
        levels.setdefault(u, []).append(r)
    if len(levels) < 2:
        return None
    out = []
    for u in sorted(levels):
        rs = levels[u]
        med = lambda k: statistics.median([x[k] for x in rs if x[k] is not None]) \
            if any(x[k] is not None for x in rs) else None  # noqa: E731
        out.append((u, statistics.mean(x["rps"] for x in rs), med("p50"), med("p95"), med("p99"),
                    statistics.mean(x["error_pct"] for x in rs), len(rs)))
    return out


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, int(math.ceil(p / 100.0 * len(sorted_values))) - 1))
    return sorted_values[k]


def read_hey(path):
    """A Series from `hey -o csv`: requests binned by the second they completed in."""
    bins = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                rt = float(r["response-time"])
                end = float(r["offset"]) + rt
                code = int(r["status-code"])
            except (KeyError, ValueError):
                continue
            b = bins.setdefault(int(end), [[], 0])
            b[0].append(rt * 1000.0)
            if code >= 400 or code == 0:
                b[1] += 1
    s = Series("hey", path, "exact per-second percentiles (hey -o csv)")
    for sec in range(0, (max(bins) + 1) if bins else 0):
        lat, fails = bins.get(sec, [[], 0])
        lat.sort()
        n = len(lat)
        s.rows.append({"t": sec, "users": 0, "rps": float(n), "failures_per_s": float(fails),
                       "error_pct": 100.0 * fails / n if n else 0.0, "requests": n,
                       "p50": percentile(lat, 50), "p95": percentile(lat, 95), "p99": percentile(lat, 99)})
    # the last second is partial: drop it when there are others
    if len(s.rows) > 2:
        s.rows = s.rows[:-1]
    return s


_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _wrk_time(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    return float(m.group(1)) * _UNIT[m.group(2)] if m else None


def parse_wrk(text):
    """A dict from wrk's output: rps, requests, duration_s, errors (socket + status >= 400),
    p50/p75/p90/p95/p99 (ms, those known), percentiles [(p, ms)], bytes."""
    out = {}
    m = re.search(r"^SUTLAB_WRK (\{.*\})\s*$", text, re.M)
    if m:
        d = json.loads(m.group(1))
        e = d["errors"]
        out.update(rps=d["rps"], requests=d["requests"], duration_s=d["duration_s"], bytes=d["bytes"],
                   errors=e["connect"] + e["read"] + e["write"] + e["timeout"] + e["status"],
                   socket_errors=e["connect"] + e["read"] + e["write"] + e["timeout"],
                   status_errors=e["status"], percentiles=[tuple(x) for x in d["percentiles"]])
        for k in ("p50", "p75", "p90", "p95", "p99", "p99.9", "mean", "max"):
            out[k] = d["latency_ms"][k]
        return out
    m = re.search(r"Requests/sec:\s*([\d.]+)", text)
    if not m:
        raise ValueError("no wrk report found (no 'Requests/sec:' line)")
    out["rps"] = float(m.group(1))
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),\s*([\d.]+)(\w+) read", text)
    if m:
        out["requests"] = int(m.group(1))
        out["duration_s"] = _wrk_time(m.group(2) + m.group(3)) / 1000.0
        units = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
        out["bytes"] = float(m.group(4)) * units.get(m.group(5), 1)
    sock = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        sock = sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    status = int(m.group(1)) if m else 0
    out.update(errors=sock + status, socket_errors=sock, status_errors=status)
    pct = []
    for pm in re.finditer(r"^\s+([\d.]+)%\s+([\d.]+(?:us|ms|s|m))\s*$", text, re.M):
        p, v = float(pm.group(1)), _wrk_time(pm.group(2))
        pct.append((p, v))
        out["p%g" % p] = v
    m = re.search(r"Latency\s+([\d.]+\w+)\s+[\d.]+\w+\s+([\d.]+\w+)", text)
    if m:
        out["mean"], out["max"] = _wrk_time(m.group(1)), _wrk_time(m.group(2))
    out["percentiles"] = pct
    return out


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


# ---------------------------------------------------------------------------------------------
# PNG

def png_size(path):
    """(width, height) from a PNG's IHDR; raises ValueError if it is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError("%s is not a PNG" % path)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not m or int(m.group(1)) < 200 or int(m.group(2)) < 150:
        raise ValueError("size must be WIDTHxHEIGHT in pixels, at least 200x150 (e.g. 1200x900)")
    return int(m.group(1)), int(m.group(2))


DPI = 100


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _figure(plt, size, **kw):
    w, h = size
    return plt.subplots(figsize=(w / DPI, h / DPI), dpi=DPI, **kw)


def _save(fig, plt, path, size):
    fig.savefig(path, dpi=DPI)  # no bbox_inches: the PNG keeps exactly the size asked for
    plt.close(fig)
    got = png_size(path)
    if got != tuple(size):
        raise RuntimeError("%s came out %dx%d, not %dx%d" % (path, got[0], got[1], size[0], size[1]))
    return path


def title_text(title, flags, size):
    chars = max(40, int(size[0] / 7.5))
    lines = [title]
    lines += textwrap.wrap("flags: " + (flags or "unknown"), chars)
    return "\n".join(lines[:4])


def _top_margin(fig, title_lines, size):
    px = 17 * title_lines + 34
    fig.subplots_adjust(top=max(0.5, 1.0 - px / float(size[1])), bottom=min(0.2, 60.0 / size[1]))


def plot_time(series, out, size, title, flags):
    """TPS (+ users), p50/p95/p99 and error rate over time: three panels, one PNG."""
    plt = _pyplot()
    fig, (a1, a2, a3) = _figure(plt, size, nrows=3, sharex=True,
                                gridspec_kw={"height_ratios": [3, 3, 2]})
    t = series.col("t")
    a1.plot(t, series.col("rps"), color="tab:blue", marker=".", label="throughput (req/s)")
    a1.set_ylabel("requests/s")
    a1.set_ylim(bottom=0)
    a1.grid(True, alpha=0.3)
    handles, labels = a1.get_legend_handles_labels()
    users = series.col("users")
    if any(users):
        a1b = a1.twinx()
        a1b.step(t, users, where="post", color="tab:gray", linestyle="--", label="users")
        a1b.set_ylabel("users")
        a1b.set_ylim(bottom=0, top=max(users) * 1.15 + 1)
        h2, l2 = a1b.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    a1.legend(handles, labels, loc="upper left", fontsize="small")
    for key, color in (("p50", "tab:green"), ("p95", "tab:orange"), ("p99", "tab:red")):
        pts = [(x, y) for x, y in zip(t, series.col(key)) if y is not None]
        if pts:
            a2.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker=".", label=key)
    a2.set_ylabel("response time (ms)")
    a2.set_ylim(bottom=0)
    a2.grid(True, alpha=0.3)
    a2.legend(loc="upper left", fontsize="small", title=series.pct_note, title_fontsize="x-small")
    a3.plot(t, series.col("error_pct"), color="tab:red", marker=".", label="errors (% of requests)")
    a3.set_ylabel("error rate (%)")
    a3.set_xlabel("time since start (s)")
    a3.set_ylim(bottom=0, top=max([1.0] + series.col("error_pct")) * 1.1)
    a3.grid(True, alpha=0.3)
    a3.legend(loc="upper left", fontsize="small")
    text = title_text(title, flags, size)
    fig.suptitle(text, fontsize="medium")
    _top_margin(fig, text.count("\n") + 1, size)
    return _save(fig, plt, out, size)


def plot_users(series, out, size, title, flags):
    """TPS and response time against users, one point per user level (a step run)."""
    plt = _pyplot()
    fig, (a1, a2) = _figure(plt, size, nrows=2, sharex=True)
    st = series.steps
    users = [s[0] for s in st]
    rps = [s[1] for s in st]
    a1.plot(users, rps, color="tab:blue", marker="o", label="throughput (req/s)")
    if users and users[0] > 0 and rps[0] > 0:
        per_user = rps[0] / users[0]
        a1.plot(users, [u * per_user for u in users], color="tab:gray", linestyle=":",
                label="linear from the first step (no bottleneck)")
    best = max(range(len(rps)), key=lambda i: rps[i]) if rps else None
    if best is not None:
        a1.annotate("max %.0f req/s at %d users" % (rps[best], users[best]), (users[best], rps[best]),
                    textcoords="offset points", xytext=(0, 8), ha="center", fontsize="small")
    a1.set_ylabel("requests/s")
    a1.set_ylim(bottom=0)
    a1.grid(True, alpha=0.3)
    a1.legend(loc="lower right", fontsize="small")
    for idx, key, color in ((2, "p50", "tab:green"), (3, "p95", "tab:orange"), (4, "p99", "tab:red")):
        pts = [(s[0], s[idx]) for s in st if s[idx] is not None]
        if pts:
            a2.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker="o", label=key,
                    linewidth=2.5 if key == "p95" else 1.0)
    errs = [s[5] for s in st]
    if any(e > 0 for e in errs):
        a2b = a2.twinx()
        a2b.bar(users, errs, width=max(1.0, (users[-1] - users[0]) / (len(users) * 4.0) if len(users) > 1 else 1.0),
                color="tab:red", alpha=0.25, label="errors (%)")
        a2b.set_ylabel("error rate (%)")
        a2b.set_ylim(bottom=0)
    a2.set_ylabel("response time (ms)")
    a2.set_xlabel("users")
    a2.set_ylim(bottom=0)
    a2.grid(True, alpha=0.3)
    a2.legend(loc="upper left", fontsize="small", title=series.steps_note, title_fontsize="x-small")
    text = title_text(title, flags, size)
    fig.suptitle(text, fontsize="medium")
    _top_margin(fig, text.count("\n") + 1, size)
    return _save(fig, plt, out, size)


def _pct_axis(ax):
    """x axis for latency percentile curves: 1/(1-p) on a log scale, labelled in %."""
    ax.set_xscale("log")
    ticks = [50, 90, 99, 99.9, 99.99]
    ax.set_xticks([1.0 / (1.0 - p / 100.0) for p in ticks])
    ax.set_xticklabels(["%g%%" % p for p in ticks])
    ax.set_xlabel("percentile")


def _pct_xy(percentiles):
    pts = [(1.0 / (1.0 - p / 100.0), v) for p, v in percentiles if 0 < p < 100 and v is not None]
    return [p[0] for p in pts], [p[1] for p in pts]


def plot_wrk(results, out, size, title, flags):
    """Latency percentile curves of one or more wrk runs (label -> parse_wrk dict)."""
    plt = _pyplot()
    fig, ax = _figure(plt, size)
    for label, r in results:
        xs, ys = _pct_xy(r.get("percentiles") or [])
        if xs:
            ax.plot(xs, ys, marker=".", label="%s: %.0f req/s, %d errors" % (label, r["rps"], r.get("errors", 0)))
    _pct_axis(ax)
    ax.set_ylabel("response time (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(loc="upper left", fontsize="small")
    text = title_text(title, flags, size)
    fig.suptitle(text, fontsize="medium")
    _top_margin(fig, text.count("\n") + 1, size)
    return _save(fig, plt, out, size)


def plot_flip(rows, out, size, title, flag_lines):
    """Side by side: req/s, p50/p95/p99, CPU per request, latency curves of the flip's runs.
    rows: dicts with label, rps, p50, p95, p99, errors, cpu_us_req, pg_us_req, percentiles."""
    plt = _pyplot()
    fig, axes = _figure(plt, size, nrows=2, ncols=2)
    (a1, a2), (a3, a4) = axes
    labels = [r["label"] for r in rows]
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    xs = list(range(len(rows)))
    bars = a1.bar(xs, [r["rps"] for r in rows], color=colors[:len(rows)])
    for b, r in zip(bars, rows):
        a1.annotate("%.0f" % r["rps"], (b.get_x() + b.get_width() / 2, b.get_height()),
                    textcoords="offset points", xytext=(0, 3), ha="center", fontsize="small")
    a1.set_xticks(xs)
    a1.set_xticklabels(labels)
    a1.set_ylabel("requests/s")
    a1.set_title("throughput", fontsize="small")
    a1.grid(True, axis="y", alpha=0.3)
    width = 0.8 / max(1, len(rows))
    for i, r in enumerate(rows):
        vals = [r.get(k) or 0.0 for k in ("p50", "p95", "p99")]
        a2.bar([j + (i - (len(rows) - 1) / 2.0) * width for j in range(3)], vals, width=width,
               color=colors[i % len(colors)], label=r["label"])
    a2.set_xticks(range(3))
    a2.set_xticklabels(["p50", "p95", "p99"])
    a2.set_ylabel("response time (ms)")
    a2.set_title("latency", fontsize="small")
    a2.grid(True, axis="y", alpha=0.3)
    a2.legend(fontsize="small")
    cpu = [r.get("cpu_us_req") or 0.0 for r in rows]
    pg = [r.get("pg_us_req") or 0.0 for r in rows]
    a3.bar(xs, cpu, color=colors[:len(rows)], label="sutlab")
    if any(pg):
        a3.bar(xs, pg, bottom=cpu, color="lightgray", hatch="//", label="PostgreSQL")
        a3.legend(fontsize="small")
    a3.set_xticks(xs)
    a3.set_xticklabels(labels)
    a3.set_ylabel("server CPU per request (µs)")
    a3.set_title("CPU time (user+system) / requests", fontsize="small")
    a3.grid(True, axis="y", alpha=0.3)
    for i, r in enumerate(rows):
        px, py = _pct_xy(r.get("percentiles") or [])
        if px:
            a4.plot(px, py, marker=".", color=colors[i % len(colors)], label=r["label"])
    _pct_axis(a4)
    a4.set_ylabel("response time (ms)")
    a4.set_title("latency distribution", fontsize="small")
    a4.grid(True, alpha=0.3, which="both")
    if a4.get_legend_handles_labels()[0]:
        a4.legend(fontsize="small")
    chars = max(40, int(size[0] / 7.5))
    lines = [title]
    for fl in flag_lines:
        lines += textwrap.wrap(fl, chars)
    text = "\n".join(lines[:6])
    fig.suptitle(text, fontsize="medium")
    fig.subplots_adjust(hspace=0.35, wspace=0.3)
    _top_margin(fig, text.count("\n") + 1, size)
    return _save(fig, plt, out, size)


def flags_diff(named):
    """[(label, flags text)] -> lines: the flags common to all, then each run's own."""
    toks = [(label, (text or "").split()) for label, text in named]
    if not toks:
        return []
    common = [t for t in toks[0][1] if all(t in other for _, other in toks[1:])]
    lines = ["flags (all runs): " + (" ".join(common) or "-")]
    for label, tk in toks:
        own = [t for t in tk if t not in common]
        lines.append("%s: %s" % (label, " ".join(own) or "(same)"))
    return lines
