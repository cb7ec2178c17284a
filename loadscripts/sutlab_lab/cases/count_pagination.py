"""The Laravel blog write-up's paginated index (000, steps 17-19), replayed as a scale model of its
machines (blog000.py): paginate() sent a count(*) with every page of the article index, and without
it the blog scenario went from 17 to 19 rps at 8 users and from 32 to 55 at 32. The 8-user rows are
the anchors the model is fitted on (the stack's costs, the think time, the data size); the 32-user
rows, the fix's ratio and the tier that limits are predicted."""

import math

from . import blog000 as b, calibrate, checks as ck, texts
from .common import cpu_range, cpu_share, fmt, load, loadavg, num, row_at, runs_table, sweep
from .scale import Fit

NAME, TITLE = "count-pagination", "The paginated index and its count(*)"
WRITEUP, INVENTED = texts.load(__name__)  # count_pagination.md
LEVELS, STEP_SECONDS, WARMUP, INDEX = (8, 32), 20, 20, "/api/articles"
# (count, users): the write-up's rows, 000 L168-L169 and L180-L181 (web CPU a range as written)
ROWS = {("on", 8): dict(cite="000 L168", rps=17, ms=98, web=(8, 30), db=47),
        ("on", 32): dict(cite="000 L169", rps=32, ms=628, web=(30, 50), db=99),
        ("off", 8): dict(cite="000 L180", rps=19, ms=63, web=(8, 30), db=25),
        ("off", 32): dict(cite="000 L181", rps=55, ms=200, web=(65, 90), db=84)}
SIZES = (("small", 10000), ("medium", 100000), ("large", 1000000))
LOAD = ("Locust `scenario.py` straight to the web server at 8 and 32 users (000 L165, L168-L169, L180-L181); its "
        "mix, think time and durations not published: the lab's `blog-writeup` scenario (a third of its requests "
        "the index page), the think time fitted")


def _size(f, model):
    """The fixture size whose count(*) costs, per index page, nearest (by ratio) what the count added
    to a request's database CPU on the anchor row over the count-off one (L180's, beside it)."""
    base = b.per_request_us(ROWS[("off", 8)]["rps"], ROWS[("off", 8)]["db"])
    added = b.per_request_us(f["rps"], f["db"]) - base
    share, per_row = model.measured["own"].routes.get(INDEX, 0.0), model.measured["count_us_per_row"]
    rows = added / share / per_row if share else float("inf")
    size = min(SIZES, key=lambda s: abs(math.log(s[1] / rows)))[0]
    return size, "%.0f us - %.0f us (L180) = %.0f us a request; %.0f %% of the requests are the index: %.0f us a " \
                 "count; %.3f us a row here: %.0f rows; nearest: %s" % (
                     added + base, base, added, 100 * share, added / share if share else 0, per_row, rows, size)


TOPOLOGY, THINK = b.topology(LOAD), b.think_fit("000 L180", 8, 19, 63)
FITS = [THINK, b.app_cpu_fit("000 L180", 19, (8, 30)), b.db_work_fit("000 L180", 19, 25),
        Fit("size", "000 L168", dict(rps=17, db=47), _size)]


def run(ctx):
    model, before, secs = ctx.scale(TOPOLOGY, b.S, FITS, b.WHY_S), loadavg(), ctx.seconds(STEP_SECONDS)
    base = ["--db-mode", "sync", "--workers", "8"]
    scenario = ["--scenario", "blog-writeup", "--locust-arg=--fixture-users=1000"]
    locust = load("locust", LEVELS, secs, WARMUP) + scenario
    try:
        ctx.up("small", base + ["--no-count-pagination"])
        ctx.lab("seed", "small")
        knobs = []
        if not model.full:  # sutlab's own costs, at full speed and the write-up's think time, 8 users
            calibrate.measure(ctx, model, load("locust", [8], secs, WARMUP) + scenario + [
                "--locust-arg=--think-time=%.3f" % THINK.value(model)])
            size = "small" if ctx.quick else model.knob("size")
            if size != "small":
                ctx.lab("seed", size)
            knobs = ["--app-cpu-us", str(model.knob("--app-cpu-us")), "--db-work", str(model.knob("--db-work"))]
        steps = locust + ["--locust-arg=--think-time=%.3f" % model.think(THINK.value(model))]
        runs = sweep(ctx, [(c, base + knobs + [flag]) for c, flag in (("off", "--no-count-pagination"),
                                                                      ("on", "--count-pagination"))], steps)
    finally:
        ctx.lab("down")
    return ["Locust `blog-writeup`, levels %s users, %d s each after %d s of warm-up, `%s`; load average %s before, "
            "%s after" % (",".join(map(str, LEVELS)), secs, WARMUP, " ".join(base + knobs), before, loadavg()),
            runs_table(["count", "users", "req/s", "mean ms", "p99 ms", "web CPU %", "db CPU %", "verdict"],
                       {k: [dict(r, web=100 * (cpu_share(r, "web") or 0), db=100 * (cpu_share(r, "db") or 0))
                            for r in v] for k, v in runs.items()},
                       ("rps", "mean_ms", "p99_ms", "web", "db", "verdict"))], checks(runs, model)


def checks(runs, model):
    """The 32-user rows predicted (the latency, the tiers' CPU; req/s follows from the latency with
    the users and the think time), the 8-user anchors shown; the fix's ratio at 32, the tier that
    limits with the count, and the load tool never the limit (the bottleneck part)."""
    out, at = [], {k: row_at(runs.get(k[0], []), k[1]) for k in ROWS}
    for (count, users), w in ROWS.items():
        r, what = at[(count, users)], "%d users, count %s: " % (users, count)
        if users == 8:  # an anchor: its figures made the fits
            out += [ck.set_by(what + k, w["cite"], str(w[k]), "an anchor of the fits, not judged",
                              fmt(num(r, key), 0)) for k, key in (("rps", "rps"), ("ms", "mean_ms"))]
            continue
        out += [ck.set_by(what + "req/s", w["cite"], "%d (x%g: %.1f)" % (w["rps"], model.rate(1), model.rate(w["rps"])),
                          "follows from the latency: users / (latency + think time)", fmt(num(r, "rps"), 1)),
                ck.latency(what + "mean latency", w["cite"], model.time(w["ms"]) / 1000.0, num(r, "mean_ms"),
                           "%d ms (/ s: %.0f ms)" % (w["ms"], model.time(w["ms"]))),
                ck.share(what + "db CPU", w["cite"], w["db"], cpu_share(r, "db")),
                cpu_range(what + "web CPU", w["cite"], w["web"], cpu_share(r, "web"))]
    on, off = at[("on", 32)], at[("off", 32)]
    return out + [
        ck.set_by("8 users: req/s up without the count", "000 L168, L180", "17 -> 19", "the anchors'",
                  "%s -> %s" % (fmt(num(at[("on", 8)], "rps"), 1), fmt(num(at[("off", 8)], "rps"), 1))),
        ck.quotient("32 users: req/s, count off / on", "000 L169, L181", (55, 32),
                    num(off, "rps") / num(on, "rps") if num(off, "rps") and num(on, "rps") else None, part="bottleneck"),
        ck.tier("32 users, count on: the tier that limits", "000 L169, L171", "db", [on.get("verdict") or ""]),
        ck.not_limited_by_load("every step: not the load tool", "000 L9", [r.get("verdict") for k in ("on", "off")
                                                                          for r in runs.get(k, [])])]
