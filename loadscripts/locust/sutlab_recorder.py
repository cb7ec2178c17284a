"""The per-second recorder of sutlab's Locust files, and the flags file.

With --csv PREFIX it writes
  PREFIX_seconds.csv  one row per second: users, requests, failures, req/s and the exact
                      p50/p95/p99 of the requests that completed in that second (Locust 2.12's own
                      history rows carry percentiles cumulated since the start of the run), and
                      the second's histogram of rounded response times (`ms:count ...`), so that
                      a span of seconds gets its own percentiles, not a median of the seconds';
  PREFIX_steps.csv    one row per user level (a step of the step shape), its first
                      --step-settle seconds left out: req/s, error %, p50/p95/p99 over the level;
  PREFIX_flags.txt    the flags in force, from the target's /metrics sutlab_build_info;
  PREFIX_workers.csv  in distributed mode, one row per worker: its id and the requests it reported
                      (each worker's share of the load: loadscripts/steps --load-workers).
In distributed mode the workers send their per-second bins to the master with their stats reports
(every 3 s); the master writes the files. Imported (and so registered) by sutlab_locust.py.
"""

import csv
import logging
import os
import sys
import time
from collections import Counter

import gevent
from locust import events
from locust.runners import MasterRunner, WorkerRunner

from sutlab_options import opt

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sutlab_lab import stats  # noqa: E402
from sutlab_lab.services import metrics  # noqa: E402

log = logging.getLogger("sutlab")


def rt_key(ms):
    """Response time rounded to a histogram bucket (0.01 ms under 1 ms, 0.1 under 10, 1 under 100, ...)."""
    if ms < 1:
        return round(ms, 2)
    if ms < 10:
        return round(ms, 1)
    if ms < 100:
        return float(round(ms))
    if ms < 1000:
        return float(round(ms, -1))
    return float(round(ms, -2))


class Bin:
    """The requests of one second (or one user level): counts, sum, max and a histogram of
    rounded response times, small enough to send from a worker to the master."""

    __slots__ = ("n", "fail", "sum", "max", "hist")

    def __init__(self):
        self.n = 0
        self.fail = 0
        self.sum = 0.0
        self.max = 0.0
        self.hist = Counter()

    def add(self, ms, failed):
        self.n += 1
        self.fail += 1 if failed else 0
        self.sum += ms
        if ms > self.max:
            self.max = ms
        self.hist[rt_key(ms)] += 1

    def merge(self, n, fail, total, mx, pairs):
        self.n += n
        self.fail += fail
        self.sum += total
        self.max = max(self.max, mx)
        for k, c in pairs:
            self.hist[float(k)] += c

    def percentile(self, p):
        """Nearest rank over the rounded buckets, never above the exact maximum."""
        v = stats.counts_percentile(self.hist, p)
        return None if v is None else min(v, self.max)

    def dump(self):
        return [self.n, self.fail, self.sum, self.max, [[k, c] for k, c in self.hist.items()]]


SECONDS_COLUMNS = ["timestamp", "users", "requests", "failures", "rps", "failures_per_s",
                   "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms", "histogram"]
STEPS_COLUMNS = ["users", "seconds", "requests", "failures", "rps", "error_pct",
                 "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms"]


def _fmt(v, nd=1):
    return "" if v is None else ("%.*f" % (nd, v))


class Recorder:
    """Bins every request by the second it completed in; writes PREFIX_seconds.csv and
    PREFIX_steps.csv (master or local runner only)."""

    def __init__(self):
        self.environment = None
        self.prefix = None
        self.bins = {}        # second -> Bin, not yet written (local/master) or not yet sent (worker)
        self.users_at = {}    # second -> user count sampled then (local/master)
        self.levels = {}      # user count -> [Bin, seconds]
        self.by_worker = Counter()  # worker id -> requests it reported (master)
        self.level = None     # (user count, first second at that count)
        self.last_written = None
        self.f = None
        self.w = None
        self.greenlet = None
        self.lag = 1.5
        self.late = 0
        self.started = self.stopped = None

    # events

    def on_init(self, environment, runner, **_kw):
        self.environment = environment
        po = environment.parsed_options
        self.prefix = getattr(po, "csv_prefix", None) if po else None
        if isinstance(runner, MasterRunner):
            from locust.runners import WORKER_REPORT_INTERVAL
            self.lag = WORKER_REPORT_INTERVAL + 2.5
        environment.events.request.add_listener(self.on_request)
        if isinstance(runner, WorkerRunner):
            environment.events.report_to_master.add_listener(self.on_report_to_master)
        else:
            environment.events.worker_report.add_listener(self.on_worker_report)
            environment.events.test_start.add_listener(self.on_test_start)
            environment.events.test_stop.add_listener(self.on_test_stop)
            environment.events.quitting.add_listener(self.on_quitting)

    def on_request(self, response_time=None, exception=None, start_time=None, **_kw):
        if response_time is None:
            return
        now = time.time()
        # FastHttpUser (2.12) reports int(ms), truncated: measure from start_time (time.time()
        # when the request began) for sub-millisecond resolution when it is there.
        ms = (now - start_time) * 1000.0 if start_time else float(response_time)
        sec = int(now)
        b = self.bins.get(sec)
        if b is None:
            b = self.bins[sec] = Bin()
        b.add(ms, exception is not None)

    def on_report_to_master(self, client_id=None, data=None, **_kw):
        if data is None:
            return
        data["sutlab_seconds"] = [[sec, b.dump()] for sec, b in self.bins.items()]
        self.bins = {}

    def on_worker_report(self, client_id=None, data=None, **_kw):
        for sec, (n, fail, total, mx, pairs) in (data or {}).get("sutlab_seconds", []):
            self.by_worker[client_id] += n
            b = self.bins.get(sec)
            if b is None:
                b = self.bins[sec] = Bin()
            b.merge(n, fail, total, mx, pairs)

    def on_test_start(self, environment, **_kw):
        write_flags_file(environment, self.prefix)
        if not self.prefix:
            return
        if self.f is None:
            path = self.prefix + "_seconds.csv"
            self.f = open(path, "w", newline="")
            self.w = csv.writer(self.f)
            self.w.writerow(SECONDS_COLUMNS)
            self.f.flush()
        self.started, self.stopped = time.time(), None
        if self.greenlet is None:
            self.greenlet = gevent.spawn(self._ticker)

    def on_test_stop(self, environment, **_kw):
        self.stopped = time.time()
        self.flush(final=True)

    def on_quitting(self, environment, **_kw):
        self.flush(final=True)
        if self.greenlet is not None:
            self.greenlet.kill(block=False)
            self.greenlet = None
        if self.f is not None:
            self.f.close()
            self.f = None
        self.write_steps()
        self.write_workers()
        if self.late:
            log.warning("sutlab: %d requests reached the master after their second was written to "
                        "%s_seconds.csv and are missing there", self.late, self.prefix)

    # writing

    def _sample_users(self):
        runner = self.environment.runner if self.environment else None
        if runner is not None and self.stopped is None:
            # the first sample in a second labels it (the count when the second began, about)
            self.users_at.setdefault(int(time.time()), runner.user_count)

    def _ticker(self):
        while True:
            self._sample_users()
            self.flush(final=False)
            gevent.sleep(0.5)

    def _users_for(self, sec):
        for s in range(sec, sec - 30, -1):
            if s in self.users_at:
                return self.users_at[s]
        return 0

    def flush(self, final):
        if self.w is None:
            return
        limit = time.time() - self.lag
        if self.last_written is not None:
            for sec in [s for s in self.bins if s <= self.last_written]:
                self.late += self.bins.pop(sec).n  # reported after its second was written
        ready = sorted(s for s in self.bins if final or s + 1 <= limit)
        if not ready:
            return
        start = ready[0] if self.last_written is None else self.last_written + 1
        for sec in range(start, ready[-1] + 1):
            b = self.bins.pop(sec, None) or Bin()
            users = self._users_for(sec)
            self._write_second(sec, users, b)
            self.last_written = sec
        self.f.flush()

    def _write_second(self, sec, users, b):
        p = lambda q: b.percentile(q)  # noqa: E731
        # the first and last seconds of a run are partly covered: rates per covered second
        lo = max(sec, self.started or sec)
        hi = min(sec + 1, self.stopped or sec + 1)
        covered = hi - lo if hi - lo >= 0.2 else 1.0
        self.w.writerow([sec, users, b.n, b.fail, _fmt(b.n / covered, 2), _fmt(b.fail / covered, 2),
                         _fmt(p(50), 2), _fmt(p(95), 2), _fmt(p(99), 2),
                         _fmt(b.max if b.n else None, 2), _fmt(b.sum / b.n if b.n else None, 3),
                         " ".join("%g:%d" % (k, c) for k, c in sorted(b.hist.items()))])
        # user levels (for the step table): a level starts when the user count changes
        if self.level is None or self.level[0] != users:
            self.level = (users, sec)
        settle = float(opt(self.environment, "step_settle"))
        if users > 0 and sec - self.level[1] >= settle:
            agg = self.levels.setdefault(users, [Bin(), 0])
            agg[0].merge(b.n, b.fail, b.sum, b.max, b.hist.items())
            agg[1] += 1

    def write_steps(self):
        if not self.prefix or not self.levels:
            return
        with open(self.prefix + "_steps.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(STEPS_COLUMNS)
            for users in sorted(self.levels):
                b, secs = self.levels[users]
                p = lambda q: b.percentile(q)  # noqa: E731
                w.writerow([users, secs, b.n, b.fail, _fmt(b.n / secs if secs else None, 2),
                            _fmt(100.0 * b.fail / b.n if b.n else None, 3),
                            _fmt(p(50), 2), _fmt(p(95), 2), _fmt(p(99), 2),
                            _fmt(b.max if b.n else None, 2), _fmt(b.sum / b.n if b.n else None, 3)])

    def write_workers(self):
        if not self.prefix or not self.by_worker:
            return
        with open(self.prefix + "_workers.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["worker", "requests"])
            for worker, n in sorted(self.by_worker.items()):
                w.writerow([worker, n])


RECORDER = Recorder()
events.init.add_listener(RECORDER.on_init)


def write_flags_file(environment, prefix):
    if not prefix or not environment.host:
        return
    flags = metrics.fetch_flags(environment.host)
    with open(prefix + "_flags.txt", "w") as f:
        f.write((flags if flags is not None else "(flags unknown: no sutlab_build_info at %s/metrics)"
                 % environment.host) + "\n")
