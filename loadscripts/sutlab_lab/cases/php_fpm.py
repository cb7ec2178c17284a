"""The Laravel blog write-up's php-fpm stages (000): a web tier whose CPU per request was PHP's, so
that php-fpm's children, OPcache and a second web server each showed. --app-cpu-us N gives each app
request N us of CPU on the sync worker, as a php-fpm child's; --db-latency-ms N each query the remote
database's round trip. The knobs are fitted to some figures, shown as `set` (checks.py); counted are
the children sweep of show_articles between its two fitted ends, and the tiers the write-up names."""

from ..report import fmt, ratio
from . import checks as c, texts
from .checks import Key as K
from .common import load, loadavg, runs_table, sweep, top

NAME = "php-fpm"
TITLE = "A web tier as slow as PHP: children, OPcache, a second server"
WRITEUP, INVENTED = texts.load(__name__)  # php_fpm.md

SHOW_WORKERS = (2, 4, 8, 16, 32)
SHOW_CPU_US, SHOW_LATENCY_MS, SHOW_CONNECTIONS = 7000, 29, 64
FIT = "--app-cpu-us %d --db-latency-ms %d" % (SHOW_CPU_US, SHOW_LATENCY_MS)
# the write-up's best req/s at 2 children, and at 4, 8 and 16 with the web CPU on that row; the lines
SHOW_BASE = (63, "L124")
SHOW_WRITEUP = {4: (99, 65, "L133"), 8: (120, 86, "L139"), 16: (125, 88, "L144")}

LEVELS, STEP_SECONDS, NO_OPCACHE, OPCACHE = "2,4,8", 10, 47600, 4760
# /health_check: (stage, its directory, its flags beside --db-mode sync); then one and two servers
# behind HAProxy with OPcache's flags, each instance on a core of its own
HEALTH = (("2 children", "children-2", ["--workers", "2", "--app-cpu-us", str(NO_OPCACHE)]),
          ("4 children", "children-4", ["--workers", "4", "--app-cpu-us", str(NO_OPCACHE)]),
          ("OPcache", "opcache", ["--workers", "2", "--app-cpu-us", str(OPCACHE)]))
SCALED = (("1 server behind HAProxy", "haproxy-1", 1), ("2 servers behind HAProxy", "haproxy-2", 2))
SYNC = ["--db-mode", "sync"]


def run(ctx):
    """One sutlab pinned to core 0 and the load on core 1; scaled, each instance on a core and the
    load where it can (it is light); then the show_articles sweep of children."""
    before, seconds = loadavg(), ctx.seconds(STEP_SECONDS)
    health = load("ab", LEVELS, seconds, path="/health_check")
    show = [("show-articles-%d" % n, SYNC + ["--workers", str(n)] + FIT.split()) for n in SHOW_WORKERS]
    try:
        ctx.up("tiny", SYNC)
        rows = sweep(ctx, [(d, SYNC + flags) for _, d, flags in HEALTH], health, pin=[0], cores=[1])
        runs = {name: rows[d] for name, d, _ in HEALTH}
        for name, d, n in SCALED:
            ctx.up("tiny", SYNC + HEALTH[2][2], "--instances", str(n), "--lb", "haproxy")
            ctx.pin_web(list(range(n)))
            runs[name] = ctx.steps(d, health)
        ctx.up("tiny", SYNC)
        rows = sweep(ctx, show, load("wrk", SHOW_CONNECTIONS, seconds, script="article_by_slug.lua"), pin=[0],
                     cores=[1])
    finally:
        ctx.lab("down")
    shown = {str(n): rows["show-articles-%d" % n] for n in SHOW_WORKERS}
    return sections(ctx, runs, shown, before, loadavg()), checks(runs) + show_checks(shown)


def sections(ctx, runs, show, before, after):
    return ["ab on GET /health_check, levels %s clients, %d s each, `--db-mode sync`, each sutlab pinned to a "
            "core; load average %s before, %s after" % (LEVELS, ctx.seconds(STEP_SECONDS), before, after),
            runs_table(["stage", "clients", "req/s", "p99 ms", "web busy %", "lb busy %", "load busy %", "verdict"],
                       runs, ("rps", "p99_ms", "busy_web", "busy_lb", "busy_load", "verdict")),
            "show_articles: wrk `article_by_slug.lua` with %d connections, %d s per stage, `--db-mode sync %s`, "
            "sutlab pinned to one core" % (SHOW_CONNECTIONS, ctx.seconds(STEP_SECONDS), FIT),
            runs_table(["children", "connections", "req/s", "p99 ms", "web CPU %", "web busy %", "db CPU %", "verdict"],
                       show, ("rps", "p99_ms", "cpu_web_pct", "busy_web", "cpu_db_pct", "verdict"))]


# /health_check: every figure is set by --app-cpu-us or by the pinning; the tier is counted (K: a
# measured value, checks.declared)
HEALTH_CHECKS = (
    (c.set_by, "/health_check, 2 children: req/s", "000 L59-L61", "21", "--app-cpu-us %d on one core" % NO_OPCACHE,
     K("2 children")),
    (c.tier, "/health_check, 2 and 4 children: the tier that limits", "000 L63-L64", "web", K("tiers")),
    (c.set_by, "/health_check, 4 children / 2", "000 L67-L70", "22 / 21 = 1.05x",
     "CPU-only requests, 2 and 4 workers on one pinned core", K("4 children")),
    (c.set_by, "/health_check, OPcache / none", "000 L59, L96", "237 / 21 = 11.3x",
     "--app-cpu-us %d, a tenth" % OPCACHE, K("OPcache")),
    (c.set_by, "/health_check, 2 servers / 1 behind the LB", "000 L203, L210", "425 / 220 = 1.93x",
     "each instance pinned to a core of its own", K("2 servers behind HAProxy")))
# (the stage measured, the stage it is divided by) of each /health_check ratio
OVER = {"4 children": "2 children", "OPcache": "2 children", "2 servers behind HAProxy": "1 server behind HAProxy"}


def checks(runs):
    rps = {stage: top(rows) for stage, rows in runs.items()}
    measured = {a: fmt(ratio(rps[a], rps[b]), 2, "{}x") for a, b in OVER.items()}
    measured.update({"2 children": fmt(rps["2 children"], 0),
                     "tiers": [r.get("verdict") for r in runs["2 children"] + runs["4 children"]]})
    return c.declared(HEALTH_CHECKS, measured)


def _end(n, rps, cpu, rows, lines):
    """show_articles at one end of the fit (2 or 32 children, lines: of its req/s, web CPU and tier):
    its req/s and web CPU set, its tier counted."""
    (rps_line, rps_writeup), (cpu_line, cpu_writeup), (tier_line, tier) = lines
    what = "show_articles, %d children: " % n
    return [c.set_by(what + "req/s", rps_line, rps_writeup, FIT, fmt(rps, 0)),
            c.set_by(what + "web CPU", cpu_line, cpu_writeup, FIT, fmt(cpu and 100 * cpu, 0, "{} %")),
            c.tier(what + "the tier that limits", tier_line, tier, [r.get("verdict") for r in rows])]


def show_checks(show):
    """show_articles: the 2- and 32-children ends are the fit of the two knobs (set); 4, 8 and 16
    children and the tiers at the ends are counted. The web tier's figure is its CPU of its one core
    (the write-up's is CPU; the busy share also counts time runnable, waiting for the core)."""
    rps = {n: top(show[str(n)]) for n in SHOW_WORKERS}
    cpu = {n: ratio(top(show[str(n)], "cpu_web_pct"), 100) for n in SHOW_WORKERS}
    (base, base_line), out = SHOW_BASE, _end(2, rps[2], cpu[2], show["2"], (
        ("000 L123-L124", "55 at 2 users, 63 at 4"), ("000 L123-L125", "36-40 %"), ("000 L126", "below limits")))
    out.append(c.direction("show_articles, more children (2 -> 4): req/s", "000 L124, L133", "63 -> 99", rps[2],
                           rps[4]))
    for n, (figure, web, line) in SHOW_WRITEUP.items():
        out += [c.ratio("show_articles, %d / 2 children: req/s" % n, "000 %s, %s" % (base_line, line), figure / base,
                        ratio(rps[n], rps[2]), writeup="%d / %d = %.2fx" % (figure, base, figure / base)),
                c.share("show_articles, %d children: web CPU" % n, "000 " + line, web, cpu[n])]
    return out + _end(32, rps[32], cpu[32], show["32"],
                      (("000 L149", "130"), ("000 L149", "92 %"), ("000 L150", "web")))
