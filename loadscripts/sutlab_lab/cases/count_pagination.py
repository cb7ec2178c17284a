"""The Laravel blog write-up's paginated index (000, steps 17-19), replayed as a scale model of its
machines (blog000.py): paginate() sent a count(*) with every page of the article index, and without
it the blog scenario went from 17 to 19 rps at 8 users and from 32 to 55 at 32. The 8-user rows are
the anchors the model is fitted on (the stack's costs, the think time, the data size); the 32-user
rows, the fix's ratio and the tier that limits are predicted."""

from .. import dbindex
from . import blog000 as b, checks as ck, texts
from .common import cpu_range, cpu_share, fmt, load, loadavg, num, row_at, runs_table, sweep

NAME, TITLE = "count-pagination", "The paginated index and its count(*)"
WRITEUP, INVENTED = texts.load(__name__)  # count_pagination.md
LEVELS, STEP_SECONDS, WARMUP = (8, 32), 30, 20
# (count, users): the write-up's rows, 000 L168-L169 and L180-L181 (web CPU a range as written)
ROWS = {("on", 8): dict(b.L168, cite="000 L168"), ("on", 32): dict(cite="000 L169", rps=32, ms=628, web=(30, 50), db=99),
        ("off", 8): dict(b.L180, cite="000 L180"), ("off", 32): dict(cite="000 L181", rps=55, ms=200, web=(65, 90), db=84)}
TOPOLOGY, FITS = b.topology(b.LOAD_WORDS + "; 8 and 32 users (L168-L169, L180-L181)"), b.FITS


def run(ctx):
    model, before, secs = ctx.scale(TOPOLOGY, b.S, FITS, b.WHY_S), loadavg(), ctx.seconds(STEP_SECONDS)
    try:
        knobs = b.prepare(ctx, model, ["--no-count-pagination"], secs, ctx.warmup(WARMUP))
        steps = load("locust", LEVELS, secs, ctx.warmup(WARMUP)) + b.SCENARIO + b.think_args(model)
        with dbindex.dropped(ctx.run, dbindex.USERS_BY_NAME):  # the write-up indexed the users' name after (L183)
            runs = sweep(ctx, [(c, b.BASE + knobs + [flag]) for c, flag in (("off", "--no-count-pagination"),
                                                                            ("on", "--count-pagination"))], steps)
    finally:
        ctx.lab("down")
    return ["Locust `blog-writeup`, levels %s users, %d s each after %d s of warm-up, `%s`, %s dropped; load average "
            "%s before, %s after" % (",".join(map(str, LEVELS)), secs, ctx.warmup(WARMUP), " ".join(b.BASE + knobs),
                                     dbindex.USERS_BY_NAME, before, loadavg()),
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
            out += [ck.set_by(what + "req/s, latency", w["cite"], "%d, %d ms (in the model: %.1f, %.0f ms)" % (
                w["rps"], w["ms"], model.rate(w["rps"]), model.time(w["ms"])), "an anchor of the fits, not judged",
                "%s, %s ms" % (fmt(num(r, "rps"), 1), fmt(num(r, "mean_ms"), 0)))]
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
