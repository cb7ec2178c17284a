"""The make-delivery write-up's scale-out (001 L47-L111) as a scale model of its machines
(delivery001.py): one cached WAS, then nginx and two, the load generator doubled, nginx doubled,
3,000 users. Spring's and nGrinder's costs a request are fitted on step 4 (001 L79); every other
step's TPS, CPU and limiting tier is predicted."""

from . import calibrate, checks as ck, delivery001 as d, texts
from .common import cpu_range, cpu_share, failures, fmt, loadavg, num, row_at, runs_table

NAME, TITLE = "delivery-scaleout", "One cached server, then nginx and two: load tool, nginx, users"
WRITEUP, INVENTED = texts.load(__name__)  # delivery_scaleout.md
STEP_SECONDS, WARMUP, BASE, LB = 20, 10, ["--workers", "2"], ("--instances", "2", "--lb", "nginx")
# label, lab up's options (None: as it is), cache, the stage's machines (vCPU), users
STAGES = (("1 server, cache", (), True, dict(web=2, lb=0, load=4), (1000, 3000)),
          ("1 server, no cache", None, False, dict(web=2, lb=0, load=4), (1000,)),
          ("nginx + 2 servers", LB, True, dict(web=4, lb=1, load=4), (1000,)),
          ("load tool doubled", None, True, dict(web=4, lb=1, load=8), (1000,)),
          ("nginx doubled", None, True, dict(web=4, lb=2, load=8), (1000,)),
          ("3,000 users", None, True, dict(web=4, lb=2, load=8), (3000,)))
TOPOLOGY, FITS, S = d.TOPOLOGY, d.FITS, d.S
# (stage index, users): the write-up's TPS ("in the ... range" a figure, x/÷ 1.5), its line
TPS = {(0, 1000): (1800, "001 L47"), (1, 1000): (1000, "001 L47"), (2, 1000): (4152, "001 L59"),
       (3, 1000): (6500, "001 L75"), (4, 1000): (6700, "001 L85"), (5, 3000): (6600, "001 L111")}
# (stage index, users, tier, % of its vCPUs or a range, line): the tiers' CPU as the write-up read it
CPU = ((2, 1000, "load", 95, "001 L65"), (2, 1000, "lb", 63, "001 L65"), (2, 1000, "web", (55, 60), "001 L65"),
       (4, 1000, "web", 80, "001 L85"), (4, 1000, "lb", 58, "001 L85"), (5, 3000, "web", (80, 94), "001 L111"))


def run(ctx):
    model, before, secs, runs = ctx.scale(TOPOLOGY, S, FITS, d.WHY_S), loadavg(), ctx.seconds(STEP_SECONDS), {}
    try:
        for i, (label, up, cache, vcpus, users) in enumerate(STAGES):
            model.stage(**vcpus)
            if up is not None:
                ctx.up("small", BASE + ["--redis-cache"], *up)
                if i == 0:
                    ctx.lab("seed", "small")
                    if not model.full:  # sutlab's and Locust's own costs, at full speed
                        calibrate.measure(ctx, model, d.locust(model, [200], secs, ctx.warmup(WARMUP), client=False), database=False)
            ctx.lab("restart", "--", *(BASE + d.knobs(model) + ["--redis-cache" if cache else "--no-redis-cache"]))
            runs[label] = ctx.steps(label.replace(",", "").replace(" ", "-"), d.locust(model, users, secs, ctx.warmup(WARMUP)))
    finally:
        ctx.lab("down")
    shown = {k: [dict(r, **{t: 100 * (cpu_share(r, t) or 0) for t in ("web", "lb", "load")}) for r in v]
             for k, v in runs.items()}
    return ["Locust on GET %s<random>, %d s a step after %d s of warm-up, `%s`; load average %s before, %s after"
            % (d.PATH, secs, ctx.warmup(WARMUP), " ".join(BASE + d.knobs(model)), before, loadavg()),
            runs_table(["stage", "users", "TPS", "mean ms", "errors", "web CPU %", "lb CPU %", "load CPU %", "verdict"],
                       shown, ("rps", "mean_ms", "errors", "web", "lb", "load", "verdict"))], checks(runs, model)


def checks(runs, model):
    """The write-up's figures (001) against {stage: rows}; step 4's (L75, L79) made the fits."""
    at = lambda i, users: row_at(runs.get(STAGES[i][0], []), users)  # noqa: E731
    tps = {k: num(at(*k), "rps") for k in TPS}
    ratio = lambda a, b: tps[a] / tps[b] if tps[a] and tps[b] else None  # noqa: E731
    out = [ck.rate("%s, %d users: TPS" % (STAGES[i][0], u), line, "%d (x%.3g: %.0f)" % (f, model.rate(1), model.rate(f)),
                   model.rate(f), tps[(i, u)]) for (i, u), (f, line) in TPS.items() if line != "001 L75"]
    out += [(cpu_range if isinstance(f, tuple) else ck.share)("%s, %d users: %s CPU" % (STAGES[i][0], u, t), line, f,
                                                              cpu_share(at(i, u), t)) for i, u, t, f, line in CPU]
    errors = [num(at(0, u), "rps") and failures(at(0, u)) / num(at(0, u), "rps") for u in (1000, 3000)]
    return out + [
        ck.set_by("load tool doubled, 1000 users: TPS, CPU", "001 L75, L79", "6,500 (x%.3g: %.0f); WAS 160 %%, nGrinder "
                  "70 %%" % (model.rate(1), model.rate(6500)), "the anchor of the fits", fmt(tps[(3, 1000)], 0)),
        ck.direction("1 server: errors a request, 1,000 -> 3,000 users", "001 L53", "surged", errors[0], errors[1]),
        ck.quotient("the cache: TPS, with / without", "001 L47", (1800, 1000), ratio((0, 1000), (1, 1000)),
                    part="bottleneck"),
        ck.tier("1 server, 3,000 users: the tier that limits", "001 L53", "web", [at(0, 3000).get("verdict") or ""]),
        ck.quotient("nginx + 2 servers / 1: TPS", "001 L47, L59", (4152, 1800), ratio((2, 1000), (0, 1000)),
                    part="bottleneck"),
        ck.tier("nginx + 2 servers: the tier that limits", "001 L65", "load", [at(2, 1000).get("verdict") or ""]),
        ck.quotient("the load tool doubled: TPS", "001 L59, L75", (6500, 4152), ratio((3, 1000), (2, 1000)),
                    part="bottleneck"),
        ck.tier("3,000 users: the tier that limits", "001 L111", "web", [at(5, 3000).get("verdict") or ""]),
        ck.not_limited_by_load("but where nGrinder limited (L65): not the load tool", "001 L47, L85",
                               [r.get("verdict") for i in (0, 1, 4, 5) for r in runs.get(STAGES[i][0], [])])]

