"""The tables of bench's board suite, with what was compared and how."""

from .. import report
from ..services import procs
from ..report import fmt
from .common import NOISE_NOTE, print_head

ARTICLE_TARGET = 1.2  # the board suite's target: GET /api/articles/:slug req/s / pgbench tps on its statement
PAGE_TARGET = 1.0     # GET /api/articles (count off) req/s / pgbench tps on the page query
FLIP_TARGET = 5.0     # index req/s with --count-pagination off / on, at large
KEYS = ("rps", "p50", "p99", "sutlab", "postgres", "loadgen", "others")


def all_runs(runs_by):
    return [r for rs in runs_by for r in rs]


def drain_note(runs):
    worst = max((r.get("drain_s", 0.0) for r in runs), default=0.0)
    return ("after every run, outside the measurement, bench waited for PostgreSQL to finish "
            "the queries sutlab had already sent for requests wrk abandoned at its deadline "
            "(at most %.1f s)" % worst)


def tick_note(runs):
    """What one clock tick of CPU time is worth per request in the run with fewest requests."""
    fewest = min((r["requests"] for r in runs if r["requests"]), default=0)
    if not fewest:
        return ""
    return ("CPU resolution: one clock tick (%d ms) is %.1f us/req in the run with fewest "
            "requests (%d)" % (1000 // procs.CLK_TCK, 1e6 / procs.CLK_TCK / fewest, fewest))


def target_line(label, runs_a, runs_b, target):
    value, text = report.round_ratios(runs_a, runs_b)
    mark = "✓" if value is not None and value >= target else "✗"
    return "  %-36s %s   target >= %.1fx %s" % (label, text, target, mark)


def seeded(db):
    return "" if db["seed_s"] is None else " (seeded in %.1f s)" % db["seed_s"]


def print_part1_setup(ctx, res):
    args, svc = ctx.args, ctx.svc
    db, n, maxoff = res["db"], res["db"]["articles"], res["maxoff"]
    print_head("board (1/2): GET /api/articles/:slug and GET /api/articles?limit=20&offset=K vs "
               "pgbench on the same statements", ctx, res["load_before"], res["load_after"])
    print("data: sutlab db seed --size %s: %d articles, %d users, %d tags%s; then VACUUM "
          "(FREEZE, ANALYZE) and CHECKPOINT (%.1f s)"
          % (db["size"], n, db["users"], db["tags"], seeded(db), db["vacuum_s"]))
    print("placement: sutlab and PostgreSQL (postmaster %d + every process under it) on CPU %d; "
          "wrk / pgbench on CPU %d" % (svc.pg_pid, args.server_cpu, args.wrk_cpu))
    print("server:  %s" % res["server_cmd"])
    print("  (one event loop, its default --db-conns 2 pipelined PostgreSQL connections; "
          "--db-timeout raised so that queued index queries are not cut at 5 s)")
    for ep, *_ in res["endpoints"]:
        print("%-8s sutlab:  %s" % (ep, res["cmds"][(ep, "sutlab")]))
        print("%-8s pgbench: %s" % ("", res["cmds"][(ep, "pgbench")]))
    print("what is compared:")
    print("  article  wrk: a slug drawn uniformly from all %d articles for every request "
          "(random_line.lua over SELECT slug FROM articles ORDER BY id); pgbench: the same "
          "statement, $1 = 0 (anonymous viewer), $2 = a slug. pgbench's \\set draws numbers only, "
          "so each of its %d sessions looks one random article up in its first transaction "
          "(\\gset) and reads it for the rest of the run: one statement per transaction, like "
          "the endpoint, but %d hot articles instead of all of them (favours pgbench slightly; "
          "a lookup per transaction would be a second query, 25-30%% of its rate here)."
          % (n, args.pgbench_clients, args.pgbench_clients))
    print("  page     K uniform in 0..%d on both sides (%s); pgbench runs the page query with "
          "LIMIT 21: with --count-pagination off the endpoint fetches limit+1 rows to know "
          "whether a next page exists, and runs no count."
          % (maxoff, "--max-offset all: every page" if args.max_offset is None else
             "--max-offset %d: the first %d pages; all = 0..%d" % (args.max_offset, maxoff // 20 + 1, n - 20)))
    print("  same SQL: pgbench writes the to_char format's colons as E'...\\x3a...' (it takes "
          "':name' for a variable even inside quotes) and the second viewer reference as a "
          "literal $1; checked before the runs:")
    for k in ("article", "page"):
        print("    %-8s %s" % (k, res["checks"][k]))
    alone = res["pg_alone"]
    print("  one execution in PostgreSQL alone (EXPLAIN ANALYZE, warm): article %s ms, page "
          "at offset 0 %s ms, at offset %d %s ms"
          % (fmt(alone["article"], 2), fmt(alone["page0"], 2), maxoff, fmt(alone["pagemax"], 2)))
    print("rounds: %d per endpoint, order sutlab pgbench then pgbench sutlab (alternating), %ds "
          "each, warmup %ds; medians over rounds; concurrency %d on both sides (wrk -c%d, "
          "pgbench -c%d = %d backends)"
          % (args.rounds, args.duration, args.warmup, args.connections, args.connections,
             args.pgbench_clients, args.pgbench_clients))


def print_part1(ctx, res):
    args, runs = ctx.args, res["runs"]
    cpu = args.server_cpu
    print_part1_setup(ctx, res)
    print(drain_note(all_runs(rs for ep in runs.values() for rs in ep.values())))
    print(NOISE_NOTE)
    print()
    rows, errors = [], 0
    for ep, title, *_ in res["endpoints"]:
        for who in ("sutlab", "pgbench"):
            m = report.medians(runs[ep][who], KEYS)
            errors += m["errors"]
            rows.append((title if who == "sutlab" else "", who, fmt(m["rps"], 1), fmt(m["p50"], 3),
                         fmt(m["p99"], 3), fmt(m["sutlab"], 1), fmt(m["postgres"], 1), fmt(m["loadgen"], 1),
                         fmt(m["others"], 0), str(m["errors"])))
    print(report.table(("endpoint", "run", "req/s", "p50 ms", "p99 ms", "sutlab CPU us/req", "postgres CPU us/req",
                        "loadgen CPU us/req", "CPU%d others %%" % cpu, "errors"), rows))
    print("(pgbench p50/p99 from its per-transaction log, nearest rank; CPU us/req = CPU time (user+sys) "
          "of that process tree during the run / requests completed; loadgen = wrk or pgbench "
          "itself, on CPU %d; CPU%d others = share of CPU %d's time, during the run, that went "
          "to processes other than sutlab and PostgreSQL (other work on this shared machine: "
          "the CPU scheduler shares it per thread, so pgbench's %d busy backends hold their "
          "ground against it better than sutlab's 2 connections); %s)"
          % (args.wrk_cpu, cpu, cpu, args.pgbench_clients,
             tick_note(all_runs(rs for ep in runs.values() for rs in ep.values()))))
    print()
    print("ratios sutlab/pgbench (req/s): ratio of the medians, then the median of the per-round "
          "ratios with every round's in brackets; each target (sutlab against pgbench on the same "
          "SQL) judged on the ratio of "
          "the medians:")
    print(target_line("article: sutlab / pgbench", runs["article"]["sutlab"], runs["article"]["pgbench"],
                      ARTICLE_TARGET))
    print(target_line("page (count off): sutlab / pgbench", runs["page"]["sutlab"], runs["page"]["pgbench"],
                      PAGE_TARGET))
    if errors:
        print("warning: some runs saw errors (socket errors / non-2xx for wrk, failed "
              "transactions for pgbench)")


def print_part2(ctx, res):
    args, runs, db = ctx.args, res["runs"], res["db"]
    cpu = args.server_cpu
    print_head("board (2/3): GET /api/articles?limit=20&offset=K, --count-pagination off, on, estimate", ctx,
               res["load_before"], res["load_after"], skews=False)
    print("data: sutlab db seed --size %s: %d articles%s; then VACUUM (FREEZE, ANALYZE) "
          "and CHECKPOINT (%.1f s)" % (db["size"], db["articles"], seeded(db), db["vacuum_s"]))
    print("placement: sutlab and PostgreSQL on CPU %d, wrk on CPU %d" % (cpu, args.wrk_cpu))
    for m in runs:
        print("server %-9s %s" % (m + ":", res["argv"].get(m, "")))
    print("load:    %s  (port 0 = each server's own); K uniform in 0..%d" % (res["flip_cmd"], res["maxoff"]))
    print("  (sutlab restarted for every run, warmed %ds first; %d connections: with the count "
          "on, each request queues behind the others' counts)" % (args.warmup, args.large_connections))
    alone = res["pg_alone"]
    print("one execution in PostgreSQL alone (EXPLAIN ANALYZE, warm, PostgreSQL on one CPU): "
          "SELECT count(*) FROM articles %s ms; page query at offset 0 %s ms, at offset %d %s ms"
          % (fmt(alone["count"], 2), fmt(alone["page0"], 2), res["maxoff"], fmt(alone["pagemax"], 2)))
    order = " ".join(m.split("-")[1] for m in runs)
    print("rounds: %d, order %s then reversed (alternating), %ds each; medians over rounds"
          % (args.rounds, order, args.duration))
    print(drain_note(all_runs(runs.values())))
    print()
    rows, errors = [], 0
    for mode, rs in runs.items():
        md = report.medians(rs, KEYS)
        errors += md["errors"]
        rows.append((mode.split("-")[1], fmt(md["rps"], 1), fmt(md["p50"], 3), fmt(md["p99"], 3),
                     fmt(md["sutlab"], 1), fmt(md["postgres"], 1), fmt(md["loadgen"], 1),
                     fmt(md["others"], 0), str(md["errors"])))
    print(report.table(("--count-pagination", "req/s", "p50 ms", "p99 ms", "sutlab CPU us/req",
                        "postgres CPU us/req", "wrk CPU us/req", "CPU%d others %%" % cpu, "errors"), rows, left=1))
    print("(%s)" % tick_note(all_runs(runs.values())))
    print()
    print("ratio off/on (req/s): how many times slower the count makes the index; target: the "
          "bottleneck reproduced:")
    print(target_line("count off / count on", runs["count-off"], runs["count-on"], FLIP_TARGET))
    print("ratios of the third setting (req/s), measured, no target: a page count without the count(*)")
    for label, a, b in (("estimate / on", "count-estimate", "count-on"), ("estimate / off", "count-estimate",
                                                                           "count-off")):
        print("  %-36s %s" % (label, report.round_ratios(runs[a], runs[b])[1]))
    if errors:
        print("warning: some wrk runs saw socket errors or non-2xx responses (errors column)")


def print_part3(ctx, rows):
    """The estimate's error against the exact count, per size and filter: printed, not judged."""
    print()
    print("board (3/3): --count-pagination estimate: articlesCount of the first one-row page against "
          "the exact count(*), per filter, at each of --estimate-sizes (%s)" % ",".join(ctx.args.estimate_sizes))
    print("data: each size seeded, then VACUUM (FREEZE, ANALYZE): the planner's statistics fresh; "
          "most = the value with the most rows, median = the middle one; feed = a follower's")
    print()
    out = []
    for size, name, which, value, exact, got, kind in rows:
        err = "-" if not exact else "%+.1f %%" % (100.0 * (got - exact) / exact)
        out.append((size, name, which, value, str(exact), str(got), kind, err))
    print(report.table(("size", "filter", "which", "value", "exact count", "articlesCount", "kind", "error"),
                       out, left=4))
    print("(error = (articlesCount - exact) / exact; the planner's figure for a filter is its average "
          "for such a filter, the unfiltered one the analyzed row count: docs/board-api.md)")
