"""The blog write-up's scenario (000, steps 17-25), stage by stage, as a scale model of its machines at their
largest (two web servers, a db.m5.2xlarge), fitted on its 8-user rows (blog000.py); the rest predicted."""

import os

from .. import dbindex, routeshare
from . import blog000 as b, checks as ck, texts
from .common import LabRestart, cpu_range, cpu_share, fmt, load, loadavg, num, row_at, runs_table
from .scale import Machine, Topology

NAME, TITLE = "blog-scenario", "The blog scenario, stage by stage: count, index, two web servers, database CPU"
WRITEUP, INVENTED = texts.load(__name__)  # blog_scenario.md
STEP_SECONDS, WARMUP, INDEX_ROUTE, TWO = 30, 20, "/api/articles", ("--instances", "2", "--lb", "haproxy")
# name, count flag, infra/lab up options, name index on, the stage's machines (vCPU), users
STAGES = (("baseline", "--count-pagination", (), False, {}, (8, 32)),
          ("count removed", "--no-count-pagination", (), False, {}, (8, 32)),
          ("name index", "--no-count-pagination", (), True, {}, (32,)),
          ("two web", "--no-count-pagination", TWO, True, {"web": 4}, (32,)),
          ("db x2", "--no-count-pagination", TWO, True, {"web": 4, "db": 4}, (32,)),
          ("db x4", "--no-count-pagination", TWO, True, {"web": 4, "db": 8}, (64,)))
# (stage, users): the write-up's row (the 8-user ones are the model's anchors)
ROWS = {("baseline", 8): dict(b.L168, cite="000 L168"), ("count removed", 8): dict(b.L180, cite="000 L180"),
        ("baseline", 32): dict(cite="000 L169", rps=32, ms=628, web=(30, 50), db=99),
        ("count removed", 32): dict(cite="000 L181", rps=55, ms=200, web=(65, 90), db=84),
        ("name index", 32): dict(cite="000 L186", rps=63, ms=144, web=(50, 80), db=66),
        ("two web", 32): dict(cite="000 L221", rps=34, ms=507, web=20, db=100),
        ("db x4", 64): dict(cite="000 L227", rps=120, ms=165, web=70, db=81)}
STEPS = ((("baseline", 32), ("count removed", 32)), (("count removed", 32), ("name index", 32)),
         (("name index", 32), ("two web", 32)), (("two web", 32), ("db x4", 64)))
TIERS = ((("baseline", 32), "000 L169, L171"), (("two web", 32), "000 L221, L222"), (("db x2", 32), "000 L223"))
TOPOLOGY, FITS, S = Topology(
    [b.WEB, Machine("web", "a second m5.large behind the ALB, from step 22 (type inferred)", 2, "000 L204"),
     Machine("db", "the database: db.m5.large (inferred), then db.m5.xlarge, then db.m5.2xlarge", 8, "000 L223-L224"),
     b.LOAD], b.LOAD_WORDS + "; 8, 32 and 64 users (L168-L227)", b.UNSTATED), \
    b.FITS, 1.4 / 12
WHY_S = "1.4 cores for the 12 vCPU of its last stage: two web servers and a db.m5.2xlarge"


def run(ctx):
    model, before, runs, up, dropped, secs = ctx.scale(TOPOLOGY, S, FITS, WHY_S), loadavg(), {}, None, False, \
        ctx.seconds(STEP_SECONDS)
    try:
        knobs = b.prepare(ctx, model, ["--count-pagination"], secs, ctx.warmup(WARMUP))
        for name, count, opts, index, vcpus, users in STAGES:
            model.stage(web=vcpus.get("web", 2), db=vcpus.get("db", 2))
            if opts != up and up is not None:
                ctx.up("small" if ctx.quick or model.full else model.knob("size"), b.BASE + knobs + [count], *opts)
            up = opts
            LabRestart(ctx).apply(b.BASE + knobs + [count], name)
            if dropped == index:  # dropped for the stages without it, restored for the others
                ctx.run(dbindex.command("on" if index else "off", dbindex.USERS_BY_NAME), "the name index")
                dropped = not index
            runs[name] = ctx.steps(name, load("locust", users, secs, ctx.warmup(WARMUP)) + ["--scenario", "blog-writeup",
                                   "--locust-arg=--fixture-users=1000"] + b.think_args(model))
    finally:
        if dropped:
            ctx.run(dbindex.command("on", dbindex.USERS_BY_NAME), "the name index")
        ctx.lab("down")
    routes = routeshare.read_csv(os.path.join(ctx.out, "baseline", "routes.csv")).get(32.0, [])
    shown = {k: [dict(r, web=100 * (cpu_share(r, "web") or 0), db=100 * (cpu_share(r, "db") or 0)) for r in v]
             for k, v in runs.items()}
    return ["Locust `blog-writeup`, %d s a level after %d s of warm-up, `%s`; load average %s before, %s after"
            % (secs, ctx.warmup(WARMUP), " ".join(b.BASE + knobs), before, loadavg()),
            runs_table(["stage", "users", "req/s", "mean ms", "web CPU % of budget", "db CPU % of budget", "verdict"],
                       shown, ("rps", "mean_ms", "web", "db", "verdict")),
            "Baseline at 32 users, server time per route (the write-up's APM: articles.index, 000 L173):\n\n" +
            "\n".join("| %s | %.1f %% |" % (r, 100 * s) for r, s in routes)], checks(runs, routes, model)


def checks(runs, routes, model):
    at, out = (lambda key: row_at(runs.get(key[0], []), key[1])), []  # noqa: E731
    for key, w in ROWS.items():
        r, what = at(key), "%s, %d users: " % key
        if key[1] == 8:
            out.append(ck.set_by(what + "req/s, ms", w["cite"], "%d, %d ms (model: %.1f, %.0f)" % (
                w["rps"], w["ms"], model.rate(w["rps"]), model.time(w["ms"])), "an anchor of the fits",
                "%s, %s ms" % (fmt(num(r, "rps"), 1), fmt(num(r, "mean_ms"), 0))))
            continue
        out += [ck.set_by(what + "req/s", w["cite"], "%d (x%.3g: %.1f)" % (w["rps"], model.rate(1), model.rate(w["rps"])),
                          "follows from the latency: users / (latency + think time)", fmt(num(r, "rps"), 1)),
                ck.latency(what + "mean latency", w["cite"], model.time(w["ms"]) / 1000.0, num(r, "mean_ms"),
                           "%d ms (/ s: %.0f ms)" % (w["ms"], model.time(w["ms"]))),
                ck.share(what + "db CPU of its budget", w["cite"], w["db"], cpu_share(r, "db")),
                (cpu_range if isinstance(w["web"], tuple) else ck.share)(what + "web CPU of its budget", w["cite"],
                                                                         w["web"], cpu_share(r, "web"))]
    for a, z in STEPS:
        wa, wz = ROWS[a], ROWS[z]
        ratio = num(at(z), "rps") / num(at(a), "rps") if num(at(z), "rps") and num(at(a), "rps") else None
        what, cite = "%s %d -> %s %d: req/s" % (a + z), "%s, %s" % (wa["cite"], wz["cite"][4:])
        out.append(ck.quotient(what, cite, (wz["rps"], wa["rps"]), ratio, part="bottleneck"))
        if wz["rps"] > wa["rps"] and wz["rps"] / wa["rps"] / ck.RATIO_BAND < 1:  # a band that admits a fall
            out.append(ck.direction(what + " up", cite, "%d -> %d" % (wa["rps"], wz["rps"]), num(at(a), "rps"),
                                    num(at(z), "rps")))
    out += [ck.tier("%s, %d users: the tier that limits" % key, cite, "db", [at(key).get("verdict") or ""])
            for key, cite in TIERS]
    top = routes[0][0] if routes else "-"
    return out + [ck.Check("baseline 32: the route with the most server time", INDEX_ROUTE + " (articles.index)",
                           "000 L173", top, "the index page first", top == INDEX_ROUTE, "tier"),
                  ck.not_limited_by_load("every step: not the load tool", "000 L9",
                                         [r.get("verdict") for rows in runs.values() for r in rows])]
