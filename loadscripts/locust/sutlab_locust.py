"""Shared parts of sutlab's Locust files (Debian python3-locust 2.12, run with /usr/bin/locust):
the user base class with an action per endpoint, and the data its tasks pick from.

Imported by locustfile.py, scenario.py and stores.py; not a locustfile itself. Importing it also
brings in
- sutlab_options.py: the command-line options, shown by
  `locust -f loadscripts/locust/locustfile.py --help` under "sutlab" (environment variable, default):
    --fixture-users N     users log in as user<1..N>@example.com / password  (SUTLAB_FIXTURE_USERS, 10 = tiny)
    --think-time S|A-B    wait between tasks, seconds, fixed or uniform      (SUTLAB_THINK_TIME, the class's default_think)
    --login auto|always|never                                              (SUTLAB_LOGIN, auto)
    --slug-pages N        pages of 100 articles whose slugs are sampled      (SUTLAB_SLUG_PAGES, 5)
    --index-pages N       list_articles reads a random page among the first N (SUTLAB_INDEX_PAGES, 1)
    --cpu-ms N            work_cpu burns N ms per request                    (SUTLAB_CPU_MS, 10)
    --echo-bytes N        rpc_echo payload size                              (SUTLAB_ECHO_BYTES, 100)
    --accept-encoding V   Accept-Encoding sent ("identity" turns gzip off)   (SUTLAB_ACCEPT_ENCODING, "gzip, deflate")
    --step-size/--step-hold/--steps/--step-rate: the step shape (stepload.py)
    --ramp-up SECONDS     JMeter's ramp-up: -u users started evenly over SECONDS (SUTLAB_RAMP_UP, 0 = off)
    --print-responses [FILE|-]  every response written out, a blocking write each (SUTLAB_PRINT_RESPONSES, off)
    --client-cpu-us US    the load generator's own CPU a request, spent after each response (SUTLAB_CLIENT_CPU_US, 0)
- sutlab_recorder.py: with --csv PREFIX, PREFIX_seconds.csv (exact per-second percentiles),
  PREFIX_steps.csv (per user level) and PREFIX_flags.txt (the flags in force).
- sutlab_responses.py: --print-responses, the TPS-trend write-up's load script that printed every
  response synchronously.
- --ramp-up (below): the spawn rate set from the user count and the ramp-up time.
- 1-second CSV flushing: Locust 2.12 writes a `_stats_history.csv` row every second but flushes
  the file only every 10 s; CSV_STATS_FLUSH_INTERVAL_SEC is lowered to 1 here.
"""

import json
import logging
import random
import threading
import time
import urllib.request

import locust.runners
import locust.stats
from locust import events
from locust.contrib.fasthttp import FastHttpUser

import sutlab_recorder  # noqa: F401  (registers the recorder)
import sutlab_responses  # noqa: F401  (registers --print-responses)
from sutlab_options import opt, parse_think

# Locust 2.12 flushes the CSV files every 10 s: 1-second history rows reach the disk every second.
locust.stats.CSV_STATS_FLUSH_INTERVAL_SEC = 1

# Debian's python3-locust 2.12.1 has an empty __version__; a worker announces itself with it and
# the master refuses it as "an old (pre 2.0) worker": distributed mode cannot start. Give the
# runners a version (master and workers both import this module, so both say the same).
if not getattr(locust.runners, "__version__", "x"):
    locust.runners.__version__ = "2.12.1"

log = logging.getLogger("sutlab")


_CLIENT_CPU_S = [0.0]  # --client-cpu-us, in seconds, read once at init


@events.init.add_listener
def _client_cpu(environment, **_kw):
    _CLIENT_CPU_S[0] = max(0, opt(environment, "client_cpu_us")) / 1e6


@events.request.add_listener
def _spend_client_cpu(**_kw):
    """--client-cpu-us: the process's own CPU time, spent after each response (a heavier tool's
    cost a request). Process CPU time, not wall time: on a shared or budgeted core, a request
    still costs its CPU. gevent runs every user of a process on one thread, so they all wait."""
    if _CLIENT_CPU_S[0] > 0:
        until = time.process_time() + _CLIENT_CPU_S[0]
        while time.process_time() < until:
            pass


@events.init.add_listener
def _apply_ramp_up(environment, **_kw):
    """--ramp-up S: JMeter's thread-group ramp-up, the -u users started evenly over S seconds.
    Locust has no such option, only a spawn rate, so the rate becomes users / S. init runs before
    the headless run (or the web UI's form, or the master) reads parsed_options.spawn_rate.
    Locust starts floor(rate) users at once every floor(rate)/rate s, the first batch at 0 s: at a
    rate of 1 or less that is JMeter's schedule exactly (user i at i x S/N s), above it batches."""
    po = environment.parsed_options
    seconds = opt(environment, "ramp_up")
    if po is None or not seconds:
        return
    if environment.shape_class is not None:
        log.warning("sutlab: --ramp-up is ignored: the load shape sets users and spawn rate")
        return
    users = po.num_users if po.num_users is not None else 1  # Locust's headless default
    if users <= 0:  # nobody to start (and a rate of 0 would divide by zero in Locust's dispatcher)
        return
    if po.spawn_rate is not None:
        log.warning("sutlab: --ramp-up %g s replaces -r %g", seconds, po.spawn_rate)
    po.spawn_rate = users / seconds


# Tags whose tasks need a session token.
AUTH_TAGS = {"store_article", "like", "comment"}


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
    default_think = "0"   # the wait when neither --think-time nor SUTLAB_THINK_TIME is given

    def wait_time(self):
        lo, hi = parse_think(opt(self.environment, "think_time") or self.default_think)
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
