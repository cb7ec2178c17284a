"""The TPS-trend write-up (004, JMeter): the load script printed every response it got; with
that one line commented out TPS went from 150-plus to above 6,000 (004 L79), while the server had
been nearly idle. The cause was on the load generator's tier. The lab prints Locust's responses
into a console of a set speed and holds the write-up's figures of its stages to bands."""

import os

from ..commands import console
from ..errors import RunError
from ..report import MISSING, fmt, ratio, table
from . import checks as ck, texts
from .checks import Key as K
from .common import cpu_share, loadavg, locust_ramp, num, row_at

NAME = "tps-trend"
TITLE = "The load script that printed every response"
WRITEUP, INVENTED = texts.load(__name__)  # tps_trend.md

# from one user to the write-up's 100; a quick look (--duration) keeps three of them
LEVELS = "1,2,5,10,25,50,100"
QUICK_LEVELS = "1,2,100"
STEP_SECONDS = 10
CONSOLE_RATE = "512k"
ECHO_BYTES = 4000
TIER_FROM = 10  # users: where printing, not the users, limits the printing-on rows


def _lines(label, rows):
    def scaled(r, k, by):
        return fmt(by * r[k], 0) if isinstance(r.get(k), float) else MISSING
    return [[label, "%d" % r["level"], fmt(r.get("rps"), 0), fmt(r.get("mean_ms"), 2), fmt(r.get("p50_ms"), 1)] +
            [scaled(r, k, 100) for k in ("busy_web", "busy_load", "writing_load")] +
            [scaled(r, "send_q_max", 1 / 1024.0), r.get("verdict", "")] for r in rows]


def run(ctx):
    seconds, levels, before = ctx.seconds(STEP_SECONDS), QUICK_LEVELS if ctx.quick else LEVELS, loadavg()
    ctx.lab("down")
    ctx.lab("up", *(["--netns"] if ctx.netns else []), "--size", "tiny", "--", "--workers", "1")
    ctx.url = os.environ.get("SUTLAB_URL") or ("http://10.77.1.2:8080" if ctx.netns else
                                               "http://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_PORT", "8080"))
    printer = console.Fifo(os.path.join(ctx.out, "console"), CONSOLE_RATE, os.path.join(ctx.out, "console.log"))
    try:
        common = ["--tool", "locust", "--tags", "rpc_echo", "--levels", levels, "--duration", str(seconds),
                  "--warmup", "3", "--locust-arg=--echo-bytes=%d" % ECHO_BYTES]
        off = ctx.steps("print-off", common)
        on = ctx.steps("print-on", common + ["--locust-arg=--print-responses=%s" % printer.path])
        for label, extra in (() if ctx.quick else (("ramp-off", []), ("ramp-on", ["--print-responses", printer.path]))):
            # the write-up's stage 1 shape (004 L35): 100 users over 10 x the step seconds (100 s)
            locust_ramp(ctx, label, 100, 10 * seconds, ["--tags", "rpc_echo"], ["--echo-bytes", str(ECHO_BYTES)], extra)
    finally:
        printer.close()
        ctx.lab("down")
    measured = table(["printing", "users", "req/s", "mean ms", "p50 ms", "web busy %", "load busy %",
                      "load writing %", "largest Send-Q KiB", "verdict"], _lines("off", off) + _lines("on", on),
                     framed=True)
    sections = ["Locust `--tags rpc_echo --echo-bytes %d`%s, no think time, levels %s users, %d s each; "
                "printing into `loadscripts/console --rate %s`; load average %s before, %s after"
                % (ECHO_BYTES, " from the netns lab's client namespace" if ctx.netns else "", levels, seconds,
                   CONSOLE_RATE, before, loadavg()), measured]
    if not ctx.quick:
        sections.append("The write-up's stage 1 ramp (100 users over %d s, 1 s points): %s" % (
            10 * seconds, ", ".join(os.path.join(ctx.out, n + "_time.png") for n in ("ramp-off", "ramp-on"))))
    return sections, checks(off, on)


# the write-up's figures against the stepped runs, printing off and on: K(name) is the measured value
CHECKS = (
    (ck.value, "printing off, 1 user: TPS", "004 L72", "1000-plus", K("one"), 1000, 2000),
    (ck.value, "printing off, 2 users: TPS", "004 L72", "above 2500", K("two"), 2500, None),
    (ck.ratio, "printing off, 2 users / 1", "004 L72", 2.5, K("two / one"), "2500 / 1000 = 2.5x"),
    (ck.value, "printing off, 1-2 users: mean response", "004 L73", "below 1 ms", K("first mean"), None, 1000, " us"),
    (ck.value, "printing off: top TPS", "004 L74, L79", "above 6000", K("top off"), 6000, None),
    (ck.ratio, "printing off / on, TPS", "004 L79", 40, K("off / on"), "6000 / 150 = 40x"),
    (ck.direction, "printing on -> off: TPS", "004 L79", "150-plus -> above 6000", K("top on"), K("top off")),
    (ck.share, "printing on: the server's CPU", "004 L52", 0, K("web on"), "hardly used"),
    (ck.tier, "printing on, %d-100 users: the tier that limits" % TIER_FROM, "004 L58-61", "load", K("tiers on")),
    (ck.set_by, "printing on: TPS", "004 L7, L41, L79", "30-plus, 180, 150-plus",
     "console --rate %s, --echo-bytes %d" % (CONSOLE_RATE, ECHO_BYTES), K("top on shown")))


def checks(off, on):
    """The write-up's figures against the stepped runs, printing off and on (steps.csv rows)."""
    if len(off) < 2 or len(on) < 2:
        raise RunError("tps-trend: a stepped run has fewer than two rows")
    top_off, top_on = max(r["rps"] for r in off), max(r["rps"] for r in on)
    one, two = num(row_at(off, 1), "rps"), num(row_at(off, 2), "rps")
    web_on = [s for s in (cpu_share(r, "web") for r in on) if s is not None]
    means = [row_at(off, n).get("mean_ms") for n in (1, 2)]  # the slowest mean of 1 and 2 users, in us
    # the printing-on rows' verdicts from TIER_FROM users on: "client not reading" (the Send-Q rule,
    # the write-up's own clue at L55) names the load generator's side as "load" does
    tiers = [("load" if v == "client not reading" else v)
             for v in (str(r.get("verdict")) for r in on if r["level"] >= TIER_FROM)]
    return ck.declared(CHECKS, {"one": one, "two": two, "two / one": ratio(two, one), "top off": top_off,
                                "top on": top_on, "off / on": ratio(top_off, top_on), "tiers on": tiers,
                                "first mean": 1000 * max(means) if all(isinstance(m, float) for m in means) else None,
                                "web on": max(web_on) if web_on else None,
                                "top on shown": "%.0f" % top_on})
