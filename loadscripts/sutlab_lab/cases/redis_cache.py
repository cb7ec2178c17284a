"""The make-delivery write-up's first step (001 L47, L53) as a scale model of its machines
(delivery001.py): one WAS answering the store listing by category from MySQL, then from a Redis
cache; past 1,000 users it could not keep up. Fitted on a later step (001 L79, which this case does
not judge); both rates, the cache's ratio and the limit past 1,000 users are predicted."""

from . import calibrate, checks as ck, delivery001 as d, texts
from .common import failures, loadavg, num, row_at, runs_table

NAME, TITLE = "redis-cache", "The store listing, from PostgreSQL and from Redis"
WRITEUP, INVENTED = texts.load(__name__)  # redis_cache.md
STEP_SECONDS, WARMUP, BASE, USERS = 20, 10, ["--workers", "2"], (1000, 3000)
TOPOLOGY, FITS, S = d.TOPOLOGY, d.FITS, d.S


def run(ctx):
    model, before, secs = ctx.scale(TOPOLOGY, S, FITS, d.WHY_S), loadavg(), ctx.seconds(STEP_SECONDS)
    model.stage(web=2, lb=0, load=4)  # one WAS, no nginx, nGrinder of 4 vCPU (001 L65: before L69's upgrade)
    try:
        ctx.up("small", BASE + ["--redis-cache"])
        ctx.lab("seed", "small")
        if not model.full:  # sutlab's and Locust's own costs, at full speed
            calibrate.measure(ctx, model, d.locust(model, [200], secs, ctx.warmup(WARMUP), client=False), database=False)
        runs = {}
        for label, cache, users in (("Redis", "--redis-cache", USERS), ("PostgreSQL", "--no-redis-cache", USERS[:1])):
            ctx.lab("restart", "--", *(BASE + d.knobs(model) + [cache]))
            runs[label] = ctx.steps(label, d.locust(model, users, secs, ctx.warmup(WARMUP)))
    finally:
        ctx.lab("down")
    return ["Locust on GET %s<random>, %d s a step after %d s of warm-up, `%s`; load average %s before, %s after"
            % (d.PATH, secs, ctx.warmup(WARMUP), " ".join(BASE + d.knobs(model)), before, loadavg()),
            runs_table(["listing from", "users", "TPS", "mean ms", "errors", "verdict"], runs,
                       ("rps", "mean_ms", "errors", "verdict"))], checks(runs, model)


def checks(runs, model):
    """The write-up's figures (001 L47, L53) against {"Redis": rows, "PostgreSQL": rows}."""
    cached, db = row_at(runs.get("Redis", []), 1000), row_at(runs.get("PostgreSQL", []), 1000)
    most = row_at(runs.get("Redis", []), USERS[-1])
    tps = num(cached, "rps"), num(db, "rps")
    errors = [num(r, "rps") and failures(r) / num(r, "rps") for r in (cached, most)]
    return [
        ck.rate("from Redis, 1,000 users: TPS", "001 L47", "in the 1,800 range (x%.3g: %.0f)" % (S, model.rate(1800)),
                model.rate(1800), tps[0]),
        ck.rate("from the database, 1,000 users: TPS", "001 L47", "in the 1,000 range (x%.3g: %.0f)" % (
            S, model.rate(1000)), model.rate(1000), tps[1]),
        ck.direction("errors a request, 1,000 -> 3,000 users", "001 L53", "surged", errors[0], errors[1]),
        ck.quotient("Redis / database: TPS", "001 L47", (1800, 1000), tps[0] / tps[1] if all(tps) else None,
                    part="bottleneck"),
        ck.tier("3,000 users: the tier that limits", "001 L53", "web", [most.get("verdict") or ""]),
        ck.not_limited_by_load("every step: not the load tool", "001 L47",
                               [r.get("verdict") for rows in runs.values() for r in rows])]

