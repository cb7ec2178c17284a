"""The Laravel blog write-up's missing index (000, steps 19-20), replayed as a scale model of its
machines (blog000.py): with the count gone, an index on the users' name took its scenario from 55
to 63 rps and 200 to 144 ms, the database's CPU from 84 % to 66 %. The lab's counterpart is the
index of its lookup of users by name (idx_users_username_lower). The model is the scenario's,
fitted on its 8-user rows (000 L168, L180); both 32-user rows, without the index (L181) and with it
(L186), and the fix's ratio are predicted, over alternated rounds."""

import statistics

from .. import dbindex, engine
from . import blog000 as b, checks as ck, texts
from .common import cpu_range, cpu_share, fmt, load, loadavg, num, runs_table

NAME, TITLE = "missing-index", "The blog scenario with and without the index of its users' name"
WRITEUP, INVENTED = texts.load(__name__)  # missing_index.md
USERS, ROUNDS, STEP_SECONDS, WARMUP, INDEX = 32, 3, 30, 20, dbindex.USERS_BY_NAME
ROWS = {"without": dict(cite="000 L181", rps=55, ms=200, web=(65, 90), db=84),
        "with": dict(cite="000 L186", rps=63, ms=144, web=(50, 80), db=66)}
TOPOLOGY, FITS = b.topology(b.LOAD_WORDS + "; 32 users (L181, L186)"), b.FITS


def run(ctx):
    model, before, secs = ctx.scale(TOPOLOGY, b.S, FITS, b.WHY_S), loadavg(), ctx.seconds(STEP_SECONDS)
    flags = ["--no-count-pagination"]  # the write-up's index came after the count was gone (L183)
    try:
        knobs = b.prepare(ctx, model, flags, secs, ctx.warmup(WARMUP))
        ctx.lab("restart", "--", *(b.BASE + knobs + flags))
        args = load("locust", [USERS], secs, ctx.warmup(WARMUP)) + b.SCENARIO + b.think_args(model)
        arms = [engine.Arm("with"), dbindex.arm("without", ctx.run, INDEX)]
        runs = engine.run_on(None, arms, lambda arm, rnd, _s: ctx.steps("round%d-%s" % (rnd, arm.name), args)[0],
                             1 if ctx.quick else ROUNDS, secs)
    finally:
        ctx.lab("down")
    shown = {side: [dict(r, web=100 * (cpu_share(r, "web") or 0), db=100 * (cpu_share(r, "db") or 0)) for r in rows]
             for side, rows in runs.items()}
    return ["Locust `blog-writeup` at %d users, %d s a run after %d s of warm-up, `%s`; %s dropped for each run "
            "without it, alternated rounds; load average %s before, %s after" % (
                USERS, secs, ctx.warmup(WARMUP), " ".join(b.BASE + knobs + flags), INDEX, before, loadavg()),
            runs_table(["index", "users", "req/s", "mean ms", "p99 ms", "web CPU %", "db CPU %", "verdict"], shown,
                       ("rps", "mean_ms", "p99_ms", "web", "db", "verdict"))], checks(runs, model)


def med(rows, f):
    """The median over the rounds of f(row); None when a round did not measure it."""
    values = [f(r) for r in rows]
    return None if not values or any(v is None for v in values) else statistics.median(values)


def checks(runs, model):
    """Both rows predicted, each figure the median over the rounds (req/s follows from the latency
    with the users and the think time); the fix's ratio (median) and its direction in the worst
    round; the load tool never the limit."""
    out = []
    for side, w in ROWS.items():
        rows, what = runs.get(side, []), "%s the index: " % side
        out += [ck.set_by(what + "req/s", w["cite"], "%d (x%g: %.1f)" % (w["rps"], model.rate(1), model.rate(w["rps"])),
                          "follows from the latency: users / (latency + think time)",
                          fmt(med(rows, lambda r: num(r, "rps")), 1)),
                ck.latency(what + "mean latency", w["cite"], model.time(w["ms"]) / 1000.0,
                           med(rows, lambda r: num(r, "mean_ms")), "%d ms (/ s: %.0f ms)" % (w["ms"], model.time(w["ms"]))),
                ck.share(what + "db CPU", w["cite"], w["db"], med(rows, lambda r: cpu_share(r, "db"))),
                cpu_range(what + "web CPU", w["cite"], w["web"], med(rows, lambda r: cpu_share(r, "web")))]
    pairs = list(zip(runs.get("with", []), runs.get("without", [])))
    ratios = [num(a, "rps") / num(o, "rps") if num(a, "rps") and num(o, "rps") else None for a, o in pairs]
    worst = pairs[min(range(len(pairs)), key=lambda i: ratios[i] or 0.0)] if pairs else ({}, {})
    return out + [
        ck.quotient("req/s, with / without the index", "000 L181, L186", (63, 55),
                    med(ratios, lambda x: x), part="bottleneck"),
        ck.direction("req/s up with the index, every round (the worst shown)", "000 L181, L186", "55 -> 63",
                     num(worst[1], "rps"), num(worst[0], "rps")),
        ck.not_limited_by_load("every run: not the load tool", "000 L9",
                               [r.get("verdict") for side in ("with", "without") for r in runs.get(side, [])])]
