"""bench's board suite, sutlab --workers 1 and PostgreSQL on the server CPU, wrk and pgbench on
the other: (1) at medium size, GET /api/articles/:slug and the index at a random offset next to
pgbench running each endpoint's own statement; (2) at large size, the index with
--count-pagination off, on and estimate, sutlab restarted for every run (the engine's run_on, on a
ServerTarget); (3) the estimate's error against the exact count per filter at each of
--estimate-sizes (board_estimate), printed, not judged."""

import os
import re
import time

from .. import engine
from ..engine.targets import ServerTarget
from ..services import procs
from ..errors import RunError
from ..report import fmt
from . import board_estimate, board_report, board_sql, common
from .board_sql import ARTICLE_PATH, PAGE_PATH
from .common import BOARD_ARTICLE_SCRIPT, BOARD_PAGE_SCRIPT, WRK_LINE_SCRIPT, WRK_SCRIPT, log

TIMEOUT_S = 30  # wrk --timeout and sutlab --db-timeout (s): queued index queries must not fail
MODES = ("count-off", "count-on", "count-estimate")
MODE_FLAGS = {"count-off": ["--count-pagination", "off"], "count-on": ["--count-pagination", "on"],
              "count-estimate": ["--count-pagination", "estimate"]}
WHO = ("sutlab", "pgbench")


def max_offset(args, n):
    return n - 20 if args.max_offset is None else min(args.max_offset, n - 20)


def board_server(ctx, name, flags):
    return common.sutlab_server(ctx, name, ctx.port(), ["--db-url", ctx.svc.db_url, "--workers", "1",
                                                        "--db-timeout", str(TIMEOUT_S * 1000)] + flags, "/readyz")


def measured(ctx, server, fn):
    """One measured run: fn() runs the load generator; CPU of sutlab (when given) and PostgreSQL
    around it, and what the rest of the machine took of the server CPU meanwhile; then PostgreSQL
    is let finish what the run left queued (outside the meter)."""
    args, svc = ctx.args, ctx.svc
    trees, servers = {"postgres": svc.pg_pid}, []
    if server is not None:
        trees["sutlab"], servers = server, [server]
    common.check_alive(servers, "is no longer running")
    size = svc.pg_size()
    busy0, irq0, steal0 = procs.cpu_stat(args.server_cpu)
    t0 = time.monotonic()
    with common.Meter(trees) as meter:
        r = fn()
        if server is None:
            svc.settle(size)
    busy1, irq1, steal1 = procs.cpu_stat(args.server_cpu)
    ticks = (time.monotonic() - t0) * procs.CLK_TCK
    # clamped at 0: process and CPU tick counts are sampled apart and differ by a tick or two
    r["others"] = max(0.0, 100.0 * (busy1 - busy0 - meter.cpu_s() * procs.CLK_TCK) / ticks)
    r["steal"] = 100.0 * (steal1 - steal0) / ticks
    r["irq"] = 100.0 * (irq1 - irq0) / ticks
    common.check_alive(servers, "died during the run")
    r["drain_s"] = svc.drain(server.name if server is not None else "pgbench")
    r.update(meter.per_request(r["requests"]))
    r["cpu_timeline"] = meter.timeline
    r.setdefault("sutlab", None)
    return r


def progress(ctx, part):
    args = ctx.args

    def line(rnd, name, r):
        log("bench: board %s round %d/%d %-16s %9.1f req/s  p50 %s ms  p99 %s ms  CPU us/req sutlab %s "
            "pg %s loadgen %s%s  CPU %d: others %.0f%% irq %.0f%% steal %.0f%%%s"
            % (part, rnd, args.rounds, name, r["rps"], fmt(r["p50"], 3), fmt(r["p99"], 3),
               fmt(r["sutlab"], 1), fmt(r["postgres"], 1), fmt(r["loadgen"], 1),
               "  errors %d" % r["errors"] if r["errors"] else "", args.server_cpu, r["others"], r["irq"],
               r["steal"], "  (then %.1f s draining)" % r["drain_s"] if r["drain_s"] > 0.5 else ""))
    return line


# ---------------------------------------------------------------------------------------------
# Part 1: the article read and the index next to pgbench

def dump_slugs(ctx, n):
    """Every article's slug, in id order, in a file for random_line.lua; (slugs, path)."""
    slugs = ctx.svc.psql(["-c", "COPY (SELECT slug FROM articles ORDER BY id) TO STDOUT"],
                         "slug dump", timeout=120).splitlines()
    if len(slugs) != n or not all(re.fullmatch(r"[A-Za-z0-9._~-]+", x) for x in slugs[:1000]):
        raise RunError("slug dump: %d lines for %d articles, or slugs that are not URL-safe" % (len(slugs), n))
    path = os.path.join(ctx.tmpdir, "slugs.txt")
    with open(path, "w") as f:
        f.write("\n".join(slugs) + "\n")
    return slugs, path


def endpoints(ctx, n, maxoff, slugs_path):
    """(name, title, wrk options, pgbench script, pgbench defines) of the two endpoints."""
    seed = ctx.args.seed
    return (("article", "GET /api/articles/:slug",
             dict(script=WRK_LINE_SCRIPT, timeout=TIMEOUT_S, script_args=[ARTICLE_PATH, slugs_path, seed]),
             BOARD_ARTICLE_SCRIPT, [("viewer", 0), ("loaded", 0), ("narticles", n)]),
            ("page", "GET /api/articles?limit=20&offset=K",
             dict(script=WRK_SCRIPT, timeout=TIMEOUT_S, script_args=[PAGE_PATH, maxoff, seed, 0]),
             BOARD_PAGE_SCRIPT, [("viewer", 0), ("limit", 21), ("maxoffset", maxoff)]))


def check_part1(ctx, port, slugs, maxoff):
    """The endpoints answer, pgbench's statements are sutlab's; one execution of each in
    PostgreSQL alone. (checks, pg_alone)."""
    svc = ctx.svc
    r = board_sql.get(port, ARTICLE_PATH + slugs[0])
    if r.status != 200 or board_sql.article_slug(r.body) != slugs[0]:
        raise RunError("GET %s%s returned %s %r" % (ARTICLE_PATH, slugs[0], r.status, r.body[:200]))
    board_sql.page_check(port, 21, "lower-bound", "count off")
    checks = {"article": board_sql.check_same_statement(svc, port, ARTICLE_PATH + slugs[0], BOARD_ARTICLE_SCRIPT,
                                                        [0, slugs[0]], "article"),
              "page": board_sql.check_same_statement(svc, port, PAGE_PATH + "0", BOARD_PAGE_SCRIPT,
                                                     [0, 21, 0], "page")}
    for k, v in checks.items():
        log("bench: board: %s: %s" % (k, v))
    article = "PREPARE a AS " + board_sql.pgbench_statement(BOARD_ARTICLE_SCRIPT)[1]
    page = "PREPARE p AS " + board_sql.pgbench_statement(BOARD_PAGE_SCRIPT)[1]
    return checks, {"article": board_sql.explain_ms(svc, article, "EXECUTE a(0, '%s')" % slugs[len(slugs) // 2]),
                    "page0": board_sql.explain_ms(svc, page, "EXECUTE p(0, 21, 0)"),
                    "pagemax": board_sql.explain_ms(svc, page, "EXECUTE p(0, 21, %d)" % maxoff)}


def endpoint_rounds(ctx, server, endpoint):
    """sutlab (wrk) and pgbench alternated on one endpoint: {who: [result per round]}."""
    args, svc = ctx.args, ctx.svc
    ep, _, wrk_kw, script, defs = endpoint
    log_prefix = os.path.join(ctx.tmpdir, "pgbench_log")

    def load(who, seconds, logged):
        if who == "sutlab":
            return common.run_wrk(args, server.port, None, seconds, **wrk_kw)
        prefix = log_prefix if logged else None
        return common.run_pgbench(common.pgbench_argv(args, svc.db_url, seconds, script, defs, prefix),
                                  seconds, prefix)

    def warm(who, seconds):
        size = svc.pg_size()
        load(who, seconds, False)
        svc.settle(size)
        svc.drain("the warm-up")

    def contender(who):
        return engine.Arm(who, lambda s: measured(ctx, server if who == "sutlab" else None,
                                                        lambda: load(who, s, True)),
                                lambda s: warm(who, s))

    prog = progress(ctx, ctx.args.board_size)
    return engine.run_rounds([contender(w) for w in WHO], args.rounds, args.duration, args.warmup,
                             log=lambda m: log("bench: board: %s %s" % (ep, m)),
                             on_result=lambda rnd, who, r: prog(rnd, "%s %s" % (ep, who), r))


def run_part1(ctx):
    args, svc = ctx.args, ctx.svc
    res = {"db": board_sql.prepare_db(svc, args.board_size)}
    n = res["db"]["articles"]
    res["maxoff"] = maxoff = max_offset(args, n)
    slugs, slugs_path = dump_slugs(ctx, n)
    npg = svc.pin_pg(args.server_cpu)
    log("bench: board: %d articles (%s); PostgreSQL (postmaster %d, %d processes) pinned to CPU %d"
        % (n, res["db"]["size"], svc.pg_pid, npg, args.server_cpu))
    server = board_server(ctx, "sutlab-board", ["--no-count-pagination"])
    res["endpoints"] = endpoints(ctx, n, maxoff, slugs_path)
    try:
        log("bench: board: starting sutlab on 127.0.0.1:%d (CPU %d)" % (server.port, args.server_cpu))
        server.start()
        res["checks"], res["pg_alone"] = check_part1(ctx, server.port, slugs, maxoff)
        res["load_before"] = procs.loadavg()
        res["runs"] = {ep[0]: endpoint_rounds(ctx, server, ep) for ep in res["endpoints"]}
        res["load_after"] = procs.loadavg()
        res["cmds"] = {(ep, "sutlab"): common.short_cmd(common.wrk_argv(args, server.port, None, args.duration, **kw))
                       for ep, _, kw, _, _ in res["endpoints"]}
        res["cmds"].update({(ep, "pgbench"): common.short_cmd(common.pgbench_argv(
            args, svc.db_url, args.duration, script, defs, "TMP/pgbench_log"))
            for ep, _, _, script, defs in res["endpoints"]})
        res["server_cmd"] = common.short_cmd(server.argv)
    finally:
        server.stop()
    return res


# ---------------------------------------------------------------------------------------------
# Part 2: --count-pagination off, on and estimate

# each mode's first page: what articlesCount it answers on n freshly analyzed articles, and its kind
# (estimate: the planner's rows, which ANALYZE samples: exact on small tables, within a few per mille
# of n at large, where 1,000,014 was read for 1,000,000; the check is that the mode answers one)
FIRST_PAGE = {"count-off": lambda n: (21, "lower-bound"), "count-on": lambda n: (n, "exact"),
              "count-estimate": lambda n: ((int(n * 0.9), int(n * 1.1)), "estimate")}


def mode_arm(ctx, mode, target, res, wrk_kw, pg_base):
    """--count-pagination off, on or estimate: every run on a sutlab the target starts (with the
    mode's flags) and the setup checks and warms, stopped after it, its backends gone."""
    args, svc = ctx.args, ctx.svc

    def setup():
        server = target.server
        res["argv"][mode] = common.short_cmd(server.argv)
        board_sql.page_check(server.port, *FIRST_PAGE[mode](res["db"]["articles"]), mode)
        if args.warmup:
            log("bench: board: warmup %s (%ds)" % (mode, args.warmup))
            common.run_wrk(args, server.port, None, args.warmup, **wrk_kw)
            svc.drain("the warm-up")

    def teardown():
        target.stop()
        procs.wait_tree_size(svc.pg_pid, pg_base, 30)  # sutlab's backends gone

    return engine.Arm(mode, flags=MODE_FLAGS[mode], setup=setup, teardown=teardown)


def mode_target(ctx):
    """The engine's target for part 2: a board sutlab with the arm's flags, named after it."""
    def new_server(flags, mode):
        server = board_server(ctx, "sutlab-%s" % mode, flags)
        log("bench: board: starting sutlab %s on 127.0.0.1:%d (CPU %d)" % (mode, server.port, ctx.args.server_cpu))
        return server
    return ServerTarget(new_server)


def run_part2(ctx):
    args, svc = ctx.args, ctx.svc
    res = {"db": board_sql.prepare_db(svc, args.large_size), "argv": {}}
    n = res["db"]["articles"]
    res["maxoff"] = maxoff = max_offset(args, n)
    npg = svc.pin_pg(args.server_cpu)
    log("bench: board: %d articles (%s); PostgreSQL (%d processes) pinned to CPU %d"
        % (n, res["db"]["size"], npg, args.server_cpu))
    page = "PREPARE p AS " + board_sql.pgbench_statement(BOARD_PAGE_SCRIPT)[1]
    res["pg_alone"] = {"count": board_sql.explain_ms(svc, None, "SELECT count(*) FROM articles"),
                       "page0": board_sql.explain_ms(svc, page, "EXECUTE p(0, 21, 0)"),
                       "pagemax": board_sql.explain_ms(svc, page, "EXECUTE p(0, 21, %d)" % maxoff)}
    wrk_kw = dict(script=WRK_SCRIPT, timeout=TIMEOUT_S, connections=args.large_connections,
                  script_args=[PAGE_PATH, maxoff, args.seed, 0])
    pg_base = svc.pg_size()
    res["load_before"] = procs.loadavg()
    target = mode_target(ctx)

    def measure(arm, rnd, seconds):
        server = target.server
        return measured(ctx, server, lambda: common.run_wrk(args, server.port, None, seconds, **wrk_kw))

    try:
        res["runs"] = engine.run_on(target, [mode_arm(ctx, m, target, res, wrk_kw, pg_base) for m in MODES],
                                    measure, args.rounds, args.duration, on_result=progress(ctx, args.large_size))
    finally:
        target.stop()
    res["load_after"] = procs.loadavg()
    res["flip_cmd"] = common.short_cmd(common.wrk_argv(args, 0, None, args.duration, **wrk_kw))
    return res


def run(ctx):
    res = {"part1": run_part1(ctx), "part2": run_part2(ctx)}
    res["part3"] = board_estimate.run(ctx, lambda name, flags: board_server(ctx, name, flags))
    return res


def print_report(ctx, res):
    board_report.print_part1(ctx, res["part1"])
    board_report.print_part2(ctx, res["part2"])
    board_report.print_part3(ctx, res["part3"])
