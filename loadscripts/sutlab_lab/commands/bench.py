"""sutlab side by side with reference tools, in one run.

Suites (--suite, default static,delivery,dbmode; "all" adds board; cost by name only):
  static    wrk against sutlab and against an equivalently configured nginx
            (/status.txt, /health_check), servers on one core, wrk on the other.
  delivery  GET /stores?categoryId=N (random N) with sutlab's --redis-cache off and on,
            next to pgbench running the same SQL and redis-benchmark fetching the same
            cached payload, at the same concurrency.
  dbmode    --db-mode sync vs async at --workers 2 on GET /stores/N, once with PostgreSQL
            on the server's core and once on the other core.
  board     at medium size: GET /api/articles/:slug and GET /api/articles?limit=20&offset=K
            next to pgbench running each endpoint's own statement at the same concurrency;
            then at large size (1M articles) the index with --count-pagination off, on and
            estimate; then the estimate's error against the exact count per filter.
  cost      per kind of request (/health_check, /status.txt, the store listing uncached and
            cached, an article): instructions per request under callgrind, split by object
            (sutlab, libh2o, libpq, hiredis, libc, ...), and system calls per request (strace).

Runs are alternated in rounds and the medians reported, with requests/s, p50/p99 latency
and the CPU time per request of each server process involved.

The delivery, dbmode, board and cost suites start a private PostgreSQL 15 and Redis 7
(loadscripts/sutlab_lab/services/with-services: bench re-executes itself under it), migrate
and seed them.

It measures; it does not assert. Exit status: 0 when every run completed (whatever the
ratios), 1 when something failed to run (missing tool, server did not start, a load
generator failed, a server answered wrongly), 2 on bad usage, 130 on Ctrl-C.

The suites live in loadscripts/sutlab_lab/bench/, one module each; this file parses the arguments,
checks the tools and runs the suites asked for. Standard library only; run with Debian's
/usr/bin/python3.
"""

import argparse
import os
import re
import shutil
import signal
import sys
import tempfile
import time

from ..cli import Parser, guarded
from .. import LOADSCRIPTS, REPO, htmlreport, panels, thresholds
from ..services import procs
from ..bench import board, cost, dbmode, delivery, services, static
from ..bench.common import (BOARD_ARTICLE_SCRIPT, BOARD_PAGE_SCRIPT, DB_SUITES, NGINX, PG_BIN,
                             PGBENCH, PGBENCH_SCRIPT, PSQL, WRK_LINE_SCRIPT, WRK_SCRIPT, Context,
                             environment_line, log)
from ..errors import RunError

ENDPOINT_ALIASES = {
    "status.txt": "status.txt", "/status.txt": "status.txt", "static": "status.txt", "status": "status.txt",
    "health_check": "health_check", "/health_check": "health_check", "health": "health_check",
}
SUITES = {"static": static, "delivery": delivery, "dbmode": dbmode, "board": board, "cost": cost}  # report order
DEFAULT_SUITES = ("static", "delivery", "dbmode")  # board seeds 1M articles: asked for by name
ALL_SUITES = DEFAULT_SUITES + ("board",)  # cost measures something else: asked for by name only
SUITE_ALIASES = {"static": "static", "nginx": "static", "delivery": "delivery", "cache": "delivery",
                 "dbmode": "dbmode", "db-mode": "dbmode", "board": "board", "articles": "board",
                 "cost": "cost"}
LOAD_SUITES = ("static", "delivery", "dbmode", "board")  # the suites that run wrk under taskset
SIZES = ("tiny", "small", "medium", "large")
BUILD_HINT = "meson setup build --buildtype=release && ninja -C build"
BOARD_MAX_OFFSET = 980  # default --max-offset: K in 0..980 = the first 50 pages of 20

HELP_EPILOG = """\
suites (--suite LIST, default static,delivery,dbmode; all = those and board):
  static    sutlab vs nginx on /status.txt and /health_check; for each endpoint, rounds
            alternated: sutlab nginx, then nginx sutlab.
    sutlab: taskset -c SERVER_CPU $SUTLAB_BIN serve --listen 127.0.0.1:PORT --workers 1 --docroot DOCROOT
    nginx:  taskset -c SERVER_CPU /usr/sbin/nginx -p TMP -c TMP/nginx.conf -e TMP/error.log -g 'daemon off;'
            worker_processes 1, access_log off, keep-alive (keepalive_requests 100000), sendfile on
            (--nginx-sendfile), root DOCROOT, location = /health_check { return 200 "ok"; }
    wrk:    taskset -c WRK_CPU wrk -tTHREADS -cCONNECTIONS -dDURATIONs --latency http://127.0.0.1:PORT/ENDPOINT
            (--pipeline DEPTH: -s bench.d/pipeline.lua ... -- DEPTH /ENDPOINT, DEPTH requests per write)

  delivery  GET /stores?categoryId=N, N uniform in 1..#categories per request (20 at every size
            but tiny), four contenders alternated in rounds (A B C D, then D C B A, ...):
    cache-off        sutlab serve --workers 1 --db-url URL                       (listing from PostgreSQL)
    cache-on         sutlab serve --workers 1 --db-url URL --redis-url URL --redis-cache --cache-ttl 600
                     (warmed before every run: one request per category, then checked to answer HIT)
    cache-local      the same with --cache-local: hits come from the worker's own copy of what it
                     read from Redis, kept coherent by Redis client-side caching (CLIENT TRACKING)
    pgbench          pgbench -n -M prepared -T DURATION -c CONNECTIONS -j THREADS -D categories=20
                     -f loadscripts/bench.d/stores_by_category.sql -l URL  (the endpoint's SQL)
    redis-benchmark  redis-benchmark -p PORT -c CONNECTIONS -n N --csv HGET sutlab:stores:category:1 all
                     (the cached JSON sutlab serves for category 1; N = the rate of the previous run
                     times DURATION, so each run lasts about DURATION)
    wrk for both sutlab runs: wrk -tTHREADS -cCONNECTIONS -dDURATIONs --latency
                     -s loadscripts/bench.d/random_path.lua URL -- '/stores?categoryId=' 20 SEED
    Placement: sutlab, PostgreSQL (the postmaster and every process under it; new backends
    inherit its affinity) and Redis on SERVER_CPU; wrk, pgbench and redis-benchmark on WRK_CPU.

  dbmode    GET /stores/N (store detail with menus, one query), N uniform in 1..#stores:
            sutlab --workers 2 --db-mode sync vs --db-mode async, alternated, at two placements:
    shared  sutlab and PostgreSQL on SERVER_CPU, wrk on WRK_CPU
    split   sutlab on SERVER_CPU, PostgreSQL on WRK_CPU, wrk on WRK_CPU too (only two cores: the
            load generator shares PostgreSQL's core)

  board     sutlab serve --workers 1 --db-timeout 30000 (sutlab, PostgreSQL on SERVER_CPU; wrk,
            pgbench on WRK_CPU; every wrk with --timeout 30s). Three parts:
    1. sutlab db seed --size medium (--size), VACUUM (FREEZE, ANALYZE), CHECKPOINT; then per
       endpoint, sutlab and pgbench alternated in rounds (A B, then B A, ...), --connections each:
       article  wrk -s loadscripts/bench.d/random_line.lua URL -- /api/articles/ SLUGS SEED
                (SLUGS = SELECT slug FROM articles ORDER BY id: a random article per request)
                vs pgbench -n -M prepared -c CONNECTIONS -j THREADS -D viewer=0 -D loaded=0
                -D narticles=N -f loadscripts/bench.d/board_article.sql (the endpoint's statement;
                pgbench cannot draw random strings, so each session reads one random article)
       page     wrk -s loadscripts/bench.d/random_path.lua URL -- '/api/articles?limit=20&offset='
                MAXOFF SEED 0 (K uniform in 0..MAXOFF, MAXOFF = min(--max-offset, N-20))
                vs pgbench ... -D viewer=0 -D limit=21 -D maxoffset=MAXOFF
                -f loadscripts/bench.d/board_page.sql (count off fetches limit+1 rows)
       Before measuring, bench checks that each pgbench statement, as pgbench sends it, is the
       text sutlab's own PostgreSQL session ran (pg_stat_activity) and has the same EXPLAIN VERBOSE.
    2. sutlab db seed --size large --force (--large-size; about a minute), VACUUM, CHECKPOINT; the
       page request above with --count-pagination off, on and estimate, sutlab restarted for
       every run, alternated, at --large-connections (16).
    3. at each of --estimate-sizes (small,medium,large; seeded in turn, VACUUM (FREEZE, ANALYZE)),
       a sutlab with --count-pagination estimate asked for one row of each filter (all; the most
       common and the median tag, author, fan's favorites and follower's feed), its articlesCount
       printed beside PostgreSQL's count(*) and the error: printed, not judged.
    Targets: article >= 1.2x pgbench, page (count off) >= 1.0x pgbench, and at large
    count off >= 5x count on; printed with a check mark, never the exit status. estimate's
    ratios to off and on are printed without a target.

  cost      per kind, sutlab serve --workers 1 --db-url URL --redis-url URL (--size small, 20 x 100
            stores), fresh for each of two runs, one keep-alive connection (Python http.client),
            the same request every time, 100 warm-up requests, then --cost-requests N (2000):
    health_check    GET /health_check
    status.txt      GET /status.txt
    listing         GET /stores?categoryId=1 (100 stores from PostgreSQL, X-Cache BYPASS)
    listing-cached  the same with --redis-cache --cache-local --cache-ttl 3600 (every measured
                    request a hit on the worker's copy: cache_local_hits_total is checked)
    article         GET /api/articles/SLUG (the first article by id)
    1. valgrind --tool=callgrind sutlab ...; callgrind_control --zero PID after the warm-up,
       callgrind_control --dump PID after the N requests: instructions (Ir, self cost) / N, per
       object: sutlab, libh2o, libpq, hiredis, libc (and libssl/crypto, libjansson, libz, ld.so,
       other where they cost); the top 10 functions by self cost.
    2. sutlab ... without valgrind; strace -f -c -o FILE -p PID attached (every thread) after the
       warm-up, detached (SIGINT) after the N requests: system calls / N, by name.
    The instructions repeat within about 0.2 % run to run (same binary, same N; listing-cached
    0.8 %: malloc's state), see loadscripts/README.md. --cost-out DIR keeps KIND.callgrind.out
    (for callgrind_annotate) and KIND.strace.txt.

  Reported values are medians over the rounds. CPU us/req = (utime+stime of a process tree after -
  before the run, including reaped children) / requests completed: sutlab = its process (all
  threads), postgres = the postmaster and everything under it, redis = redis-server; loadgen =
  the load generator itself (RUSAGE_CHILDREN around its run).
  SUTLAB_* variables are removed from sutlab's environment, so only the flags shown (plus
  --sutlab-arg) are in force. Percentiles computed by bench (pgbench's, from its log) are nearest
  rank: the ceil(q/100 * n)-th smallest latency.

examples:
  loadscripts/bench
  loadscripts/bench --suite delivery,dbmode --duration 3 --rounds 1
  loadscripts/bench --suite static --endpoints health_check
  loadscripts/bench --suite cost --cost-out /tmp/cost
  loadscripts/bench --suite cost --cost-kinds health_check,listing --cost-requests 500
  SUTLAB_BIN=/tmp/sutlab-asan loadscripts/bench --suite delivery --sutlab-arg=--db-conns=1

exit status: 0 all runs completed (whatever the ratios), 1 something failed to run,
2 bad usage, 130 interrupted.
"""


# ---------------------------------------------------------------- arguments

def duration_arg(text):
    m = re.fullmatch(r"(\d+)(s?)", text.strip())
    if not m or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError("expected whole seconds >= 1, e.g. 5 or 5s")
    return int(m.group(1))


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a whole number >= 1")
    if v < 1:
        raise argparse.ArgumentTypeError("expected a whole number >= 1")
    return v


def nonneg_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a whole number >= 0")
    if v < 0:
        raise argparse.ArgumentTypeError("expected a whole number >= 0")
    return v


def port_arg(text):
    v = nonneg_int(text)
    if v > 65535:
        raise argparse.ArgumentTypeError("expected a port 0-65535 (0 = pick a free one)")
    return v


def endpoints_arg(text):
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item == "both" or item == "all":
            names = list(static.ENDPOINTS)
        elif item in ENDPOINT_ALIASES:
            names = [ENDPOINT_ALIASES[item]]
        else:
            raise argparse.ArgumentTypeError(
                "unknown endpoint %r (accepts status.txt, health_check, both)" % item)
        for n in names:
            if n not in out:
                out.append(n)
    if not out:
        raise argparse.ArgumentTypeError("no endpoint given")
    return out


def suites_arg(text):
    wanted = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item == "all":
            wanted.update(ALL_SUITES)
        elif item in SUITE_ALIASES:
            wanted.add(SUITE_ALIASES[item])
        else:
            raise argparse.ArgumentTypeError(
                "unknown suite %r (accepts static, delivery, dbmode, board, cost, all)" % item)
    if not wanted:
        raise argparse.ArgumentTypeError("no suite given")
    return [s for s in SUITES if s in wanted]  # always in the documented order


def max_offset_arg(text):
    if text.strip() == "all":
        return None  # N - 20: every page
    try:
        return nonneg_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError("expected a whole number >= 0, or all")


def add_run_args(p):
    p.add_argument("--suite", type=suites_arg, default=list(DEFAULT_SUITES), metavar="LIST",
                   help="comma-separated: static, delivery, dbmode, board, cost, all (default: "
                        "static,delivery,dbmode; all adds board; cost only by name)")
    p.add_argument("--duration", type=duration_arg, default=5, metavar="SECONDS",
                   help="length of each measured run (default: 5)")
    p.add_argument("--connections", type=positive_int, default=64, metavar="N",
                   help="concurrency of every load generator: wrk -c, pgbench -c, "
                        "redis-benchmark -c (default: 64)")
    p.add_argument("--threads", type=positive_int, default=1, metavar="N",
                   help="load generator threads: wrk -t, pgbench -j, redis-benchmark --threads "
                        "when > 1 (default: 1)")
    p.add_argument("--rounds", type=positive_int, default=3, metavar="N",
                   help="alternated rounds; the median is reported (default: 3)")
    p.add_argument("--warmup", type=nonneg_int, default=1, metavar="SECONDS",
                   help="unmeasured run of each contender before the rounds; 0 = none (default: 1)")
    p.add_argument("--server-cpu", type=nonneg_int, default=0, metavar="CPU",
                   help="CPU of the servers, PostgreSQL and Redis (default: 0)")
    p.add_argument("--wrk-cpu", "--load-cpu", dest="wrk_cpu", type=nonneg_int, default=1,
                   metavar="CPU", help="CPU of wrk, pgbench and redis-benchmark (default: 1)")
    p.add_argument("--sutlab-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for every 'sutlab serve' (repeatable; use "
                        "--sutlab-arg=--flag; it comes last, so it overrides)")
    p.add_argument("--fail-if", action="append", default=[], metavar="EXPR",
                   type=thresholds.argument(without=("mean", "p95", "success"), scoped_ratio=True),
                   help="exit 1 unless every run meets it (repeatable; sutlab_lab/thresholds.py): the static and "
                        "delivery suites' runs, e.g. ratio>=0.8@static.health_check, p99<5ms@delivery.cache-on, "
                        "errors<0.1%%; a run or suite that was not measured violates it")
    p.add_argument("--keep-tmp", action="store_true",
                   help="keep the temp dir (configs, server logs, pgbench logs) and print its path")
    p.add_argument("--out", metavar="DIR",
                   help="directory for report.html, every suite's tables on one page, with CPU per tier over "
                        "time of every metered run (cpu.csv, cpu.png) (default var/bench/TIME)")


def executable_arg(text):
    if not (os.path.isfile(text) and os.access(text, os.X_OK)):
        raise argparse.ArgumentTypeError("%r is not an executable file" % text)
    return os.path.abspath(text)


def add_static_args(p):
    g = p.add_argument_group("static suite")
    g.add_argument("--endpoints", type=endpoints_arg, default=list(static.ENDPOINTS), metavar="LIST",
                   help="comma-separated: status.txt, health_check, or both (default: both)")
    g.add_argument("--docroot", default=os.path.join(REPO, "fixtures", "static"), metavar="DIR",
                   help="docroot for both servers, must contain status.txt "
                        "(default: <repo>/fixtures/static)")
    g.add_argument("--sutlab-port", type=port_arg, default=0, metavar="PORT",
                   help="port for sutlab (default: 0 = pick a free one)")
    g.add_argument("--nginx-port", type=port_arg, default=0, metavar="PORT",
                   help="port for nginx (default: 0 = pick a free one)")
    g.add_argument("--nginx-sendfile", choices=("on", "off"), default="on",
                   help="nginx 'sendfile' setting (default: on)")
    g.add_argument("--h2o-bin", type=executable_arg, metavar="PATH",
                   help="an h2o server (the standalone one, e.g. 2.2.5 built from its sources; "
                        "Debian ships only the library) measured as a third contender on /status.txt: "
                        "h2o has no inline response without mruby, so not on /health_check")
    g.add_argument("--pipeline", type=positive_int, default=1, metavar="DEPTH",
                   help="requests per wrk write (HTTP/1.1 pipelining, bench.d/pipeline.lua); > 1 makes "
                        "wrk cheap enough per request that the server's core, not wrk's, is the limit "
                        "(default: 1 = one request at a time)")


def add_db_args(p):
    g = p.add_argument_group("delivery, dbmode and board suites")
    g.add_argument("--size", choices=SIZES, default=None,
                   help="fixture size for 'sutlab db seed' (default: small = 20 categories x 100 "
                        "stores for delivery and dbmode; medium = 100,000 articles for board's "
                        "first part)")
    g.add_argument("--seed", type=nonneg_int, default=1, metavar="N",
                   help="seed of the random ids (wrk Lua script, pgbench --random-seed) (default: 1)")
    g.add_argument("--pgbench-clients", type=positive_int, default=None, metavar="N",
                   help="pgbench -c (default: --connections)")
    g.add_argument("--cache-ttl", type=positive_int, default=600, metavar="SECONDS",
                   help="sutlab --cache-ttl of the cache-on run (default: 600)")
    g = p.add_argument_group("board suite")
    g.add_argument("--large-size", choices=SIZES, default="large",
                   help="fixture size of the --count-pagination off/on/estimate part (default: large = "
                        "1,000,000 articles; seeding takes about a minute)")
    g.add_argument("--max-offset", type=max_offset_arg, default=BOARD_MAX_OFFSET, metavar="K|all",
                   help="index requests use offset K uniform in 0..min(K, articles-20); all = "
                        "every page (default: %d, the first 50 pages; each skipped row costs "
                        "PostgreSQL tens of microseconds, see the report)" % BOARD_MAX_OFFSET)
    g.add_argument("--large-connections", type=positive_int, default=16, metavar="N",
                   help="wrk -c of the --count-pagination off/on/estimate runs (default: 16: with the "
                        "count on, 64 connections queue for seconds)")
    g.add_argument("--estimate-sizes", type=sizes_arg, default=("small", "medium", "large"), metavar="LIST",
                   help="sizes at which part 3 prints the estimate's error against the exact count per "
                        "filter (default: small,medium,large; each is seeded in turn, the one the "
                        "database holds first)")


def sizes_arg(text):
    sizes = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in sizes if s not in SIZES]
    if not sizes or bad:
        raise argparse.ArgumentTypeError("expected a comma list of %s, got %r" % ("|".join(SIZES), text))
    return sizes


def cost_kinds_arg(text):
    try:
        return cost.kinds_arg(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def add_cost_args(p):
    g = p.add_argument_group("cost suite")
    g.add_argument("--cost-kinds", type=cost_kinds_arg, default=list(cost.KINDS), metavar="LIST",
                   help="comma-separated: %s, or all (default: all)" % ", ".join(cost.KINDS))
    g.add_argument("--cost-requests", type=positive_int, default=cost.DEFAULT_REQUESTS, metavar="N",
                   help="measured requests per kind, after %d warm-up ones; keep it the same "
                        "between runs that are compared (default: %d)" % (cost.WARMUP, cost.DEFAULT_REQUESTS))
    g.add_argument("--cost-out", metavar="DIR",
                   help="write each kind's callgrind dump (KIND.callgrind.out, for callgrind_annotate) "
                        "and strace summary (KIND.strace.txt) into DIR")


def parse_args(argv):
    p = Parser(
        prog="bench",
        description="Measure sutlab side by side with nginx (static), with pgbench and "
                    "redis-benchmark on the delivery listing (delivery), its sync vs async "
                    "database modes (dbmode), and the board's article read and index next to "
                    "pgbench plus --count-pagination off vs on (board); alternated rounds, "
                    "medians, req/s, p50/p99, CPU per request, ratios.",
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(p)
    add_static_args(p)
    add_db_args(p)
    add_cost_args(p)
    panels.add_arguments(p)
    args = p.parse_args(argv)
    if args.cost_out and os.path.exists(args.cost_out) and not os.path.isdir(args.cost_out):
        p.error("--cost-out %s exists and is not a directory" % args.cost_out)
    if args.server_cpu == args.wrk_cpu:
        p.error("--server-cpu and --wrk-cpu must differ")
    if args.sutlab_port and args.sutlab_port == args.nginx_port:
        p.error("--sutlab-port and --nginx-port must differ")
    if args.pgbench_clients is None:
        args.pgbench_clients = args.connections
    args.db_size = args.size or "small"       # delivery, dbmode
    args.board_size = args.size or "medium"   # board, first part
    return args


# ---------------------------------------------------------------- preconditions

def check_tools(args):
    need = {}  # what -> Debian package
    load = any(x in args.suite for x in LOAD_SUITES)
    if load and not shutil.which("wrk"):
        need["wrk"] = "wrk"
    if load and not shutil.which("taskset"):
        need["taskset"] = "util-linux"
    if "cost" in args.suite:
        need.update((t, pkg) for t, pkg in cost.TOOLS.items() if not shutil.which(t))
    if "static" in args.suite and not os.access(NGINX, os.X_OK):
        need[NGINX] = "nginx-light"
    if any(x in args.suite for x in DB_SUITES):
        for path, pkg in ((os.path.join(PG_BIN, "initdb"), "postgresql-15"),
                          (os.path.join(PG_BIN, "pg_ctl"), "postgresql-15"),
                          (PSQL, "postgresql-client-15")):
            if not os.access(path, os.X_OK):
                need[path] = pkg
        if not shutil.which("redis-server"):
            need["redis-server"] = "redis-server"
        if not shutil.which("redis-cli"):
            need["redis-cli"] = "redis-tools"
    if "delivery" in args.suite or "board" in args.suite:
        if not os.access(PGBENCH, os.X_OK):
            need[PGBENCH] = "postgresql-15"
    if "delivery" in args.suite:
        if not shutil.which("redis-benchmark"):
            need["redis-benchmark"] = "redis-tools"
    if need:
        log("bench: missing tool(s): %s" % ", ".join(need))
        log("  install with: apt-get install -y %s" % " ".join(sorted(set(need.values()))))
        sys.exit(1)

    sutlab = os.environ.get("SUTLAB_BIN") or os.path.join(REPO, "build", "sutlab")
    if not (os.path.isfile(sutlab) and os.access(sutlab, os.X_OK)):
        log("bench: sutlab binary not found or not executable: %s" % sutlab)
        log("  build it (from %s): %s" % (REPO, BUILD_HINT))
        log("  or point SUTLAB_BIN at a binary")
        sys.exit(1)
    sutlab = os.path.realpath(sutlab)

    allowed = os.sched_getaffinity(0)
    for opt, cpu in (("--server-cpu", args.server_cpu), ("--wrk-cpu", args.wrk_cpu)) if load else ():
        if cpu not in allowed:
            raise RunError("%s %d: CPU not available here (usable: %s; nproc=%d). "
                             "This benchmark needs two cores."
                             % (opt, cpu, ",".join(map(str, sorted(allowed))), len(allowed)))

    docroot = os.path.realpath(args.docroot)
    if ("static" in args.suite or "cost" in args.suite) and not os.path.isfile(os.path.join(docroot, "status.txt")):
        raise RunError("docroot %s has no status.txt" % docroot)
    for f in (WRK_SCRIPT, PGBENCH_SCRIPT):
        if ("delivery" in args.suite or "dbmode" in args.suite) and not os.path.isfile(f):
            raise RunError("%s is missing" % f)
    for f in (WRK_SCRIPT, WRK_LINE_SCRIPT, BOARD_ARTICLE_SCRIPT, BOARD_PAGE_SCRIPT):
        if "board" in args.suite and not os.path.isfile(f):
            raise RunError("%s is missing" % f)
    return sutlab, docroot


# ---------------------------------------------------------------- main

def _on_signal(signum, frame):
    raise KeyboardInterrupt


def run_suites(args, sutlab_bin, docroot, tmpdir, needs_services):
    env_line = environment_line(sutlab_bin, args)
    log(env_line)
    svc = None
    if needs_services:
        first = args.board_size if args.suite == ["board"] else args.db_size
        svc = services.Services(sutlab_bin, first)
    ctx = Context(args, sutlab_bin, docroot, tmpdir, env_line, svc)
    page = htmlreport.Report("bench", "bench --suite %s" % ",".join(args.suite))
    page.flags = "each contender's, in the tables (sutlab's: %s)" % (" ".join(args.sutlab_arg) or "its defaults")
    figures, segments, unsampled, started = {}, [], [], time.time()
    for name in args.suite:
        suite = SUITES[name]
        result = suite.run(ctx)
        with Tee() as printed:
            suite.print_report(ctx, result)
        page.add_text("suite %s" % name, printed.text())
        if hasattr(suite, "figures"):
            figures.update(suite.figures(ctx, result))
        # every measured run's sampled tiers (common.Meter), found in the suite's results
        found = panels.segments_in(result, (name,))
        segments += found
        if not found:
            unsampled.append("suite %s samples no tier over time: %s" % (name, UNSAMPLED.get(name, "no run of it is metered")))
        sys.stdout.flush()
    gate_lines = []
    gate = thresholds.judge(args.fail_if, figures or {thresholds.RUN: {}},
                            say=lambda ln: (print(ln), gate_lines.append(ln)))
    if gate_lines:
        page.add_text("Thresholds (--fail-if)", "\n".join(gate_lines))
    out = args.out or os.path.join(REPO, "var", "bench", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    panels.prometheus_panel(page, out, args.prometheus, args.lab_var, started, time.time())
    panels.cpu_panel(page, out, segments, what="the measured runs (suite, contender, round)", unsampled=unsampled)
    log("bench: report %s" % page.write(out))
    return gate


# what a suite without a sampler measures instead (its page says so rather than draw zeros)
UNSAMPLED = {"cost": "it counts instructions (callgrind) and system calls (strace) per request, one request "
                     "at a time under valgrind, not CPU over time"}


class Tee:
    """What a block prints, kept as well as printed: a suite's report, for report.html."""

    def __enter__(self):
        self.parts, self.real = [], sys.stdout
        sys.stdout = self
        return self

    def __exit__(self, *exc):
        sys.stdout = self.real
        return False

    def write(self, text):
        self.parts.append(text)
        return self.real.write(text)

    def flush(self):
        self.real.flush()

    def text(self):
        return "".join(self.parts)


def main(argv):
    args = parse_args(argv)
    needs_services = any(x in args.suite for x in DB_SUITES)
    try:
        sutlab_bin, docroot = check_tools(args)
        if needs_services and not services.in_services():
            services.reexec_under_services(os.path.join(LOADSCRIPTS, "bench"), argv)  # does not return
    except RunError as e:
        log("bench: error: %s" % e)
        return 1
    # SIGINT too: a shell may start us with SIGINT ignored (background job)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    if needs_services:
        # with-services runs us through a bash subshell; a SIGTERM sent to with-services ends
        # that subshell, not us: ask for a SIGTERM when our parent goes, so that we clean up
        # and stop before the services are torn down under us.
        procs.die_with_parent()
        if os.getppid() == 1:
            log("bench: with-services is gone, stopping")
            return 130
    tmpdir = tempfile.mkdtemp(prefix="sutlab-bench-")

    def cleanup():
        if args.keep_tmp:
            log("bench: kept %s" % tmpdir)
        else:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return guarded(lambda: run_suites(args, sutlab_bin, docroot, tmpdir, needs_services), log,
                   "bench: interrupted, cleaning up", cleanup, prefix="bench: error: ")
