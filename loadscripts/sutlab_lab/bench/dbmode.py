"""bench's dbmode suite: sutlab --workers 2 --db-mode sync vs async on GET /stores/N (N random),
alternated, once with PostgreSQL on the server's CPU and once on the other one."""

import json

from .. import engine, report
from ..services import client, procs
from ..errors import RunError
from ..report import fmt
from . import common
from .common import NOISE_NOTE, log

DBMODES = ("sync", "async")


def placements(args):
    """(name, PostgreSQL's CPU, description) of the two placements."""
    return (("shared", args.server_cpu,
             "sutlab + PostgreSQL on CPU %d, wrk on CPU %d" % (args.server_cpu, args.wrk_cpu)),
            ("split", args.wrk_cpu,
             "sutlab on CPU %d, PostgreSQL on CPU %d, wrk on CPU %d too (only two cores: the load "
             "generator shares PostgreSQL's core)" % (args.server_cpu, args.wrk_cpu, args.wrk_cpu)))


def check_store(server):
    r = client.request("http://127.0.0.1:%d/stores/1" % server.port, timeout=3)
    try:
        doc = json.loads(r.body)
        ok = r.status == 200 and doc.get("id") == 1 and "menus" in doc
    except (ValueError, AttributeError):
        ok = False
    if not ok:
        raise RunError("%s: GET /stores/1 returned %s %r" % (server.name, r.status, r.body[:200]))


def run_placement(ctx, pname, pg_cpu):
    """Both modes started, checked, then alternated in rounds: {mode: [result per round]}, and
    the servers' command lines."""
    args, svc = ctx.args, ctx.svc
    n = svc.pin_pg(pg_cpu)
    log("bench: dbmode %s: PostgreSQL (postmaster %d, %d processes in all) pinned to CPU %d"
        % (pname, svc.pg_pid, n, pg_cpu))
    servers = {m: common.sutlab_server(ctx, "sutlab-%s-%s" % (pname, m), ctx.port(),
                                       ["--db-url", svc.db_url, "--workers", "2", "--db-mode", m], "/readyz")
               for m in DBMODES}
    load = ["/stores/", svc.stores, args.seed]

    def contender(m):
        def run(seconds):
            return common.run_wrk(args, servers[m].port, None, seconds, script_args=load)
        return engine.Arm(m, lambda s: common.metered(
            lambda: run(s), {"sutlab": servers[m], "postgres": svc.pg_pid}, servers.values()), run)

    def progress(rnd, m, r):
        log("bench: dbmode %-6s round %d/%d %-5s %9.0f req/s  p50 %s ms  p99 %s ms  CPU us/req sutlab %s pg %s%s"
            % (pname, rnd, args.rounds, m, r["rps"], fmt(r["p50"], 3), fmt(r["p99"], 3), fmt(r["sutlab"], 1),
               fmt(r["postgres"], 1), "  errors %d" % r["errors"] if r["errors"] else ""))

    try:
        for m, s in servers.items():
            log("bench: dbmode %s: starting sutlab --db-mode %s on 127.0.0.1:%d (CPU %d)"
                % (pname, m, s.port, args.server_cpu))
            s.start()
            check_store(s)
        runs = engine.run_rounds([contender(m) for m in DBMODES], args.rounds, args.duration, args.warmup,
                                 log=lambda msg: log("bench: dbmode %s: %s" % (pname, msg)), on_result=progress)
    finally:
        for s in servers.values():
            s.stop()
    return runs, {m: common.short_cmd(s.argv) for m, s in servers.items()}


def run(ctx):
    """{"runs": {(placement, mode): [result per round]}, "servers_argv", "load_before", "load_after"}."""
    res = {"runs": {}, "load_before": procs.loadavg()}
    for pname, pg_cpu, _ in placements(ctx.args):
        runs, res["servers_argv"] = run_placement(ctx, pname, pg_cpu)
        res["runs"].update({(pname, m): r for m, r in runs.items()})
    ctx.svc.pin_pg(ctx.args.server_cpu)
    res["load_after"] = procs.loadavg()
    return res


def print_report(ctx, res):
    args = ctx.args
    common.print_head("dbmode: --db-mode sync vs async, --workers 2, GET /stores/N (store + menus, one query)",
                      ctx, res["load_before"], res["load_after"])
    print("data: sutlab db seed --size %s: N uniform in 1..%d (wrk Lua math.random, seed %d)"
          % (args.db_size, ctx.svc.stores, args.seed))
    for m in DBMODES:
        print("server %-5s %s" % (m + ":", res["servers_argv"][m]))
    print("  (sync: one blocking connection per worker, one request at a time per worker; "
          "async: --db-conns (default 2) pipelined connections per worker)")
    print("load:    %s  (port 0 = each server's own)"
          % common.short_cmd(common.wrk_argv(args, 0, None, args.duration,
                                             script_args=["/stores/", ctx.svc.stores, args.seed])))
    for pname, _, text in placements(args):
        print("placement %-6s %s" % (pname + ":", text))
    print("rounds: %d per placement, order sync async then async sync (alternating), %ds each, "
          "warmup %ds; medians over rounds" % (args.rounds, args.duration, args.warmup))
    print(NOISE_NOTE)
    print()
    rows, errors = [], 0
    for pname, _, _ in placements(args):
        for m in DBMODES:
            md = report.medians(res["runs"][(pname, m)], ("rps", "p50", "p99", "sutlab", "postgres", "loadgen"))
            errors += md["errors"]
            rows.append((pname, m, fmt(md["rps"], 0), fmt(md["p50"], 3), fmt(md["p99"], 3), fmt(md["sutlab"], 1),
                         fmt(md["postgres"], 1), fmt(md["loadgen"], 1), str(md["errors"])))
    print(report.table(("placement", "mode", "req/s", "p50 ms", "p99 ms", "sutlab CPU us/req",
                        "postgres CPU us/req", "wrk CPU us/req", "errors"), rows))
    print()
    print("ratios async/sync (req/s): ratio of the medians, then the median of the per-round "
          "ratios with every round's in brackets")
    for pname, _, _ in placements(args):
        print("  %-7s %s" % (pname, report.round_ratios(res["runs"][(pname, "async")],
                                                        res["runs"][(pname, "sync")])[1]))
    if errors:
        print("warning: some wrk runs saw socket errors or non-2xx/3xx responses (errors column)")
