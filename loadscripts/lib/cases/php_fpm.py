"""The Laravel write-up's php-fpm stages: a web tier whose CPU per request was PHP's, so that the
number of php-fpm children, OPcache and a second web server each showed. sutlab spends ~50 us per
request; --app-cpu-us N makes each request to an app route cost N us of CPU, inline on the sync
worker as a php-fpm child's does, and --db-latency-ms N gives each query the round trip of the
write-up's remote database."""

import os

from .. import LOADSCRIPTS
from ..report import fmt, table
from .common import Check, cells, loadavg

NAME = "php-fpm"
TITLE = "A web tier as slow as PHP: children, OPcache, a second server"
WRITEUP = """\
Laravel on php-fpm, `/health_check`:
- 2 children: 21 rps at 99 % CPU; 4 children: no change (CPU-bound);
- OPcache: 237 rps;
- two web servers behind the load balancer: 1.85x;
- `show_articles` rose from 55 to 130 rps as children went from 2 to 32, until the web CPU reached
  92 %."""
INVENTED = """\
- one core for the web tier (each sutlab pinned), as 21 rps at 99 % CPU implies 47.6 ms of CPU per
  request on one core: `--app-cpu-us 47600`; OPcache as a tenth of it, `--app-cpu-us 4760`;
- sync workers for php-fpm children (`--db-mode sync`); ab on the other core at 2, 4 and 8 clients;
- the second web server: `infra/lab up --instances 2 --lb haproxy`, each instance on its own core,
  against one instance behind the same HAProxy;
- `show_articles` (GET /api/articles/<random slug>, one query): 130 rps at 92 % of a core means
  about 7 ms of CPU per request, `--app-cpu-us 7000`; 2 children at 55 rps means 36 ms per request
  per child, so ~29 ms of it was spent waiting on the write-up's remote database,
  `--db-latency-ms 29` (the lab's PostgreSQL answers in a millisecond, and this kernel has no netem);
- its load: wrk with 64 connections on random slugs (the write-up's user count is not published),
  `--workers` 2, 4, 8, 16 and 32, sutlab pinned to one core."""

SHOW_WORKERS = (2, 4, 8, 16, 32)
SHOW_CPU_US, SHOW_LATENCY_MS, SHOW_CONNECTIONS = 7000, 29, 64

LEVELS = "2,4,8"
STEP_SECONDS = 10
NO_OPCACHE, OPCACHE = 47600, 4760


def stage(ctx, label, flags, scaled=None):
    """The lab restarted (or, scaled, brought up) with `flags`, each sutlab pinned; one stepped run."""
    if scaled:
        ctx.lab("down")
        ctx.lab("up", "--instances", str(scaled), "--lb", "haproxy", "--size", "tiny", "--", *flags)
    else:
        ctx.lab("restart", "--", *flags)
    ctx.pin_web([0, 1] if scaled else [0])
    # one server: the load on the other core; two, each on a core: the load where it can (it is light)
    rows, _ = ctx.steps(label, ["--tool", "ab", "--path", "/health_check", "--levels", LEVELS,
                                "--duration", str(ctx.seconds(STEP_SECONDS)), "--warmup", "2"],
                        cores=None if scaled else [1])
    return rows


def run(ctx):
    before = loadavg()
    sync = ["--db-mode", "sync"]
    ctx.lab("down")
    ctx.lab("up", "--size", "tiny", "--", *sync)
    runs = {}
    try:
        runs["2 children"] = stage(ctx, "children-2", sync + ["--workers", "2", "--app-cpu-us", str(NO_OPCACHE)])
        runs["4 children"] = stage(ctx, "children-4", sync + ["--workers", "4", "--app-cpu-us", str(NO_OPCACHE)])
        runs["OPcache"] = stage(ctx, "opcache", sync + ["--workers", "2", "--app-cpu-us", str(OPCACHE)])
        opc = sync + ["--workers", "2", "--app-cpu-us", str(OPCACHE)]
        runs["1 server behind HAProxy"] = stage(ctx, "haproxy-1", opc, scaled=1)
        runs["2 servers behind HAProxy"] = stage(ctx, "haproxy-2", opc, scaled=2)
        ctx.lab("down")
        ctx.lab("up", "--size", "tiny", "--", *sync)
        show = show_articles(ctx, sync)
    finally:
        ctx.lab("down")
    after = loadavg()
    keys = ("rps", "p99_ms", "busy_web", "busy_lb", "busy_load", "verdict")
    sections = ["ab on GET /health_check, levels %s clients, %d s each, `--db-mode sync`, each sutlab pinned to a "
                "core; load average %s before, %s after" % (LEVELS, ctx.seconds(STEP_SECONDS), before, after),
                table(["stage", "clients", "req/s", "p99 ms", "web busy %", "lb busy %", "load busy %", "verdict"],
                      [cells(label, r, keys) for label in runs for r in runs[label]], framed=True),
                "show_articles: wrk `article_by_slug.lua` with %d connections, %d s per stage, `--db-mode sync "
                "--app-cpu-us %d --db-latency-ms %d`, sutlab pinned to one core"
                % (SHOW_CONNECTIONS, ctx.seconds(STEP_SECONDS), SHOW_CPU_US, SHOW_LATENCY_MS),
                table(["children", "connections", "req/s", "p99 ms", "web CPU %", "web busy %", "db CPU %", "verdict"],
                      [cells(label, r, ("rps", "p99_ms", "cpu_web_pct", "busy_web", "cpu_db_pct", "verdict"))
                       for label in show for r in show[label]], framed=True)]
    return sections, checks(runs) + show_checks(show)


def show_articles(ctx, sync):
    """show_articles at each number of children: the lab restarted with that many sync workers,
    pinned to one core, under the same wrk load. {children: rows}."""
    script = os.path.join(LOADSCRIPTS, "wrk", "article_by_slug.lua")
    out = {}
    for n in SHOW_WORKERS:
        ctx.lab("restart", "--", *sync, "--workers", str(n), "--app-cpu-us", str(SHOW_CPU_US),
                "--db-latency-ms", str(SHOW_LATENCY_MS))
        ctx.pin_web([0])
        out[str(n)], _ = ctx.steps("show-articles-%d" % n,
                                   ["--tool", "wrk", "--script", script, "--levels", str(SHOW_CONNECTIONS),
                                    "--duration", str(ctx.seconds(STEP_SECONDS)), "--warmup", "2"], cores=[1])
    return out


def _top(rows):
    return max(r["rps"] for r in rows)


def show_checks(show):
    first, last = str(SHOW_WORKERS[0]), str(SHOW_WORKERS[-1])
    low, high = _top(show[first]), _top(show[last])
    # the write-up's figure is the web tier's CPU (of its one core), not its busy share: that also
    # counts time runnable and waiting for the core, which 2 children contending for it have
    web_low = max(r.get("cpu_web_pct") or 0.0 for r in show[first]) / 100
    web_high = max(r.get("cpu_web_pct") or 0.0 for r in show[last]) / 100
    return [
        Check("show_articles, 2 children, req/s", "55", fmt(low, 0), "40-75", 40 <= low <= 75),
        Check("show_articles, 2 children: web CPU", "not the limit", "%.0f %%" % (100 * web_low), "< 60 %",
              web_low < 0.6),
        Check("show_articles, 32 / 2 children", "130 / 55 = 2.4x", "%.1fx" % (high / low if low else 0.0),
              "1.7-3.5x", low > 0 and 1.7 <= high / low <= 3.5),
        Check("show_articles, 32 children: web CPU", "92 %", "%.0f %%" % (100 * web_high), ">= 75 %",
              web_high >= 0.75),
    ]


def checks(runs):
    two, four, opc = _top(runs["2 children"]), _top(runs["4 children"]), _top(runs["OPcache"])
    one_lb, two_lb = _top(runs["1 server behind HAProxy"]), _top(runs["2 servers behind HAProxy"])
    web_verdicts = sorted(set(r.get("verdict") for r in runs["2 children"] + runs["4 children"]))
    return [
        Check("2 children, req/s", "21", fmt(two, 0), "15-30", 15 <= two <= 30),
        Check("2 children: the tier that limits", "web (99 % CPU)", ", ".join(web_verdicts), "web", web_verdicts == ["web"]),
        Check("4 children / 2", "no change", "%.2fx" % (four / two), "0.8-1.25x", 0.8 <= four / two <= 1.25),
        Check("OPcache / none", "237 / 21 = 11x", "%.1fx" % (opc / two), "5-20x", 5 <= opc / two <= 20),
        Check("2 servers / 1 behind HAProxy", "1.85x", "%.2fx" % (two_lb / one_lb), "1.5-2.3x",
              1.5 <= two_lb / one_lb <= 2.3),
    ]
