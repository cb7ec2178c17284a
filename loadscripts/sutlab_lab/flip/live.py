"""flip --live: one load runs throughout, and the flag changes at its half through sutlab's admin
listener (docs/admin-api.md), so the run is one curve with a step in it rather than two curves
either side of a restart.

The curve and the before/after table come from the server's own counters, scraped every
half second: requests completed (http_requests_total, /metrics itself left out), the latency
histogram (http_request_duration_seconds, quantiles interpolated within a bucket as Prometheus's
histogram_quantile does, so to a bucket's resolution), responses >= 400, and sutlab's CPU time.
The "off" half is the load's first half; the "on" half starts --warmup seconds after the change
(the new state's warm-up: a cache filling, timers re-armed), which the table says."""

import json
import os
import secrets
import threading
import time
import urllib.error
import urllib.request

from . import load, log
from .plan import spec_of
from .. import metrics, plots, series, tiers
from ..errors import RunError
from ..services import procs

SCRAPE_S = 0.5
QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


class Admin:
    """sutlab's admin listener: PUT /admin/flags/NAME, GET /admin."""

    def __init__(self, url, token):
        self.url, self.token = url.rstrip("/"), token

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")
        except (OSError, ValueError) as e:
            raise RunError("the admin listener at %s does not answer: %s" % (self.url, e))

    def check_live(self, flag):
        status, doc = self.call("GET", "/admin")
        if status != 200:
            raise RunError("GET %s/admin: %d %s (is the token right?)" % (self.url, status, doc))
        if flag not in doc["flags"]:
            raise RunError("--%s does not change live (the live flags: %s); flip it without --live"
                           % (flag, ", ".join(sorted(doc["flags"]))))
        return doc["flags"][flag]

    def set(self, flag, value):
        status, doc = self.call("PUT", "/admin/flags/" + flag, {"value": value})
        if status != 200:
            raise RunError("PUT /admin/flags/%s %r: %d %s" % (flag, value, status, doc))


def spawn_admin_flags():
    """What flip adds to a server it spawns: an admin listener on a free loopback port with a
    random token; (flags, Admin)."""
    port, token = procs.free_port(), secrets.token_hex(32)
    return (["--admin-listen", "127.0.0.1:%d" % port, "--admin-token", token],
            Admin("http://127.0.0.1:%d" % port, token))


def values(args, plan):
    """The flag's word in the off and the on half, as the admin listener takes it."""
    spec = spec_of(args.flag)
    if plan.boolean:
        return "off", "on"
    off = args.off if args.off is not None else spec.get("off")
    on = args.value or spec.get("on")
    if off is None or on is None:
        raise RunError("--live needs both values of --%s: give VALUE and --off VALUE" % args.flag)
    return off, on


class Scraper(threading.Thread):
    """/metrics every SCRAPE_S: (t, requests, errors, buckets {le: cumulative}, cpu seconds)."""

    def __init__(self, url, pids):
        super().__init__(daemon=True)
        self.url, self.pids = url, pids
        self.points, self.stop = [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                # read every few tenths of a second: the format check (the server tests' job) would
                # cost as much again
                m = metrics.scrape(self.url, timeout=2, check=False)
            except (OSError, ValueError, metrics.MetricsFormatError):
                m = None
            if m is not None:
                self.points.append(point(t, m, procs.cpu_seconds(self.pids)))
            self.stop.wait(max(0.0, SCRAPE_S - (time.monotonic() - t)))


def point(t, m, cpu):
    app = [(lbl, v) for lbl, v in m.samples("http_requests_total") if lbl.get("route") != "/metrics"]
    buckets = {}
    for lbl, v in m.samples("http_request_duration_seconds_bucket"):
        if lbl.get("route") != "/metrics":
            le = float(lbl["le"])
            buckets[le] = buckets.get(le, 0.0) + v
    return {"t": t, "requests": sum(v for _, v in app),
            "errors": sum(v for lbl, v in app if lbl.get("code", "0")[:1] in ("4", "5")),
            "buckets": buckets, "cpu": cpu}


def quantile(q, lo, hi):
    """The q-quantile in ms of the requests between two scrapes' cumulative buckets."""
    bounds = sorted(hi["buckets"])
    counts = [hi["buckets"][b] - lo["buckets"].get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    if total <= 0:
        return None
    want, prev_bound, prev_count = q * total, 0.0, 0.0
    for b, c in zip(bounds, counts):
        if c >= want:
            if b == float("inf"):
                return prev_bound * 1000.0
            frac = (want - prev_count) / (c - prev_count) if c > prev_count else 1.0
            return (prev_bound + (b - prev_bound) * frac) * 1000.0
        prev_bound, prev_count = b, c
    return prev_bound * 1000.0


def window(points, start, end):
    """The first and last scrape within [start, end]."""
    inside = [p for p in points if start <= p["t"] <= end]
    return (inside[0], inside[-1]) if len(inside) >= 2 else (None, None)


def half(points, start, end):
    """A half's figures, as flip's table reads a run."""
    lo, hi = window(points, start, end)
    if lo is None:
        raise RunError("too few scrapes of /metrics between %.1f and %.1f s" % (start, end))
    secs, n = hi["t"] - lo["t"], hi["requests"] - lo["requests"]
    cpu = hi["cpu"] - lo["cpu"]
    r = {"rps": n / secs, "errors": int(hi["errors"] - lo["errors"]), "seconds": secs,
         "cpu_pct": 100.0 * cpu / secs, "cpu_us_req": 1e6 * cpu / n if n else None,
         "kb_req": None, "pg_pct": None, "pg_us_req": None, "success": None}
    r.update({k: quantile(q, lo, hi) for k, q in QUANTILES})
    return r


def curve(points, t0):
    """Per-scrape rows for the PNG: t, rps, p50/p95/p99, error_pct, users."""
    rows = []
    for lo, hi in zip(points, points[1:]):
        secs, n = hi["t"] - lo["t"], hi["requests"] - lo["requests"]
        if secs <= 0:
            continue
        row = {"t": hi["t"] - t0, "rps": n / secs, "users": 0,
               "error_pct": 100.0 * (hi["errors"] - lo["errors"]) / n if n else 0.0}
        row.update({k: quantile(q, lo, hi) for k, q in QUANTILES})
        rows.append(row)
    return rows


def run(args, target, scenario, plan, admin, token):
    """The live run: warm-up, then 2 x --duration of load with the change at the half. Returns
    ({"off": [r], "on": [r]}, curve rows, the change's time on the curve, the load's own result)."""
    off, on = values(args, plan)
    was = admin.check_live(args.flag)
    admin.set(args.flag, off)
    try:
        return _run(args, target, scenario, admin, token, off, on)
    finally:
        admin.set(args.flag, was)  # as it was before flip, as a restart flip restores its flags


def _run(args, target, scenario, admin, token, off, on):
    base = os.path.join(target.out, "live")
    load.warm_up(args, target, scenario, "live", base, token)
    scraper = Scraper(target.url, tiers.tree(target.pids(), procs.children_map()))
    scraper.start()
    pg = target.pg_pid()
    sampler = tiers.Sampler({"web": target.pids(), "db": [pg] if pg else []}).start()  # CPU per tier over time
    time.sleep(2 * SCRAPE_S)
    t0, total = time.monotonic(), 2 * args.duration
    whole = dict(vars(args), duration=total)
    outcome = {}

    def drive():
        try:
            outcome["load"] = load.run_load(type(args)(**whole), target.url, scenario, base, token)
        except Exception as e:  # noqa: BLE001  (reported on the main thread)
            outcome["error"] = e
    driver = threading.Thread(target=drive, daemon=True)
    log("live: %g s of load, --%s %s, then %s at %g s" % (total, args.flag, off, on, args.duration))
    driver.start()
    time.sleep(max(0.0, t0 + args.duration - time.monotonic()))
    t_change = time.monotonic()
    admin.set(args.flag, on)
    log("live: --%s %s (%.1f s into the load)" % (args.flag, on, t_change - t0))
    driver.join(total + 120)
    scraper.stop.set()
    scraper.join(5)
    _, signals = sampler.stop()
    if "error" in outcome:
        raise outcome["error"]
    t_end = t0 + total
    results = {"off": half(scraper.points, t0, t_change), "on": half(scraper.points, t_change + args.warmup, t_end)}
    flags = metrics.fetch_flags(target.url) or "(no sutlab_build_info)"
    for label, r in results.items():
        r["build_flags"] = flags if label == "on" else flags.replace("--%s=%s" % (args.flag, on),
                                                                     "--%s=%s" % (args.flag, off))
        r["verdict"] = ""
    # the sampler's looks split at the change: the off half's, then the on half's from the change
    timeline = signals["timeline"]
    results["off"]["cpu_timeline"] = [p for p in timeline if p[0] <= t_change]
    results["on"]["cpu_timeline"] = [p for p in timeline if p[0] >= t_change]
    rows = curve(scraper.points, t0)
    write_csv(os.path.join(target.out, "live.csv"), rows, t_change - t0)
    return {k: [v] for k, v in results.items()}, rows, t_change - t0, outcome.get("load")


def write_csv(path, rows, t_change):
    """OUT/live.csv: the curve, a row per scrape; `after` is 1 from the change on."""
    with open(path, "w") as f:
        f.write("t,rps,p50_ms,p95_ms,p99_ms,error_pct,after\n")
        for r in rows:
            f.write("%.2f,%.1f,%s,%s,%s,%.3f,%d\n" % (
                r["t"], r["rps"], *("" if r[k] is None else "%.3f" % r[k] for k in ("p50", "p95", "p99")),
                r["error_pct"], r["t"] >= t_change))


def describe(args, t_change):
    return ("one load of %g s; the flag changed through the admin listener at %.1f s; off: the first half, "
            "on: from %g s after the change (the new state's warm-up left out) to the end; figures from "
            "sutlab's /metrics scraped every %g s (latency quantiles interpolated within a histogram bucket)"
            % (2 * args.duration, t_change, args.warmup, SCRAPE_S))


def png(rows, t_change, path, size, title, flag, flags_text):
    """One curve, the change marked."""
    s = series.Series("live", "/metrics", "server histogram, per %g s" % SCRAPE_S)
    s.rows = rows
    return plots.plot_time(s, path, size, title, flags_text, marks=[(t_change, "--%s on" % flag)])
