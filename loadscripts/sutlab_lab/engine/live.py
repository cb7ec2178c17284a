"""Live arms: one load runs throughout, and each arm's change is applied to the running server
through the target's admin listener (sutlab's PUT /admin/flags/NAME, docs/admin-api.md) at its
point of the run, so the arms are stretches of one curve rather than runs either side of a
restart.

    arms = [Arm("off", live={"redis-cache": "off"}), Arm("on", live={"redis-cache": "on"})]
    rows, run = run_live(target, arms, load=lambda seconds: wrk(seconds), seconds=10, settle=2)
    rows["on"]     # [the figures from 2 s after the change to the end of the load]
    run.points     # every scrape of /metrics; run.t0 the load's start; run.changes [(arm, time)]

The first arm's change is made before the warm-up, arm k's (k >= 1) at k x `seconds` into one
load of len(arms) x `seconds`. The target needs url, pids(), pg_pid() and `admin` (an Admin).
The samplers are the engine's: the server's own counters (/metrics, every SCRAPE_S: requests
completed without /metrics itself, responses >= 400, the latency histogram, its CPU time, the
flags in force) give each arm's row, and tiers.Sampler the CPU per tier over time, split at the
changes. The flags are set back as they were at the end, whatever happened.
"""

import json
import secrets
import threading
import time
import urllib.error
import urllib.request

from .. import tiers
from ..services import metrics
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
        """The flag's value in force; RunError when it does not change live."""
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
    """What a server the engine spawns gets for live arms: an admin listener on a free loopback
    port with a random token; (flags, Admin)."""
    port, token = procs.free_port(), secrets.token_hex(32)
    return (["--admin-listen", "127.0.0.1:%d" % port, "--admin-token", token],
            Admin("http://127.0.0.1:%d" % port, token))


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
    """A scrape (metrics.Metrics) at time t, the server's CPU seconds then: what the figures read,
    and the flags in force (sutlab_build_info's label, which follows a live change)."""
    app = [(lbl, v) for lbl, v in m.samples("http_requests_total") if lbl.get("route") != "/metrics"]
    buckets = {}
    for lbl, v in m.samples("http_request_duration_seconds_bucket"):
        if lbl.get("route") != "/metrics":
            le = float(lbl["le"])
            buckets[le] = buckets.get(le, 0.0) + v
    info = m.samples("sutlab_build_info")
    return {"t": t, "requests": sum(v for _, v in app),
            "errors": sum(v for lbl, v in app if lbl.get("code", "0")[:1] in ("4", "5")),
            "buckets": buckets, "cpu": cpu, "flags": info[0][0].get("flags") if info else None}


def quantile(q, lo, hi):
    """The q-quantile in ms of the requests between two scrapes' cumulative buckets (interpolated
    within a bucket, as Prometheus's histogram_quantile does)."""
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


def stretch(points, start, end):
    """The figures of the scrapes within [start, end], as a measured run's row (sutlab_lab's
    result shape: what the load tool does not say, None); build_flags, the flags the last of
    them reported (None when the server does not say)."""
    lo, hi = window(points, start, end)
    if lo is None:
        raise RunError("too few scrapes of /metrics between %.1f and %.1f s" % (start, end))
    secs, n = hi["t"] - lo["t"], hi["requests"] - lo["requests"]
    cpu = hi["cpu"] - lo["cpu"]
    r = {"rps": n / secs, "errors": int(hi["errors"] - lo["errors"]), "seconds": secs,
         "cpu_pct": 100.0 * cpu / secs, "cpu_us_req": 1e6 * cpu / n if n else None,
         "kb_req": None, "pg_pct": None, "pg_us_req": None, "success": None, "build_flags": hi.get("flags")}
    r.update({k: quantile(q, lo, hi) for k, q in QUANTILES})
    return r


class LiveRun:
    """What one live run saw: points (every scrape), t0 (the load's start, time.monotonic()),
    changes [(arm name, when its change was made)] (the first arm's: t0), load (the load's own
    result)."""

    def __init__(self, points, t0, changes, load):
        self.points, self.t0, self.changes, self.load = points, t0, changes, load


def shown(live, first=None):
    """A live change as a log line says it: `--flag value`, or only the values when the flags
    are the first arm's."""
    live = live or {}
    if first is not None and list(live) == list(first):
        return " ".join(str(v) for v in live.values())
    return " ".join("--%s %s" % (f, v) for f, v in live.items())


def apply_live(admin, live):
    """Each flag of `live` ({flag: value}, or None: nothing) set through the admin listener."""
    for flag, value in (live or {}).items():
        admin.set(flag, value)


def state_before(target, arms):
    """(the target's admin listener, {flag: its value in force} of every flag the arms change
    live), before any change: what is set back at the end. (None, {}) when no arm is live;
    RunError when the target has no admin listener or a flag does not change live."""
    if not any(arm.live for arm in arms):
        return None, {}
    admin = getattr(target, "admin", None)
    if admin is None:
        raise RunError("live arms need the target's admin listener")
    was = {}
    for arm in arms:
        for flag in arm.live or {}:
            if flag not in was:
                was[flag] = admin.check_live(flag)
    return admin, was


def run_live(target, arms, load, seconds, settle=0.0, warm=None, log=None):
    """The arms as stretches of one load of len(arms) x `seconds` on the target: the first
    arm's live change, warm() (unmeasured), the samplers, then load(total seconds) -> its result
    in a thread while arm k's change is made at k x `seconds`. Arm k's row: the scrapes from its
    change + `settle` (the new state's warm-up; the first arm's from the load's start) to the
    next change or the end, with cpu_timeline its share of the tiers' sampled CPU. The flags
    are set back as they were, whatever happened. Returns ({name: [row]}, LiveRun)."""
    admin, was = state_before(target, arms)
    apply_live(admin, arms[0].live)
    try:
        if warm is not None:
            warm()
        run, timeline = _drive(target, admin, arms, load, seconds, log)
    finally:
        apply_live(admin, was)  # as they were before, as a restart's target restores its flags
    bounds = [t for _, t in run.changes[1:]]
    rows = {}
    for k, arm in enumerate(arms):
        start = run.t0 if k == 0 else bounds[k - 1] + settle
        end = bounds[k] if k < len(bounds) else run.t0 + len(arms) * seconds
        row = stretch(run.points, start, end)
        row["cpu_timeline"] = [p for p in timeline if (k == 0 or p[0] >= bounds[k - 1])
                               and (k == len(bounds) or p[0] <= bounds[k])]
        rows[arm.name] = [row]
    return rows, run


def _drive(target, admin, arms, load, seconds, log):
    """The samplers around one load in a thread, each later arm's change at its time: (LiveRun,
    the tiers' CPU timeline)."""
    say = log or (lambda msg: None)
    scraper = Scraper(target.url, tiers.tree(target.pids(), procs.children_map()))
    scraper.start()
    pg = target.pg_pid()
    sampler = tiers.Sampler({"web": target.pids(), "db": [pg] if pg else []}).start()  # CPU per tier over time
    time.sleep(2 * SCRAPE_S)  # a scrape before the load starts
    t0, total, outcome = time.monotonic(), len(arms) * seconds, {}

    def drive():
        try:
            outcome["load"] = load(total)
        except Exception as e:  # noqa: BLE001  (raised on the caller's thread)
            outcome["error"] = e
    driver = threading.Thread(target=drive, daemon=True)
    say("live: %g s of load, %s%s" % (total, shown(arms[0].live), "".join(
        ", then %s at %g s" % (shown(arm.live, arms[0].live), k * seconds) for k, arm in enumerate(arms) if k)))
    driver.start()
    changes = [(arms[0].name, t0)]
    try:
        for k, arm in enumerate(arms[1:], 1):
            time.sleep(max(0.0, t0 + k * seconds - time.monotonic()))
            changes.append((arm.name, time.monotonic()))
            apply_live(admin, arm.live)
            say("live: %s (%.1f s into the load)" % (shown(arm.live), changes[-1][1] - t0))
        driver.join(total + 120)
    finally:
        scraper.stop.set()
        scraper.join(5)
        _, signals = sampler.stop()
    if "error" in outcome:
        raise outcome["error"]
    return LiveRun(scraper.points, t0, changes, outcome.get("load")), signals["timeline"]
