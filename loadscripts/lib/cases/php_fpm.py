"""The Laravel write-up's php-fpm stages: a web tier whose CPU per request was PHP's, so that the
number of php-fpm children, OPcache and a second web server each showed. sutlab spends ~50 us per
request; --app-cpu-us N makes each request to an app route cost N us of CPU, inline on the sync
worker as a php-fpm child's does."""

from ..report import fmt, table
from .common import Check, cells, loadavg

NAME = "php-fpm"
TITLE = "A web tier as slow as PHP: children, OPcache, a second server"
WRITEUP = """\
Laravel on php-fpm, `/health_check`:
- 2 children: 21 rps at 99 % CPU; 4 children: no change (CPU-bound);
- OPcache: 237 rps;
- two web servers behind the load balancer: 1.85x.
(`show_articles` rose from 55 to 130 rps as children went from 2 to 32, until the web CPU reached
92 %: not replayed, see below.)"""
INVENTED = """\
- one core for the web tier (each sutlab pinned), as 21 rps at 99 % CPU implies 47.6 ms of CPU per
  request on one core: `--app-cpu-us 47600`; OPcache as a tenth of it, `--app-cpu-us 4760`;
- sync workers for php-fpm children (`--db-mode sync`); ab on the other core at 2, 4 and 8 clients;
- the second web server: `infra/lab up --instances 2 --lb haproxy`, each instance on its own core,
  against one instance behind the same HAProxy;
- not replayed: `show_articles` over 2-32 children. Its shape needs ~28 ms per request spent
  outside the web CPU (the write-up's database was remote: 2 children at 55 rps); this lab's
  PostgreSQL answers in about a millisecond and the kernel here has no netem to add the latency."""

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
    finally:
        ctx.lab("down")
    after = loadavg()
    keys = ("rps", "p99_ms", "busy_web", "busy_lb", "busy_load", "verdict")
    sections = ["ab on GET /health_check, levels %s clients, %d s each, `--db-mode sync`, each sutlab pinned to a "
                "core; load average %s before, %s after" % (LEVELS, ctx.seconds(STEP_SECONDS), before, after),
                table(["stage", "clients", "req/s", "p99 ms", "web busy %", "lb busy %", "load busy %", "verdict"],
                      [cells(label, r, keys) for label in runs for r in runs[label]], framed=True)]
    return sections, checks(runs)


def _top(rows):
    return max(r["rps"] for r in rows)


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
