"""The TPS-trend case's ramps and its terminal (cases/tps_trend.py).

A ramp is one Locust run of 100 users started over RAMP seconds, then held: the sutlab
recorder's 1 s rows (PREFIX_seconds.csv: the requests each second, and their response times;
Locust's own history is a 10 s moving mean with percentiles cumulated from the start, which would
hide the jitter the write-up looked for) give the TPS at one and at two users, the peak, the mean
and the coefficient of variation (stdev / mean) on the plateau (the seconds from SETTLE after the
last user started, the last partial second left out), and the median response there.

The terminal is `loadscripts/console --pty` in a process of its own: a pseudo-terminal the load
script prints into and an 80 x 24 screen it renders on, with no rate cap; its counters file gives
its bytes and lines a second, and its CPU, over any window of the run (window_speed).
"""

import collections
import os
import statistics
import subprocess
import time

from . import LOADSCRIPTS, parsers, report, stats
from .errors import RunError
from .report import MISSING, fmt, table
from .services import procs

CONSOLE = os.path.join(LOADSCRIPTS, "console")
SETTLE = 2  # seconds after the last user started before the plateau counts


def lab_url(netns):
    """The lab's sutlab as the load reaches it: SUTLAB_URL when set, else the netns lab's web
    address (infra/lab: SUTLAB_LAB_NETNS_NET, default 10.77, then .1.2) or loopback, on the lab's
    port (SUTLAB_LAB_PORT, default 8080: the netns lab listens on it too)."""
    host = os.environ.get("SUTLAB_LAB_NETNS_NET", "10.77") + ".1.2" if netns else "127.0.0.1"
    return os.environ.get("SUTLAB_URL") or "http://%s:%s" % (host, os.environ.get("SUTLAB_LAB_PORT", "8080"))


def read_seconds(path):
    """The sutlab recorder's PREFIX_seconds.csv of a Locust run (parsers.locust_seconds)."""
    return parsers.locust_seconds(path)


def figures(seconds, users):
    """A ramp's figures from its seconds (read_seconds' rows): {one, two, peak, plateau, cv, p50,
    window}, None where the ramp had no such second (a quick ramp leaves no whole second at one
    user). TPS counts the requests answered without failure (a refused one is no transaction). A
    second at n users counts when the second before it had n too (a user that started during it
    ran part of it)."""
    def tps(s):
        return s["rps"] - (s.get("failures_per_s") or 0.0)

    def mean_at(n):
        at = [tps(b) for a, b in zip(seconds, seconds[1:]) if a["users"] == b["users"] == n]
        return statistics.mean(at) if at else None
    full = [s["timestamp"] for s in seconds if s["users"] == users]
    plateau = [s for s in seconds if full and s["users"] == users and s["timestamp"] >= full[0] + SETTLE][:-1]
    rps = [tps(s) for s in plateau]
    mean = statistics.mean(rps) if rps else None
    return {"one": mean_at(1), "two": mean_at(2), "peak": max((tps(s) for s in seconds), default=None),
            "plateau": mean, "cv": statistics.pstdev(rps) / mean if len(rps) > 1 and mean else None,
            "p50": p50(plateau), "window": (plateau[0]["timestamp"] - 1, plateau[-1]["timestamp"]) if plateau else None}


def p50(seconds):
    """The median of every response of the seconds: their histograms merged (the recorder's own
    per-second p50s' median for a file without histograms)."""
    if any(s.get("histogram") is None for s in seconds if s["requests"]):
        return report.median([s["p50_ms"] for s in seconds if s["requests"]]) if seconds else None
    merged = collections.Counter()
    for s in seconds:
        merged.update(s["histogram"])
    return stats.counts_percentile(merged, 50)


def window_speed(counters, window):
    """The console's {Bps, lines, cpu} (bytes and lines a second, its CPU in cores) between the
    first and the last of its counter lines (unix_time, bytes, lines, cpu_s) inside window
    (t0, t1), or within half a second of it when fewer than two fall inside (a window of a
    second or two); None when fewer than two are that near."""
    if not window:
        return None
    for margin in (0.0, 0.5):
        inside = [c for c in counters if window[0] - margin <= c[0] <= window[1] + margin]
        if len(inside) >= 2 and inside[-1][0] > inside[0][0]:
            (t0, b0, l0, c0), (t1, b1, l1, c1) = inside[0], inside[-1]
            return {"Bps": (b1 - b0) / (t1 - t0), "lines": (l1 - l0) / (t1 - t0), "cpu": (c1 - c0) / (t1 - t0)}
    return None


class Terminal:
    """loadscripts/console --pty at OUT/console (its counters in OUT/console.csv, what it says
    in OUT/console.log), in a process of its own until close()."""

    def __init__(self, out):
        self.path, self.counters = os.path.join(out, "console"), os.path.join(out, "console.csv")
        self.log = open(os.path.join(out, "console.log"), "w")
        self.proc = subprocess.Popen(["/usr/bin/python3", CONSOLE, "--pty", self.path, "--counters", self.counters],
                                     stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=procs.die_with_parent)
        for _ in range(100):
            if os.path.lexists(self.path) or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if not os.path.lexists(self.path):
            self.close()
            raise RunError("loadscripts/console --pty did not start: see %s" % self.log.name)

    def speed(self, window):
        """window_speed over this console's counters so far."""
        try:
            with open(self.counters) as f:
                rows = [tuple(float(x) for x in ln.split(",")) for ln in f.read().splitlines()[1:] if ln]
        except (OSError, ValueError):
            return None
        return window_speed(rows, window)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def level_window(seconds_path, skip):
    """(t0, t1) of a stepped Locust level's measured seconds (its PREFIX_seconds.csv less the
    first `skip`, its warm-up), or None."""
    try:
        seconds = read_seconds(seconds_path)
    except (OSError, KeyError, ValueError):
        return None
    return (seconds[skip]["timestamp"] - 1, seconds[-1]["timestamp"]) if len(seconds) > skip else None


def speed_text(s):
    """The console's speed as a cell: MB/s, lines/s, its CPU in % of a core."""
    if not s:
        return MISSING
    return "%.1f MB/s, %.0f lines/s, %.0f %%" % (s["Bps"] / 1e6, s["lines"], 100 * s["cpu"])


def link_text(row):
    """The load's link in a steps.csv row: the busier direction in MB/s, and its share of the
    link's capacity where one is set (the netns lab's --rate), else "not capped"."""
    rates = [row.get(k) for k in ("net_rx_Bps", "net_tx_Bps") if isinstance(row.get(k), float)]
    if not rates:
        return MISSING
    cap = row.get("net_capacity_Bps")
    share = ("%.3g %% of %g MB/s" % (100 * max(rates) / cap, cap / 1e6)) if isinstance(cap, float) and cap else \
        "not capped"
    return "%.2f MB/s, %s" % (max(rates) / 1e6, share)


def steps_table(off, on):
    """The stepped runs' table, printing off and on (steps.csv rows; an on row's "console" is
    the console's speed over that level)."""
    def lines(label, rows):
        def scaled(r, k, by):
            return fmt(by * r[k], 0) if isinstance(r.get(k), float) else MISSING
        return [[label, "%d" % r["level"], fmt(r.get("rps"), 0), fmt(r.get("mean_ms"), 2), fmt(r.get("p50_ms"), 1)] +
                [scaled(r, k, 100) for k in ("busy_web", "busy_load", "writing_load")] +
                [scaled(r, "send_q_max", 1 / 1024.0), link_text(r), speed_text(r.get("console")),
                 r.get("verdict", "")] for r in rows]
    return table(["printing", "users", "req/s", "mean ms", "p50 ms", "web busy %", "load busy %", "load writing %",
                  "server's largest Send-Q KiB", "link", "console", "verdict"], lines("off", off) + lines("on", on))


def curves_table(curves, writeup):
    """The ramps' table: curves {(printing, write-up ramp s): figures, with "ramp" the seconds
    run and "console" its speed}, writeup {(printing, ramp): the write-up's figures there}."""
    def n(f, k, nd=0, by=1.0):
        return fmt(None if f.get(k) is None else by * f[k], nd)
    return table(["printing", "ramp-up s (run)", "1 user TPS", "2 users TPS", "peak TPS", "plateau TPS",
                  "plateau jitter CV %", "plateau p50 ms", "console", "write-up (004)"],
                 [[p, "%d (%d)" % (r, f["ramp"]), n(f, "one"), n(f, "two"), n(f, "peak"), n(f, "plateau"),
                   n(f, "cv", 0, 100), n(f, "p50", 1), speed_text(f.get("console")), writeup.get((p, r), "-")]
                  for (p, r), f in sorted(curves.items())])
