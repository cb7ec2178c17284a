"""The TPS-trend write-up (004, JMeter): the load script printed every response it got; with that
one line commented out TPS went from 150-plus to above 6,000 (004 L79), the server nearly idle. The
lab prints Locust's responses into a terminal whose speed it measures (sutlab_lab/ramps.py), steps
its users and replays the write-up's four ramps, printing off and on. Bottleneck: off / on (lower
bounds: no upper end) and the load side the limit. No scale model: the server was hardly used (L52)."""

import os
from functools import partial

from .. import ramps
from ..errors import RunError
from ..report import ratio
from . import checks as ck, texts
from .checks import Key as K
from .common import cpu_share, loadavg, locust_ramp, num, row_at

NAME, TITLE = "tps-trend", "The load script that printed every response"
WRITEUP, INVENTED = texts.load(__name__)  # tps_trend.md

LEVELS, QUICK_LEVELS, STEP_SECONDS, WARMUP = "1,2,5,10,25,50,100", "1,2,100", 10, 3
ECHO_BYTES, TIER_FROM, LINK = 4000, 10, "1gbit"  # LINK: the write-up's 1 Gbps (004 L26), netns lab only
RAMPS, HOLD = (1, 100, 300, 600), 60  # the write-up's ramp-ups of 100 threads (004 L35, L44, L63), then 60 s
RAMP_FIGURES = {("on", 1): "30-plus (L7), doubted by the write-up (L41): shown",
                ("on", 100): "180 (L41); no gradient, response time rising too fast (L38-39)",
                ("on", 300): "no gradient, response time rising with the threads (L49-50): shown",
                ("off", 600): "1-thread 1000-plus, 2 above 2500 (L72); past 6000 strong jitter (L74)"}


def _ramp(ctx, term, printing, ramp):
    seconds = max(1, round(ramp * ctx.duration / 100.0)) if ctx.quick else ramp  # --duration: 100 s -> D s
    label = "ramp-%s-%d" % (printing, ramp)
    locust_ramp(ctx, label, 100, seconds, ["--tags", "rpc_echo"], ["--echo-bytes", str(ECHO_BYTES)],
                ["--print-responses", term.path] if printing == "on" else [],
                hold=max(6, 2 * ctx.duration) if ctx.quick else HOLD)
    f = ramps.figures(ramps.read_seconds(os.path.join(ctx.out, label + "_seconds.csv")), 100)
    return dict(f, ramp=seconds, console=term.speed(f["window"]) if printing == "on" else None)


def run(ctx):
    seconds, levels, before = ctx.seconds(STEP_SECONDS), QUICK_LEVELS if ctx.quick else LEVELS, loadavg()
    ctx.url, term = ramps.lab_url(ctx.netns), ramps.Terminal(ctx.out)
    try:
        ctx.up("tiny", ["--workers", "1"], *(["--rate", LINK] if ctx.netns else []))
        common = ["--tool", "locust", "--tags", "rpc_echo", "--levels", levels, "--duration", str(seconds),
                  "--warmup", str(WARMUP), "--locust-arg=--echo-bytes=%d" % ECHO_BYTES]
        off = ctx.steps("print-off", common)
        on = ctx.steps("print-on", common + ["--locust-arg=--print-responses=%s" % term.path, "--aside-pid",
                                             str(term.proc.pid)])  # the console: the lab's own, no tier's
        for r in on:  # the console's speed over each printing level's measured seconds
            r["console"] = term.speed(ramps.level_window(os.path.join(ctx.out, "print-on", "level-%d_seconds.csv"
                                                                      % r["level"]), WARMUP))
        curves = {(p, r): _ramp(ctx, term, p, r) for p in ("off", "on") for r in RAMPS}
    finally:
        term.close()
        ctx.lab("down")
    return ["Locust `--tags rpc_echo --echo-bytes %d`%s, no think time, levels %s users, %d s each; printing into "
            "`loadscripts/console --pty` (no rate cap: its speed measured); load average %s before, %s after"
            % (ECHO_BYTES, " from the netns lab's client namespace, link capped at %s" % LINK if ctx.netns else "",
               levels, seconds, before, loadavg()), ramps.steps_table(off, on),
            "The write-up's ramps, 100 users each, 1 s points (the recorder's seconds; curves: OUT/ramp-*_time.png):",
            ramps.curves_table(curves, RAMP_FIGURES)], checks(off, on, curves)


MEAN = "follows from the TPS: users / TPS in a closed loop without think time (1 ms at 1000, 0.8 ms at 2500)"
CHECKS = (  # the write-up's figures, K(name) the measured value; "-plus", "above": lower bounds, no ceiling
    (ck.value, "printing off, 1 user: TPS", "004 L72", "1000-plus", K("one"), 1000, None),
    (ck.value, "printing off, 2 users: TPS", "004 L72", "above 2500", K("two"), 2500, None),
    (partial(ck.ratio, open_ended=True), "printing off, 2 users / 1", "004 L72", 2.5, K("two / one"), "2500 / 1000"),
    (ck.set_by, "printing off, 1-2 users: mean response", "004 L73", "below 1 ms", MEAN, K("first mean")),
    (ck.value, "printing off: top TPS", "004 L79", "above 6000", K("top off"), 6000, None),
    (ck.value, "ramp 600 s, printing off: peak TPS", "004 L74", "6000, then jitter", K("peak 600"), 6000, None),
    (partial(ck.ratio, open_ended=True, part="bottleneck"), "printing off / on, TPS", "004 L79", 40, K("off / on"),
     "6000 / 150 = 40x, lower bounds"),
    (ck.value, "printing on: top TPS", "004 L79", "150-plus", K("top on"), 150, None),
    (ck.value, "ramp 100 s, printing on: TPS at the plateau", "004 L41", "180", K("plateau 100"), 120, 270),
    (ck.share, "printing on: the server's CPU", "004 L52", 0, K("web on"), "hardly used"),
    (ck.tier, "printing on, %d-100 users: the tier that limits" % TIER_FROM, "004 L58-61", "load", K("tiers on")))
LINK_CHECK = (ck.share, "printing on: the link's share", "004 L26-27", 0.01, K("link on"), "0.01 % of 1 Gbps")


def checks(off, on, curves):
    """The write-up's figures against the stepped runs (steps.csv rows), printing off and on, and
    the ramps ({(printing, write-up ramp s): ramps.figures}); the link's share where it has a cap."""
    if len(off) < 2 or len(on) < 2:
        raise RunError("tps-trend: a stepped run has fewer than two rows")
    top_off, top_on = max(r["rps"] for r in off), max(r["rps"] for r in on)
    one, two = num(row_at(off, 1), "rps"), num(row_at(off, 2), "rps")
    web_on = [s for s in (cpu_share(r, "web") for r in on) if s is not None]
    means = [row_at(off, n).get("mean_ms") for n in (1, 2)]  # the slowest mean of 1 and 2 users
    links = [max(num(r, "net_rx_Bps") or 0, num(r, "net_tx_Bps") or 0) / r["net_capacity_Bps"]
             for r in on if num(r, "net_capacity_Bps")]
    # "client not reading" (the Send-Q rule, the write-up's own clue at L55) names the load side too
    tiers = [("load" if v == "client not reading" else v)
             for v in (str(r.get("verdict")) for r in on if r["level"] >= TIER_FROM)]
    return ck.declared(CHECKS + ((LINK_CHECK,) if links else ()), {
        "one": one, "two": two, "two / one": ratio(two, one), "top off": top_off, "top on": top_on,
        "off / on": ratio(top_off, top_on), "tiers on": tiers, "web on": max(web_on) if web_on else None,
        "first mean": "%.0f us" % (1000 * max(means)) if all(isinstance(m, float) for m in means) else None,
        "peak 600": curves.get(("off", 600), {}).get("peak"), "plateau 100": curves.get(("on", 100), {}).get("plateau"),
        "link on": max(links) if links else None})
