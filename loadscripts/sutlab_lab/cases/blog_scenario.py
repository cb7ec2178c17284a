"""The blog write-up's scenario as it ran (000, steps 17-25), a row per stage beside the write-up's."""

import os

from .. import cpubudget, dbindex, routeshare
from ..errors import RunError
from ..services import lab
from . import checks as ck, texts
from .common import REPO, LabRestart, cpu_share, load, loadavg, num, over, row_at, runs_table

NAME = "blog-scenario"
TITLE = "The blog scenario, stage by stage: count, index, two web servers, database CPU"
WRITEUP, INVENTED = texts.load(__name__)  # blog_scenario.md

SIZE, STEP_SECONDS, WARMUP, INDEX_ROUTE = "large", 10, 20, "/api/articles"  # 8 s left logins in the window
TWO = ("--instances", "2", "--lb", "haproxy")
# name, count flag, infra/lab up options, name index on, db budget (cores), users
STAGES = (("baseline", "--count-pagination", (), False, 0.5, (8, 32)),
          ("count removed", "--no-count-pagination", (), False, 0.5, (8, 32)),
          ("name index", "--no-count-pagination", (), True, 0.5, (32,)),
          ("two web", "--no-count-pagination", TWO, True, 0.5, (32,)),
          ("db x2", "--no-count-pagination", TWO, True, 1.0, (32,)),
          ("db x4", "--no-count-pagination", TWO, True, 2.0, (64,)))
# (stage, users): the write-up's rps, ms, db CPU %, line
FIG = {("baseline", 8): (17, 98, 47, "L168"), ("baseline", 32): (32, 628, 99, "L169"),
       ("count removed", 8): (19, 63, 25, "L180"), ("count removed", 32): (55, 200, 84, "L181"),
       ("name index", 32): (63, 144, 66, "L186"), ("two web", 32): (34, 507, 100, "L221"),
       ("db x4", 64): (120, 165, 81, "L227")}
STEPS = ((("baseline", 8), ("count removed", 8)), (("baseline", 32), ("count removed", 32)),
         (("count removed", 32), ("name index", 32)), (("name index", 32), ("two web", 32)),
         (("two web", 32), ("db x4", 64)))
TIERS = ((("baseline", 32), "L169, L171"), (("two web", 32), "L221, L222"), (("db x2", 32), "L223"))


def run(ctx):
    if ctx.netns or not cpubudget.available():
        raise RunError("blog-scenario needs the single-box lab and a writable cgroup cpu controller (cpubudget.py)")
    before, runs, shown, up, dropped, secs = loadavg(), {}, {}, None, False, ctx.seconds(STEP_SECONDS)
    try:
        for name, count, opts, index, cores, users in STAGES:
            if opts != up:
                ctx.up(SIZE, ["--workers", "2", count], *opts)
                if up is None:
                    ctx.lab("seed", SIZE)  # up keeps the data a database holds
                up = opts
            LabRestart(ctx).apply(["--workers", "2", count], name)
            if dropped == index:  # dropped for the stages without it, restored for the others
                ctx.run(dbindex.command("on" if index else "off", dbindex.USERS_BY_NAME), "the name index")
                dropped = not index
            db = lab.roots(os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var"))["db"][0]
            with cpubudget.budget({"db": [db]}, {"db": cores}):
                runs[name] = ctx.steps(name, load("locust", users, secs, WARMUP) + [
                    "--scenario", "blog-writeup", "--locust-arg=--fixture-users=10000"])
            shown["%s, db %g core" % (name, cores)] = [dict(r, db_pct=100 * (cpu_share(r, "db") or 0))
                                                        for r in runs[name]]
    finally:
        if dropped:
            ctx.run(dbindex.command("on", dbindex.USERS_BY_NAME), "the name index")
        ctx.lab("down")
    routes = routeshare.read_csv(os.path.join(ctx.out, "baseline", "routes.csv")).get(32.0, [])
    return ["Locust `--scenario blog-writeup`, `%s` fixtures, %d s a level; load average %s before, %s after"
            % (SIZE, secs, before, loadavg()),
            runs_table(["stage", "users", "req/s", "mean ms", "db CPU % of budget", "verdict"], shown,
                       ("rps", "mean_ms", "db_pct", "verdict")),
            "Baseline at 32 users, server time per route (the write-up's APM: articles.index, 000 L173):\n\n" +
            "\n".join("| %s | %.1f %% |" % (r, 100 * s) for r, s in routes)], checks(runs, routes)


def checks(runs, routes):
    """runs: {stage: steps.csv rows}; routes: the baseline's at 32 users (routeshare.read_csv)."""
    at = lambda key: row_at(runs.get(key[0], []), key[1])  # noqa: E731
    out = []
    for a, b in STEPS:
        (rps_a, ms_a, _, la), (rps_b, ms_b, _, lb) = FIG[a], FIG[b]
        what, cite = "%s %d -> %s %d" % (a + b), "000 %s, %s" % (la, lb)
        out += [ck.ratio(what + ": req/s", cite, rps_b / rps_a, over(at(b), at(a), "rps"),
                         writeup="%d / %d = %.2fx" % (rps_b, rps_a, rps_b / rps_a)),
                ck.ratio(what + ": mean ms", cite, ms_b / ms_a, over(at(b), at(a), "mean_ms"),
                         writeup="%d / %d = %.2fx" % (ms_b, ms_a, ms_b / ms_a))]
        if rps_b > rps_a:
            out.append(ck.direction(what + ": req/s up", cite, "%d -> %d" % (rps_a, rps_b),
                                    num(at(a), "rps"), num(at(b), "rps")))
    out += [ck.share("%s %d: db CPU of its budget" % key, "000 " + f[3], f[2], cpu_share(at(key), "db"))
            for key, f in FIG.items()]
    out += [ck.tier("%s %d: the tier that limits" % key, "000 " + cite, "db", [at(key).get("verdict") or ""])
            for key, cite in TIERS]
    top = routes[0][0] if routes else "-"
    return out + [ck.Check("baseline 32: the route with the most server time", INDEX_ROUTE + " (articles.index)",
                           "000 L173", top, "the index page first", top == INDEX_ROUTE, "tier")]
