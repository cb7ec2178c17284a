"""The Laravel blog write-up's php-fpm stages (000): a web tier whose CPU per request was PHP's, so
that the number of php-fpm children, OPcache and a second web server each showed. sutlab spends
~50 us per request; --app-cpu-us N makes each request to an app route cost N us of CPU, inline on
the sync worker as a php-fpm child's does, and --db-latency-ms N gives each query the round trip of
the write-up's remote database.

Those two knobs are fitted to some of the write-up's figures, which are then shown as `set` and
not counted (checks.py): what is counted is what the fit does not fix, the children sweep of
show_articles between its two fitted ends, and the tiers the write-up names."""

from ..report import fmt, ratio
from . import checks as c, texts
from .common import load, loadavg, runs_table, sweep, top

NAME = "php-fpm"
TITLE = "A web tier as slow as PHP: children, OPcache, a second server"
WRITEUP, INVENTED = texts.load(__name__)  # php_fpm.md

SHOW_WORKERS = (2, 4, 8, 16, 32)
SHOW_CPU_US, SHOW_LATENCY_MS, SHOW_CONNECTIONS = 7000, 29, 64
# the write-up's best req/s at 2 children, and at 4, 8 and 16 with the web CPU on that row; the lines
SHOW_BASE = (63, "L124")
SHOW_WRITEUP = {4: (99, 65, "L133"), 8: (120, 86, "L139"), 16: (125, 88, "L144")}

LEVELS = "2,4,8"
STEP_SECONDS = 10
NO_OPCACHE, OPCACHE = 47600, 4760
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
    show = [("show-articles-%d" % n, SYNC + ["--workers", str(n), "--app-cpu-us", str(SHOW_CPU_US),
                                              "--db-latency-ms", str(SHOW_LATENCY_MS)]) for n in SHOW_WORKERS]
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
            "show_articles: wrk `article_by_slug.lua` with %d connections, %d s per stage, `--db-mode sync "
            "--app-cpu-us %d --db-latency-ms %d`, sutlab pinned to one core"
            % (SHOW_CONNECTIONS, ctx.seconds(STEP_SECONDS), SHOW_CPU_US, SHOW_LATENCY_MS),
            runs_table(["children", "connections", "req/s", "p99 ms", "web CPU %", "web busy %", "db CPU %", "verdict"],
                       show, ("rps", "p99_ms", "cpu_web_pct", "busy_web", "cpu_db_pct", "verdict"))]


# /health_check's figures, each set by --app-cpu-us or by the pinning: (figure, line, write-up, knob,
# the stage measured, the stage it is divided by or None for its req/s)
HEALTH_SET = (
    ("/health_check, 2 children: req/s", "000 L59-L61", "21", "--app-cpu-us %d on one core" % NO_OPCACHE,
     "2 children", None),
    ("/health_check, 4 children / 2", "000 L67-L70", "22 / 21 = 1.05x",
     "CPU-only requests, 2 and 4 workers on one pinned core", "4 children", "2 children"),
    ("/health_check, OPcache / none", "000 L59, L96", "237 / 21 = 11.3x", "--app-cpu-us %d, a tenth" % OPCACHE,
     "OPcache", "2 children"),
    ("/health_check, 2 servers / 1 behind the LB", "000 L203, L210", "425 / 220 = 1.93x",
     "each instance pinned to a core of its own", "2 servers behind HAProxy", "1 server behind HAProxy"))
# show_articles' ends, the fit of the two knobs: children: ((line, write-up) of its req/s, of its web
# CPU, both set; then (line, tier) of its tier, counted)
SHOW_ENDS = {2: (("000 L123-L124", "55 at 2 users, 63 at 4"), ("000 L123-L125", "36-40 %"), ("000 L126", "below limits")),
             32: (("000 L149", "130"), ("000 L149", "92 %"), ("000 L150", "web"))}
FIT = "--app-cpu-us %d --db-latency-ms %d" % (SHOW_CPU_US, SHOW_LATENCY_MS)


def checks(runs):
    """/health_check: every figure is set by --app-cpu-us or by the pinning; the tier is counted."""
    rps = {stage: top(rows) for stage, rows in runs.items()}
    out = [c.set_by(what, line, writeup, knob, fmt(rps[a], 0) if b is None else fmt(ratio(rps[a], rps[b]), 2, "{}x"))
           for what, line, writeup, knob, a, b in HEALTH_SET]
    return out[:1] + [c.tier("/health_check, 2 and 4 children: the tier that limits", "000 L63-L64", "web",
                             [r.get("verdict") for r in runs["2 children"] + runs["4 children"]])] + out[1:]


def _end(n, rps, cpu, rows):
    """show_articles at one end of the fit: its req/s and web CPU set, its tier counted."""
    (rps_line, rps_writeup), (cpu_line, cpu_writeup), (tier_line, tier) = SHOW_ENDS[n]
    what = "show_articles, %d children: " % n
    return [c.set_by(what + "req/s", rps_line, rps_writeup, FIT, fmt(rps, 0)),
            c.set_by(what + "web CPU", cpu_line, cpu_writeup, FIT, fmt(None if cpu is None else 100 * cpu, 0, "{} %")),
            c.tier(what + "the tier that limits", tier_line, tier, [r.get("verdict") for r in rows])]


def show_checks(show):
    """show_articles: the 2- and 32-children ends are the fit of the two knobs (set); 4, 8 and 16
    children and the tiers at the ends are counted. The web tier's figure is its CPU of its one core
    (the write-up's is CPU; the busy share also counts time runnable, waiting for the core)."""
    rps = {n: top(show[str(n)]) for n in SHOW_WORKERS}
    cpu = {n: ratio(top(show[str(n)], "cpu_web_pct"), 100) for n in SHOW_WORKERS}
    base, base_line = SHOW_BASE
    out = _end(2, rps[2], cpu[2], show["2"]) + [
        c.direction("show_articles, more children (2 -> 4): req/s", "000 L124, L133", "63 -> 99", rps[2], rps[4])]
    for n, (figure, web, line) in SHOW_WRITEUP.items():
        out += [c.ratio("show_articles, %d / 2 children: req/s" % n, "000 %s, %s" % (base_line, line), figure / base,
                        ratio(rps[n], rps[2]), writeup="%d / %d = %.2fx" % (figure, base, figure / base)),
                c.share("show_articles, %d children: web CPU" % n, "000 " + line, web, cpu[n])]
    return out + _end(32, rps[32], cpu[32], show["32"])
