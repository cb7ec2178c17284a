"""flip --live: one load runs throughout, and the flag changes at its half through sutlab's admin
listener (docs/admin-api.md), so the run is one curve with a step in it rather than two curves
either side of a restart.

The run is the engine's (engine/live.py): off and on are live arms, stretches of one load, and
the engine scrapes the server's own counters every half second (requests completed, /metrics
itself left out; the latency histogram, quantiles interpolated within a bucket as Prometheus's
histogram_quantile does, so to a bucket's resolution; responses >= 400; sutlab's CPU time). The
"off" half is the load's first half; the "on" half starts --warmup seconds after the change
(the new state's warm-up: a cache filling, timers re-armed), which the table says. What is
flip's is here: the arms, the halves' rows as flip's table reads them, and the curve (OUT/live.csv,
the PNG)."""

import os

from . import load, log
from .plan import spec_of
from .. import engine, plots, series
from ..engine.live import QUANTILES, SCRAPE_S, quantile
from ..errors import RunError


def values(args, plan):
    """The flag's word in the off and the on half, as the admin listener takes it."""
    spec = spec_of(args.flag)
    if plan.boolean:
        return "off", "on"
    off = args.off if args.off is not None else spec.get("off")
    on = args.value or spec.get("on")
    if off is None or on is None:
        raise RunError("--live needs both values of --%s: give VALUE and --off VALUE" % args.flag)
    return off, on


def curve(points, t0):
    """Per-scrape rows for the PNG: t, rps, p50/p95/p99, error_pct, users."""
    rows = []
    for lo, hi in zip(points, points[1:]):
        secs, n = hi["t"] - lo["t"], hi["requests"] - lo["requests"]
        if secs <= 0:
            continue
        row = {"t": hi["t"] - t0, "rps": n / secs, "users": 0,
               "error_pct": 100.0 * (hi["errors"] - lo["errors"]) / n if n else 0.0}
        row.update({k: quantile(q, lo, hi) for k, q in QUANTILES})
        rows.append(row)
    return rows


def arms(args, plan):
    """off and on as the engine's live arms: the flag's word in each, as the admin listener
    takes it."""
    off, on = values(args, plan)
    return [engine.Arm(label, live={args.flag: value}, change=plan.change[label])
            for label, value in (("off", off), ("on", on))]


def run(args, target, scenario, plan, token):
    """The live run on the engine: warm-up, then 2 x --duration of load with the change at the
    half. Returns ({"off": [r], "on": [r]}, curve rows, the change's time on the curve, the load's
    own result)."""
    base = os.path.join(target.out, "live")

    def run_load(seconds):
        return load.run_load(type(args)(**dict(vars(args), duration=seconds)), target.url, scenario, base, token)
    results, run_ = engine.run_live(target, arms(args, plan), run_load, args.duration, settle=args.warmup,
                                    warm=lambda: load.warm_up(args, target, scenario, "live", base, token), log=log)
    for r in results.values():
        r[0]["build_flags"] = r[0]["build_flags"] or "(no sutlab_build_info)"
        r[0]["verdict"] = ""
    t_change = run_.changes[1][1] - run_.t0
    rows = curve(run_.points, run_.t0)
    write_csv(os.path.join(target.out, "live.csv"), rows, t_change)
    return results, rows, t_change, run_.load


def write_csv(path, rows, t_change):
    """OUT/live.csv: the curve, a row per scrape; `after` is 1 from the change on."""
    with open(path, "w") as f:
        f.write("t,rps,p50_ms,p95_ms,p99_ms,error_pct,after\n")
        for r in rows:
            f.write("%.2f,%.1f,%s,%s,%s,%.3f,%d\n" % (
                r["t"], r["rps"], *("" if r[k] is None else "%.3f" % r[k] for k in ("p50", "p95", "p99")),
                r["error_pct"], r["t"] >= t_change))


def describe(args, t_change):
    return ("one load of %g s; the flag changed through the admin listener at %.1f s; off: the first half, "
            "on: from %g s after the change (the new state's warm-up left out) to the end; figures from "
            "sutlab's /metrics scraped every %g s (latency quantiles interpolated within a histogram bucket)"
            % (2 * args.duration, t_change, args.warmup, SCRAPE_S))


def png(rows, t_change, path, size, title, flag, flags_text):
    """One curve, the change marked."""
    s = series.Series("live", "/metrics", "server histogram, per %g s" % SCRAPE_S)
    s.rows = rows
    return plots.plot_time(s, path, size, title, flags_text, marks=[(t_change, "--%s on" % flag)])
