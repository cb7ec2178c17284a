"""The TPS-trend write-up (004, JMeter): the load script printed every response it got; with
that one line commented out TPS went from 150-plus to above 6,000 (004 L79), while the server had
been nearly idle. The cause was on the load generator's tier. The lab prints Locust's responses
into a console of a set speed and holds the write-up's figures of its stages to bands."""

import os

from .. import LOADSCRIPTS
from ..commands import console, plot
from ..errors import RunError
from ..report import MISSING, fmt, table
from . import checks as ck, texts
from .common import cpu_share, loadavg

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


def _ramp(ctx, label, extra):
    """The write-up's stage 1 shape (004 L35): 100 users over 10 x the step seconds (100 s), then
    10 s more, with Locust's 1 s history, and its curves (plot's PNGs)."""
    ramp = 10 * ctx.seconds(STEP_SECONDS)
    prefix = os.path.join(ctx.out, label)
    argv = ["/usr/bin/locust", "-f", os.path.join(LOADSCRIPTS, "locust", "locustfile.py"), "--headless",
            "--host", ctx.url, "--tags", "rpc_echo", "-u", "100", "--ramp-up", str(ramp), "-t", "%ds" % (ramp + 10),
            "--only-summary", "--exit-code-on-error", "0", "--echo-bytes", str(ECHO_BYTES),
            "--csv", prefix] + extra
    if ctx.netns:
        argv = [os.path.join(ctx.repo, "infra", "lab"), "exec-client", "--"] + argv
    ctx.progress("case %s: %s (100 users over %d s)" % (ctx.name, label, ramp))
    ctx.run(argv, "locust (%s)" % label, timeout=ramp + 300)
    try:
        plot.pngs_of(prefix + "_stats_history.csv")
    except (ValueError, OSError, ImportError) as e:
        raise RunError("plot (%s): %s" % (label, e))


def _lines(label, rows):
    return [[label, "%d" % r["level"], fmt(r.get("rps"), 0), fmt(r.get("mean_ms"), 2), fmt(r.get("p50_ms"), 1),
             fmt(100 * r["busy_web"], 0) if isinstance(r.get("busy_web"), float) else MISSING,
             fmt(100 * r["busy_load"], 0) if isinstance(r.get("busy_load"), float) else MISSING,
             fmt(100 * r["writing_load"], 0) if isinstance(r.get("writing_load"), float) else MISSING,
             fmt(r["send_q_max"] / 1024.0, 0) if isinstance(r.get("send_q_max"), float) else MISSING,
             r.get("verdict", "")] for r in rows]


def run(ctx):
    seconds, levels = ctx.seconds(STEP_SECONDS), QUICK_LEVELS if ctx.quick else LEVELS
    before = loadavg()
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
        if not ctx.quick:
            _ramp(ctx, "ramp-off", [])
            _ramp(ctx, "ramp-on", ["--print-responses", printer.path])
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


def _at(rows, level):
    """The row of `level` users, or None."""
    return next((r for r in rows if r["level"] == level), None)


def _rps(rows, level):
    r = _at(rows, level)
    return r["rps"] if r is not None and isinstance(r.get("rps"), float) else None


def _over(a, b):
    return a / b if a is not None and b else None


def _tier_names(rows):
    """The printing-on rows' verdicts from TIER_FROM users on. "client not reading" (the Send-Q
    rule, the write-up's own clue at L55) names the load generator's side as "load" does."""
    return [("load" if v == "client not reading" else v) for v in
            (str(r.get("verdict")) for r in rows if r["level"] >= TIER_FROM)]


def _mean_at_first(rows):
    """The slowest mean response of the 1- and 2-user rows, in µs (None when either is missing)."""
    means = [(_at(rows, n) or {}).get("mean_ms") for n in (1, 2)]
    return 1000 * max(means) if all(isinstance(m, float) for m in means) else None


def checks(off, on):
    """The write-up's figures against the stepped runs, printing off and on (steps.csv rows)."""
    if len(off) < 2 or len(on) < 2:
        raise RunError("tps-trend: a stepped run has fewer than two rows")
    top_off, top_on = max(r["rps"] for r in off), max(r["rps"] for r in on)
    one, two = _rps(off, 1), _rps(off, 2)
    web_on = [s for s in (cpu_share(r, "web") for r in on) if s is not None]
    return [
        ck.value("printing off, 1 user: TPS", "004 L72", "1000-plus", one, 1000, 2000),
        ck.value("printing off, 2 users: TPS", "004 L72", "above 2500", two, 2500, None),
        ck.ratio("printing off, 2 users / 1", "004 L72", 2.5, _over(two, one), "2500 / 1000 = 2.5x"),
        ck.value("printing off, 1-2 users: mean response", "004 L73", "below 1 ms", _mean_at_first(off), None, 1000,
                 " us"),
        ck.value("printing off: top TPS", "004 L74, L79", "above 6000", top_off, 6000, None),
        ck.ratio("printing off / on, TPS", "004 L79", 40, _over(top_off, top_on), "6000 / 150 = 40x"),
        ck.direction("printing on -> off: TPS", "004 L79", "150-plus -> above 6000", top_on, top_off),
        ck.share("printing on: the server's CPU", "004 L52", 0, max(web_on) if web_on else None, "hardly used"),
        ck.tier("printing on, %d-100 users: the tier that limits" % TIER_FROM, "004 L58-61", "load",
                _tier_names(on)),
        ck.set_by("printing on: TPS", "004 L7, L41, L79", "30-plus, 180, 150-plus",
                  "console --rate %s, --echo-bytes %d" % (CONSOLE_RATE, ECHO_BYTES), "%.0f" % top_on),
    ]
