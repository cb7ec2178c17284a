"""The TPS-trend write-up (JMeter): the load script printed every response, synchronously, into its
console; TPS fell from 6,000+ to about 150 while the server sat idle. Its cause was on the load
generator's tier, found by seeing the server was not busy."""

import os
import subprocess

from .. import LOADSCRIPTS
from ..errors import RunError
from ..report import MISSING, fmt, table
from .common import Check, loadavg

NAME = "tps-trend"
TITLE = "The load script that printed every response"
WRITEUP = """\
JMeter, 100 threads ramped up over 100 s, POST to an RPC echo interface, a post-processor printing
every response (non-GUI `-n` did not stop it):
- printing on: TPS about 150, flat as threads grew, the server idle (not busy; its Send-Q the clue);
- printing off: TPS proportional to the threads at first, then a plateau with jitter, 6,000+."""
INVENTED = """\
- the console's speed: 512 KiB/s (`loadscripts/console`; the write-up's terminal is not described),
  and 4,000-byte payloads, which give about 125 responses a second through it;
- Locust (`--tags rpc_echo`) in place of JMeter, which runs here only through a work-around
  (loadscripts/README.md, JMeter); the levels 1, 2, 5, 10, 25, 50, 100 users for the stepped
  table;
- a think time of 16 ms per user: the write-up's threads made 6,000 TPS / 100 = 60 requests a
  second each, a 16 ms round trip; on loopback a Locust user waits 0.2 ms, and one user alone
  would take most of Locust's core, leaving no "proportional at first" to see;
- one sutlab worker."""

# from one user, where a local Locust is far from saturated, to the write-up's 100; a quick look
# (--duration) keeps three of them
LEVELS = "1,2,5,10,25,50,100"
QUICK_LEVELS = "1,10,100"
STEP_SECONDS = 10
CONSOLE_RATE = "512k"
ECHO_BYTES = 4000
THINK = "0.016"  # seconds: the write-up's per-thread pace (6,000 TPS over 100 threads)


class Console:
    """loadscripts/console on a named pipe in OUT, for the duration of the case."""

    def __init__(self, ctx):
        self.fifo = os.path.join(ctx.out, "console")
        self.log = open(os.path.join(ctx.out, "console.log"), "w")
        self.proc = subprocess.Popen(["/usr/bin/python3", os.path.join(LOADSCRIPTS, "console"), "--fifo", self.fifo,
                                      "--rate", CONSOLE_RATE], stdout=self.log, stderr=subprocess.STDOUT)

    def close(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        if os.path.exists(self.fifo):
            os.unlink(self.fifo)


def _ramp(ctx, label, extra):
    """The write-up's own shape: 100 users over 10 x the step seconds (100 s), then 10 s more, with
    Locust's 1 s history, and its curves (loadscripts/plot)."""
    ramp = 10 * ctx.seconds(STEP_SECONDS)
    prefix = os.path.join(ctx.out, label)
    argv = ["/usr/bin/locust", "-f", os.path.join(LOADSCRIPTS, "locust", "locustfile.py"), "--headless",
            "--host", ctx.url, "--tags", "rpc_echo", "-u", "100", "--ramp-up", str(ramp), "-t", "%ds" % (ramp + 10),
            "--only-summary", "--exit-code-on-error", "0", "--echo-bytes", str(ECHO_BYTES), "--think-time", THINK,
            "--csv", prefix] + extra
    if ctx.netns:
        argv = [os.path.join(ctx.repo, "infra", "lab"), "exec-client", "--"] + argv
    ctx.progress("case %s: %s (100 users over %d s)" % (ctx.name, label, ramp))
    ctx.run(argv, "locust (%s)" % label, timeout=ramp + 300)
    ctx.run(["/usr/bin/python3", os.path.join(LOADSCRIPTS, "plot"), prefix + "_stats_history.csv"], "plot")


def _lines(label, rows):
    return [[label, "%d" % r["level"], fmt(r.get("rps"), 0), fmt(r.get("p50_ms"), 1),
             fmt(100 * r["busy_web"], 0) if isinstance(r.get("busy_web"), float) else MISSING,
             fmt(100 * r["busy_load"], 0) if isinstance(r.get("busy_load"), float) else MISSING,
             fmt(100 * r["writing_load"], 0) if isinstance(r.get("writing_load"), float) else MISSING,
             r.get("verdict", "")] for r in rows]


def run(ctx):
    seconds = ctx.seconds(STEP_SECONDS)
    before = loadavg()
    ctx.lab("down")
    ctx.lab("up", *(["--netns"] if ctx.netns else []), "--size", "tiny", "--", "--workers", "1")
    ctx.url = os.environ.get("SUTLAB_URL") or ("http://10.77.1.2:8080" if ctx.netns else
                                               "http://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_PORT", "8080"))
    console = Console(ctx)
    try:
        levels = QUICK_LEVELS if ctx.quick else LEVELS
        common = ["--tool", "locust", "--tags", "rpc_echo", "--levels", levels, "--duration", str(seconds),
                  "--warmup", "3", "--locust-arg=--echo-bytes=%d" % ECHO_BYTES, "--locust-arg=--think-time=%s" % THINK]
        off, _ = ctx.steps("print-off", common)
        on, _ = ctx.steps("print-on", common + ["--locust-arg=--print-responses=%s" % console.fifo])
        if not ctx.quick:
            _ramp(ctx, "ramp-off", [])
            _ramp(ctx, "ramp-on", ["--print-responses", console.fifo])
    finally:
        console.close()
        ctx.lab("down")
    after = loadavg()
    measured = table(["printing", "users", "req/s", "p50 ms", "web busy %", "load busy %", "load writing %",
                      "verdict"], _lines("off", off) + _lines("on", on), framed=True)
    sections = ["Locust `--tags rpc_echo --echo-bytes %d --think-time %s`%s, levels %s users, %d s each; "
                "printing into `loadscripts/console --rate %s`; load average %s before, %s after"
                % (ECHO_BYTES, THINK, " from the netns lab's client namespace" if ctx.netns else "", levels, seconds,
                   CONSOLE_RATE, before, after), measured]
    if not ctx.quick:
        sections.append("The write-up's ramp (100 users over %d s, 1 s points): %s" % (
            10 * seconds, ", ".join(os.path.join(ctx.out, n + "_time.png") for n in ("ramp-off", "ramp-on"))))
    return sections, checks(off, on)


def checks(off, on):
    if len(off) < 2 or len(on) < 2:
        raise RunError("tps-trend: a stepped run has fewer than two rows")
    top_off, top_on = max(r["rps"] for r in off), max(r["rps"] for r in on)
    ratio = top_off / top_on if top_on else float("inf")
    # where the write-up's threads were (10 to 100): below that, a few users do not yet make more
    # requests than the console renders, and nothing limits them
    verdicts = sorted(set(str(r.get("verdict")) for r in on if r["level"] >= 10))
    web_on = max(r.get("busy_web") or 0.0 for r in on)
    grow = off[1]["rps"] / off[0]["rps"] if off[0]["rps"] else 0.0
    return [
        Check("printing off / on, req/s", "6,000+ / ~150 (~40x)", "%.0f / %.0f (%.0fx)" % (top_off, top_on, ratio),
              ">= 10x", ratio >= 10),
        Check("printing on, 10-100 users: the tier that limits", "the load generator", ", ".join(verdicts),
              "load or client not reading", all(v in ("load", "client not reading") for v in verdicts)),
        Check("printing on: the server", "idle", "web busy <= %.0f %%" % (100 * web_on), "< 50 %", web_on < 0.5),
        Check("printing off: TPS follows the users at first", "proportional", "x%.2f from %d to %d users" % (
            grow, off[0]["level"], off[1]["level"]), ">= x1.5", grow >= 1.5),
    ]
