"""The Laravel blog write-up's php-fpm stages (000, steps 4-14 and 21-22) as a scale model of its
machines (blog000.py): /health_check with 2 and 4 children, Laravel's caches and OPcache; GET
/articles/{id} from 2 to 32 children; one and two web servers behind the ALB. Each PHP variant's CPU
a request is fitted on its first row, show_articles' costs on its first row (000 L123); every other
row, the children's ratio, the second server's and the tiers the write-up names are predicted."""

from ..report import ratio
from . import calibrate, checks as ck, fpm000 as fpm, texts
from .common import LabRestart, cpu_share, fmt, load, loadavg, num, row_at, runs_table

NAME, TITLE = "php-fpm", "A web tier as slow as PHP: children, OPcache, a second server"
WRITEUP, INVENTED = texts.load(__name__)  # php_fpm.md
STEP_SECONDS, SYNC = fpm.STEP_SECONDS, fpm.SYNC
STAGES, ANCHORS, FITS, TOPOLOGY, S, WHY_S = fpm.STAGES, fpm.ANCHORS, fpm.FITS, fpm.TOPOLOGY, fpm.S, fpm.WHY_S

def run(ctx):
    model, before, secs, runs, up = ctx.scale(TOPOLOGY, S, FITS, WHY_S), loadavg(), ctx.seconds(STEP_SECONDS), {}, None
    try:
        for name, (workers, knob, (tool, levels), opts, web, _) in STAGES.items():
            model.stage(web=web)
            if opts != up:
                ctx.up("tiny", SYNC, *opts)
                if up is None and not model.full:  # sutlab's own costs of show_articles, at full speed
                    calibrate.measure(ctx, model, load("locust", [2], secs, 2) + ["--tags", "show_articles"])
                up = opts
            if name == fpm.ANCHOR_STAGE and not model.full:  # the --db-work unit read on L123 itself, budgeted
                calibrate.on_anchor(ctx, model, "anchor-L123", lambda: LabRestart(ctx).apply(
                    flags(model, name, workers, knob), name), load("locust", [2], secs, 2) + ["--tags", tool])
            LabRestart(ctx).apply(flags(model, name, workers, knob), name)
            runs[name] = ctx.steps(name.replace(", ", "-").replace(" ", "-"), load("ab", levels, secs, 2, path=(
                "/health_check")) if tool == "ab" else load("locust", levels, secs, 2) + ["--tags", tool])
    finally:
        ctx.lab("down")
    shown = {k: [dict(r, web=100 * (cpu_share(r, "web") or 0), db=100 * (cpu_share(r, "db") or 0)) for r in v]
             for k, v in runs.items()}
    return ["`--db-mode sync`, the children as workers, %d s a level; load average %s before, %s after" % (
        secs, before, loadavg()), runs_table(["stage", "clients", "req/s", "mean ms", "web CPU %", "db CPU %", "verdict"],
                                              shown, ("rps", "mean_ms", "web", "db", "verdict"))], checks(runs, model)


def flags(model, name, workers, knob):
    out = SYNC + ["--workers", str(workers), "--app-cpu-us", str(model.knob(knob))]
    return out + (["--db-work", str(model.knob("--db-work")), "--db-latency-ms", str(model.knob("--db-latency-ms"))]
                  if name.startswith("show") else [])


def checks(runs, model):
    """Every row but the anchors (req/s in the model, and the tiers' CPU; the latency follows, in a
    closed loop without a wait); the bottleneck: the children's, show_articles' and the second
    server's ratios, the tiers the write-up names, the load tool never the limit."""
    out, top = [], (lambda name: max([num(r, "rps") or 0 for r in runs.get(name, [])] or [0]) or None)  # noqa: E731
    for name, (*_, rows) in STAGES.items():
        for level, (line, rps, web, db) in rows.items():
            r, what, cite = row_at(runs.get(name, []), level), "%s, %d: " % (name, level), "000 " + line
            if line in ANCHORS:
                out.append(ck.set_by(what + "req/s", cite, "%d (x%.3g: %.1f)" % (rps, model.rate(1), model.rate(rps)),
                                     "an anchor of the fits", fmt(num(r, "rps"), 1)))
                continue
            out += [ck.rate(what + "req/s", cite, "%d (x%.3g: %.1f)" % (rps, model.rate(1), model.rate(rps)),
                            model.rate(rps), num(r, "rps")), ck.share(what + "web CPU", cite, web, cpu_share(r, "web"))]
            out += [ck.share(what + "db CPU", cite, db, cpu_share(r, "db"))] if db is not None else []
    four, two = row_at(runs.get("4 children", []), 8), row_at(runs.get("2 children", []), 8)
    verdicts = lambda name: [r.get("verdict") or "" for r in runs.get(name, [])]  # noqa: E731
    return out + [
        ck.quotient("4 / 2 children, 8 clients: req/s", "000 L61, L69", (21, 21), ratio(num(four, "rps"), num(two, "rps")),
                    part="bottleneck"),
        ck.tier("4 children: the tier that limits", "000 L64", "web", verdicts("4 children")),
        ck.quotient("show_articles, 32 / 2 children (32 and 4 users): req/s", "000 L124, L149", (130, 63),
                    ratio(num(row_at(runs.get("show_articles, 32", []), 32), "rps"),
                          num(row_at(runs.get("show_articles, 2", []), 4), "rps")), part="bottleneck"),
        ck.tier("show_articles, 32 children: the tier that limits", "000 L150", "web", verdicts("show_articles, 32")),
        ck.quotient("2 / 1 servers behind the ALB, the best req/s", "000 L203, L210", (425, 220),
                    ratio(top("2 servers, ALB"), top("1 server, ALB")), part="bottleneck"),
        ck.not_limited_by_load("every step: not the load tool", "000 L9, L50", [v for n in STAGES for v in verdicts(n)])]
