"""Shared parts of sutlab's Locust files (Debian python3-locust 2.12, run with /usr/bin/locust).

Imported by locustfile.py, scenario.py, stores.py and stepload.py; not a locustfile itself.

- Command-line options (also settable through environment variables), shown by
  `locust -f loadscripts/locust/locustfile.py --help` under "sutlab":
    --fixture-users N     users log in as user<1..N>@example.com / password  (SUTLAB_FIXTURE_USERS, 10 = tiny)
    --think-time S|A-B    wait between tasks, seconds, fixed or uniform      (SUTLAB_THINK_TIME, 0)
    --login auto|always|never                                              (SUTLAB_LOGIN, auto)
    --slug-pages N        pages of 100 articles whose slugs are sampled      (SUTLAB_SLUG_PAGES, 5)
    --index-pages N       list_articles reads a random page among the first N (SUTLAB_INDEX_PAGES, 1)
    --cpu-ms N            work_cpu burns N ms per request                    (SUTLAB_CPU_MS, 10)
    --echo-bytes N        rpc_echo payload size                              (SUTLAB_ECHO_BYTES, 100)
    --accept-encoding V   Accept-Encoding sent ("identity" turns gzip off)   (SUTLAB_ACCEPT_ENCODING, "gzip, deflate")
    --step-size/--step-hold/--steps/--step-rate: the step shape (stepload.py)
- 1-second CSV flushing: Locust 2.12 writes a `_stats_history.csv` row every second but flushes
  the file only every 10 s; CSV_STATS_FLUSH_INTERVAL_SEC is lowered to 1 here.
- A per-second recorder: with --csv PREFIX it also writes
    PREFIX_seconds.csv  one row per second: users, requests, failures, req/s and the exact
                        p50/p95/p99 of the requests that completed in that second (Locust 2.12's own
                        history rows carry percentiles cumulated since the start of the run);
    PREFIX_steps.csv    one row per user level (a step of the step shape), its first
                        --step-settle seconds left out: req/s, error %, p50/p95/p99 over the level;
    PREFIX_flags.txt    the flags in force, from the target's /metrics sutlab_build_info.
  In distributed mode the workers send their per-second bins to the master with their stats
  reports (every 3 s); the master writes the files.
"""

import csv
import json
import logging
import os
import random
import re
import threading
import time
import urllib.request
from collections import Counter

import gevent
import locust.runners
import locust.stats
from locust import events
from locust.contrib.fasthttp import FastHttpUser
from locust.runners import MasterRunner, WorkerRunner

# Locust 2.12 flushes the CSV files every 10 s: 1-second history rows reach the disk every second.
locust.stats.CSV_STATS_FLUSH_INTERVAL_SEC = 1

# Debian's python3-locust 2.12.1 has an empty __version__; a worker announces itself with it and
# the master refuses it as "an old (pre 2.0) worker": distributed mode cannot start. Give the
# runners a version (master and workers both import this module, so both say the same).
if not getattr(locust.runners, "__version__", "x"):
    locust.runners.__version__ = "2.12.1"

log = logging.getLogger("sutlab")

DEFAULTS = {
    "fixture_users": ("SUTLAB_FIXTURE_USERS", "10"),
    "think_time": ("SUTLAB_THINK_TIME", "0"),
    "login": ("SUTLAB_LOGIN", "auto"),
    "slug_pages": ("SUTLAB_SLUG_PAGES", "5"),
    "index_pages": ("SUTLAB_INDEX_PAGES", "1"),
    "cpu_ms": ("SUTLAB_CPU_MS", "10"),
    "echo_bytes": ("SUTLAB_ECHO_BYTES", "100"),
    "accept_encoding": ("SUTLAB_ACCEPT_ENCODING", "gzip, deflate"),
    "step_size": ("SUTLAB_STEP_SIZE", "10"),
    "step_hold": ("SUTLAB_STEP_HOLD", "30"),
    "steps": ("SUTLAB_STEPS", "5"),
    "step_rate": ("SUTLAB_STEP_RATE", "0"),
    "step_settle": ("SUTLAB_STEP_SETTLE", "2"),
}

# Tags whose tasks need a session token.
AUTH_TAGS = {"store_article", "like", "comment"}


def _default(name):
    env, value = DEFAULTS[name]
    return os.environ.get(env, value)


@events.init_command_line_parser.add_listener
def _add_arguments(parser, **_kw):
    g = parser.add_argument_group("sutlab", "options of loadscripts/locust (environment variable in brackets)")
    g.add_argument("--fixture-users", type=int, default=int(_default("fixture_users")), metavar="N",
                   help="log in as a random user<1..N>@example.com / password: 10 tiny, 1000 small, "
                        "10000 medium, 100000 large [SUTLAB_FIXTURE_USERS] (default %(default)s)")
    g.add_argument("--think-time", default=_default("think_time"), metavar="S|MIN-MAX",
                   help="seconds between two tasks of a user: fixed, or uniform in MIN-MAX "
                        "[SUTLAB_THINK_TIME] (default %(default)s)")
    g.add_argument("--login", choices=("auto", "always", "never"), default=_default("login"),
                   help="log in on start: auto = only when a selected task needs a token "
                        "(store_article, like, comment, or a scenario user) [SUTLAB_LOGIN] (default %(default)s)")
    g.add_argument("--slug-pages", type=int, default=int(_default("slug_pages")), metavar="N",
                   help="article slugs are sampled from the newest N*100 articles "
                        "[SUTLAB_SLUG_PAGES] (default %(default)s)")
    g.add_argument("--index-pages", type=int, default=int(_default("index_pages")), metavar="N",
                   help="list_articles reads page 0..N-1 (limit 20) at random [SUTLAB_INDEX_PAGES] "
                        "(default %(default)s)")
    g.add_argument("--cpu-ms", type=int, default=int(_default("cpu_ms")), metavar="MS",
                   help="work_cpu: GET /work/cpu?ms=MS [SUTLAB_CPU_MS] (default %(default)s)")
    g.add_argument("--echo-bytes", type=int, default=int(_default("echo_bytes")), metavar="N",
                   help="rpc_echo: size of the payload string [SUTLAB_ECHO_BYTES] (default %(default)s)")
    g.add_argument("--accept-encoding", default=_default("accept_encoding"), metavar="VALUE",
                   help="Accept-Encoding of every request; 'identity' asks for no compression "
                        "[SUTLAB_ACCEPT_ENCODING] (default %(default)s)")
    g.add_argument("--step-size", type=int, default=int(_default("step_size")), metavar="N",
                   help="step shape (stepload.py): users added per step [SUTLAB_STEP_SIZE] (default %(default)s)")
    g.add_argument("--step-hold", default=_default("step_hold"), metavar="SECONDS",
                   help="step shape: how long each step is held, seconds (30, 2.5, 30s, 2m) "
                        "[SUTLAB_STEP_HOLD] (default %(default)s)")
    g.add_argument("--steps", type=int, default=int(_default("steps")), metavar="N",
                   help="step shape: number of steps; the run lasts steps x step-hold [SUTLAB_STEPS] "
                        "(default %(default)s)")
    g.add_argument("--step-rate", type=float, default=float(_default("step_rate")),
                   metavar="USERS/S",
                   help="step shape: spawn rate within a step; 0 = the whole step within one second "
                        "[SUTLAB_STEP_RATE] (default %(default)s)")
    g.add_argument("--step-settle", type=float, default=float(_default("step_settle")), metavar="SECONDS",
                   help="seconds at the start of each user level left out of PREFIX_steps.csv "
                        "[SUTLAB_STEP_SETTLE] (default %(default)s)")


def opt(environment, name):
    """A sutlab option from the parsed command line, else its environment/default value."""
    po = getattr(environment, "parsed_options", None)
    if po is not None and hasattr(po, name):
        return getattr(po, name)
    value = _default(name)
    if name in ("think_time", "login", "accept_encoding", "step_hold"):
        return value
    if name in ("step_rate", "step_settle"):
        return float(value)
    return int(value)


def parse_seconds(text):
    """'30', '2.5', '30s', '2m', '1m30s' -> seconds (float)."""
    text = str(text).strip()
    try:
        return float(text)
    except ValueError:
        pass
    m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?", text)
    if not text or not m:
        raise ValueError("not a duration: %r (use 30, 2.5, 30s, 2m)" % text)
    h, mi, s = (float(x) if x else 0.0 for x in m.groups())
    return h * 3600 + mi * 60 + s


def parse_think(text):
    text = str(text).strip()
    if "-" in text:
        a, b = text.split("-", 1)
        lo, hi = float(a), float(b)
    else:
        lo = hi = float(text)
    if lo < 0 or hi < lo:
        raise ValueError("bad --think-time %r" % text)
    return lo, hi


# ---------------------------------------------------------------------------------------------
# Data the tasks pick from, fetched once per process outside Locust's statistics.

class Pools:
    """Slugs, store categories and store ids of the target, fetched lazily with urllib (so the
    set-up requests stay out of the statistics), once per process."""

    def __init__(self):
        self.lock = threading.Lock()  # gevent-patched: a greenlet lock
        self.host = None
        self.slugs = []
        self.categories = []
        self.stores = {}     # category id -> [store ids]
        self.store_ids = []

    def _get(self, path):
        with urllib.request.urlopen(self.host.rstrip("/") + path, timeout=10) as r:
            return json.loads(r.read().decode("utf-8"))

    def ensure_slugs(self, host, pages):
        with self.lock:
            if self.slugs and self.host == host:
                return self.slugs
            self.host = host
            slugs = []
            for page in range(max(1, pages)):
                try:
                    doc = self._get("/api/articles?limit=100&offset=%d" % (page * 100))
                except Exception as e:  # noqa: BLE001 - reported, the tasks then fail visibly
                    log.warning("sutlab: could not list articles at %s: %s", host, e)
                    break
                batch = [a["slug"] for a in doc.get("articles", [])]
                slugs += batch
                if len(batch) < 100:
                    break
            self.slugs = slugs or ["no-article-found"]
            return self.slugs

    def ensure_stores(self, host):
        with self.lock:
            if self.categories and self.host == host:
                return
            self.host = host
            try:
                cats = [c["id"] for c in self._get("/stores/categories")]
                stores = {c: [s["id"] for s in self._get("/stores?categoryId=%d" % c)] for c in cats}
            except Exception as e:  # noqa: BLE001
                log.warning("sutlab: could not list stores at %s: %s", host, e)
                cats, stores = [1], {1: [1]}
            self.categories = cats or [1]
            self.stores = stores
            self.store_ids = sorted(i for ids in stores.values() for i in ids) or [1]


POOLS = Pools()


# ---------------------------------------------------------------------------------------------
# The user base class: actions shared by every user class.

class SutlabUser(FastHttpUser):
    """Actions on sutlab's endpoints; subclasses turn them into (tagged or weighted) tasks."""

    abstract = True
    needs_login = False   # scenario users always log in (unless --login never)

    def wait_time(self):
        lo, hi = parse_think(opt(self.environment, "think_time"))
        return lo if lo == hi else random.uniform(lo, hi)

    # -- session

    def on_start(self):
        self.token = None
        self.username = None
        self.headers = {"Accept-Encoding": opt(self.environment, "accept_encoding")}
        mode = opt(self.environment, "login")
        if mode == "always" or (mode == "auto" and self._wants_login()):
            self.login()

    def on_stop(self):
        if self.token:
            self.logout()

    def _wants_login(self):
        if self.needs_login:
            return True
        for t in self.tasks:
            if getattr(t, "locust_tag_set", set()) & AUTH_TAGS:
                return True
        return False

    def auth(self, extra=None):
        h = dict(self.headers)
        if self.token:
            h["Authorization"] = "Token " + self.token
        if extra:
            h.update(extra)
        return h

    def login(self):
        n = random.randint(1, max(1, opt(self.environment, "fixture_users")))
        body = {"user": {"email": "user%d@example.com" % n, "password": "password"}}
        with self.client.post("/api/users/login", json=body, headers=self.headers,
                              name="/api/users/login", catch_response=True) as r:
            if r.status_code != 200:
                r.failure("login as user%d: HTTP %s" % (n, r.status_code))
                self.token = None
                return False
            try:
                user = r.json()["user"]
                self.token, self.username = user["token"], user["username"]
            except (ValueError, KeyError, TypeError) as e:
                r.failure("login answer without user.token: %s" % e)
                return False
        return True

    def logout(self):
        self.client.post("/api/users/logout", headers=self.auth(), name="/api/users/logout")
        self.token = None

    # -- data

    def random_slug(self):
        return random.choice(POOLS.ensure_slugs(self.host, opt(self.environment, "slug_pages")))

    def random_category(self):
        POOLS.ensure_stores(self.host)
        return random.choice(POOLS.categories)

    def random_store(self, category=None):
        POOLS.ensure_stores(self.host)
        if category is not None and POOLS.stores.get(category):
            return random.choice(POOLS.stores[category])
        return random.choice(POOLS.store_ids)

    # -- actions (one or two requests each)

    def health_check(self):
        self.client.get("/health_check", headers=self.headers)

    def static_file(self):
        self.client.get("/status.txt", headers=self.headers)

    def show_article(self, slug=None):
        self.client.get("/api/articles/%s" % (slug or self.random_slug()), headers=self.auth(),
                        name="/api/articles/:slug")

    def show_comments(self, slug=None):
        self.client.get("/api/articles/%s/comments" % (slug or self.random_slug()), headers=self.auth(),
                        name="/api/articles/:slug/comments")

    def list_articles(self):
        page = random.randrange(max(1, opt(self.environment, "index_pages")))
        self.client.get("/api/articles?limit=20&offset=%d" % (page * 20), headers=self.auth(),
                        name="/api/articles?limit=20&offset=:k")

    def store_article(self):
        word = "%08x" % random.getrandbits(32)
        body = {"article": {"title": "Load test %s" % word, "description": "written by Locust",
                            "body": "A body written by a Locust user (%s)." % word,
                            "tagList": ["locust"]}}
        self.client.post("/api/articles", json=body, headers=self.auth(), name="/api/articles [POST]")

    def like(self, slug=None):
        slug = slug or self.random_slug()
        self.client.post("/api/articles/%s/favorite" % slug, headers=self.auth(),
                         name="/api/articles/:slug/favorite")

    def unlike(self, slug=None):
        slug = slug or self.random_slug()
        self.client.delete("/api/articles/%s/favorite" % slug, headers=self.auth(),
                           name="/api/articles/:slug/favorite")

    def comment(self, slug=None):
        body = {"comment": {"body": "Locust was here (%08x)." % random.getrandbits(32)}}
        self.client.post("/api/articles/%s/comments" % (slug or self.random_slug()), json=body,
                         headers=self.auth(), name="/api/articles/:slug/comments")

    def profile(self):
        n = random.randint(1, max(1, opt(self.environment, "fixture_users")))
        self.client.get("/api/profiles/user%d" % n, headers=self.auth(), name="/api/profiles/:username")

    def stores_categories(self):
        self.client.get("/stores/categories", headers=self.headers)

    def stores_listing(self, category=None):
        category = category if category is not None else self.random_category()
        self.client.get("/stores?categoryId=%d" % category, headers=self.headers,
                        name="/stores?categoryId=:id")
        return category

    def store_detail(self, store=None):
        self.client.get("/stores/%d" % (store if store is not None else self.random_store()),
                        headers=self.headers, name="/stores/:id")

    def rpc_echo(self):
        n = max(0, opt(self.environment, "echo_bytes"))
        body = {"id": random.getrandbits(31), "method": "echo", "payload": "x" * n}
        self.client.post("/rpc/echo", json=body, headers=self.headers)

    def work_cpu(self):
        self.client.get("/work/cpu?ms=%d" % opt(self.environment, "cpu_ms"), headers=self.headers,
                        name="/work/cpu?ms=:n")


# ---------------------------------------------------------------------------------------------
# Per-second recorder and the flags file.

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


def hist_percentile(hist, total, p):
    """The p-th percentile (0..100) of a {ms: count} histogram holding `total` samples."""
    if total <= 0:
        return None
    rank = max(1, int(-(-total * p // 100)))  # ceil(total * p / 100)
    seen = 0
    for k in sorted(hist):
        seen += hist[k]
        if seen >= rank:
            return k
    return max(hist)


class Bin:
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
        """From the rounded buckets, never above the exact maximum."""
        v = hist_percentile(self.hist, self.n, p)
        return None if v is None else min(v, self.max)

    def dump(self):
        return [self.n, self.fail, self.sum, self.max, [[k, c] for k, c in self.hist.items()]]


SECONDS_COLUMNS = ["timestamp", "users", "requests", "failures", "rps", "failures_per_s",
                   "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms"]
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
                         _fmt(b.max if b.n else None, 2), _fmt(b.sum / b.n if b.n else None, 3)])
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


RECORDER = Recorder()
events.init.add_listener(RECORDER.on_init)


BUILD_INFO_RE = re.compile(r'^sutlab_build_info\{([^}]*)\}', re.M)


def fetch_flags(host, timeout=3):
    """The flags label of the target's sutlab_build_info, or None."""
    try:
        with urllib.request.urlopen(host.rstrip("/") + "/metrics", timeout=timeout) as r:
            text = r.read().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001
        return None
    m = BUILD_INFO_RE.search(text)
    if not m:
        return None
    fm = re.search(r'flags="((?:[^"\\]|\\.)*)"', m.group(1))
    return fm.group(1).replace('\\"', '"').replace("\\\\", "\\") if fm else None


def write_flags_file(environment, prefix):
    if not prefix or not environment.host:
        return
    flags = fetch_flags(environment.host)
    with open(prefix + "_flags.txt", "w") as f:
        f.write((flags if flags is not None else "(flags unknown: no sutlab_build_info at %s/metrics)"
                 % environment.host) + "\n")
