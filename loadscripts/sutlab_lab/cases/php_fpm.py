"""The Laravel blog write-up's php-fpm stages (000): a web tier whose CPU per request was PHP's, so
that php-fpm's children, OPcache and a second web server each showed. --app-cpu-us N gives each app
request N us of CPU on the sync worker, as a php-fpm child's; --db-latency-ms N each query the remote
database's round trip. The knobs are fitted to some figures, shown as `set` (checks.py); counted are
the children sweep of show_articles between its two fitted ends, and the tiers the write-up names."""

from ..report import fmt, ratio
from . import checks as c, texts
from .common import load, loadavg, runs_table, sweep, top

NAME = "php-fpm"
TITLE = "A web tier as slow as PHP: children, OPcache, a second server"
WRITEUP, INVENTED = texts.load(__name__)  # php_fpm.md

LEVELS, STEP_SECONDS, NO_OPCACHE, OPCACHE, SYNC = "2,4,8", 10, 47600, 4760, ["--db-mode", "sync"]
# /health_check: (stage, directory, flags beside SYNC); then 1 and 2 servers behind HAProxy with OPcache's
HEALTH = (("2 children", "children-2", ["--workers", "2", "--app-cpu-us", str(NO_OPCACHE)]),
          ("4 children", "children-4", ["--workers", "4", "--app-cpu-us", str(NO_OPCACHE)]),
          ("OPcache", "opcache", ["--workers", "2", "--app-cpu-us", str(OPCACHE)]))
SCALED = (("1 server behind HAProxy", "haproxy-1", 1), ("2 servers behind HAProxy", "haproxy-2", 2))
# its figures, all set: (figure, line, write-up, knob, stage measured, stage divided by or None: its req/s)
HEALTH_SET = (
    ("2 children: req/s", "000 L59-L61", "21", "--app-cpu-us %d on one core" % NO_OPCACHE, "2 children", None),
    ("4 children / 2", "000 L67-L70", "22 / 21 = 1.05x", "CPU-only requests, 2 and 4 workers on one pinned core",
     "4 children", "2 children"),
    ("OPcache / none", "000 L59, L96", "237 / 21 = 11.3x", "--app-cpu-us %d, a tenth" % OPCACHE, "OPcache",
     "2 children"),
    ("2 servers / 1 behind the LB", "000 L203, L210", "425 / 220 = 1.93x", "each instance pinned to a core of its own",
     "2 servers behind HAProxy", "1 server behind HAProxy"))

SHOW_WORKERS, SHOW_CONNECTIONS, SHOW_CPU_US, SHOW_LATENCY_MS = (2, 4, 8, 16, 32), 64, 7000, 29
FIT = "--app-cpu-us %d --db-latency-ms %d" % (SHOW_CPU_US, SHOW_LATENCY_MS)
# the write-up's best req/s at 2 children (its line), and at 4, 8 and 16 with the web CPU on that row
SHOW_BASE, SHOW_WRITEUP = (63, "L124"), {4: (99, 65, "L133"), 8: (120, 86, "L139"), 16: (125, 88, "L144")}
# the fit's two ends: ((line, write-up) of the req/s, of the web CPU, (line, the tier that limits))
SHOW_ENDS = {2: (("000 L123-L124", "55 at 2 users, 63 at 4"), ("000 L123-L125", "36-40 %"),
                 ("000 L126", "below limits")), 32: (("000 L149", "130"), ("000 L149", "92 %"), ("000 L150", "web"))}


def run(ctx):
    """sutlab pinned to core 0, the load on core 1; scaled, each instance on a core and the (light)
    load where it can; then show_articles' sweep of children."""
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
    sections = ["ab on GET /health_check, levels %s clients, %d s each, `--db-mode sync`, each sutlab pinned to a "
            "core; load average %s before, %s after" % (LEVELS, seconds, before, loadavg()),
            runs_table(["stage", "clients", "req/s", "p99 ms", "web busy %", "lb busy %", "load busy %", "verdict"],
                       runs, ("rps", "p99_ms", "busy_web", "busy_lb", "busy_load", "verdict")),
            "show_articles: wrk `article_by_slug.lua` with %d connections, %d s per stage, `--db-mode sync %s`, "
            "sutlab pinned to one core" % (SHOW_CONNECTIONS, seconds, FIT),
            runs_table(["children", "connections", "req/s", "p99 ms", "web CPU %", "web busy %", "db CPU %", "verdict"],
                       shown, ("rps", "p99_ms", "cpu_web_pct", "busy_web", "cpu_db_pct", "verdict"))]
    return sections, checks(runs) + show_checks(shown)


def checks(runs):
    """/health_check: every figure is set (HEALTH_SET); the tier is counted."""
    rps = {stage: top(rows) for stage, rows in runs.items()}
    out = [c.set_by("/health_check, " + what, line, writeup, knob,
                    fmt(rps[a], 0) if b is None else fmt(ratio(rps[a], rps[b]), 2, "{}x"))
           for what, line, writeup, knob, a, b in HEALTH_SET]
    return out[:1] + [c.tier("/health_check, 2 and 4 children: the tier that limits", "000 L63-L64", "web",
                             [r.get("verdict") for r in runs["2 children"] + runs["4 children"]])] + out[1:]


def show_checks(show):
    """show_articles: the 2- and 32-children ends are the knobs' fit (set; their tiers counted), 4, 8 and 16
    children counted. The web tier's CPU of its one core (the write-up's is CPU, not the busy share)."""
    rps = {n: top(show[str(n)]) for n in SHOW_WORKERS}
    cpu = {n: ratio(top(show[str(n)], "cpu_web_pct"), 100) for n in SHOW_WORKERS}

    def end(n):
        (rps_line, rps_writeup), (cpu_line, cpu_writeup), (tier_line, tier) = SHOW_ENDS[n]
        what = "show_articles, %d children: " % n
        return [c.set_by(what + "req/s", rps_line, rps_writeup, FIT, fmt(rps[n], 0)),
                c.set_by(what + "web CPU", cpu_line, cpu_writeup, FIT, fmt(cpu[n] and 100 * cpu[n], 0, "{} %")),
                c.tier(what + "the tier that limits", tier_line, tier, [r.get("verdict") for r in show[str(n)]])]
    (base, base_line), out = SHOW_BASE, end(2)
    out.append(c.direction("show_articles, more children (2 -> 4): req/s", "000 L124, L133", "63 -> 99", rps[2],
                           rps[4]))
    for n, (figure, web, line) in SHOW_WRITEUP.items():
        out += [c.quotient("show_articles, %d / 2 children: req/s" % n, "000 %s, %s" % (base_line, line),
                           (figure, base), ratio(rps[n], rps[2])),
                c.share("show_articles, %d children: web CPU" % n, "000 " + line, web, cpu[n])]
    return out + end(32)
