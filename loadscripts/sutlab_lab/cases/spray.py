"""The spray write-up (003): a handler that sleeps 2 s, attacked by vegeta at a fixed rate
(-rate=100 -duration=30s, an open model), first blocking its one actor, then as a Future on a
pool of 2000 threads. The lab maps both onto sutlab's handler modes and holds each figure of the
write-up's two vegeta reports (003 L28, L30) to a band, plus its 502 behind the lab's proxies."""

from ..report import MISSING, fmt, table
from . import checks as ck, texts
from .checks import Key as K
from .common import error_count as count, loadavg, num, sweep

NAME = "spray"
TITLE = "Blocking handler under an open-model spray"
WRITEUP, INVENTED = texts.load(__name__)  # spray.md

RATE, SECONDS, BLOCK, TIMEOUT = 100, 30, "/work/sleep?ms=2000", 30
BASE = ["--workers", "1", "--backlog", "100"]
POOL = "pool 2000"
MODES = (("inline", ["--handler-mode", "inline"]),
         ("pool 50", ["--handler-mode", "pool", "--offload-threads", "50"]),
         (POOL, ["--handler-mode", "pool", "--offload-threads", "2000"]),
         ("offload", ["--handler-mode", "offload"]))
# behind each proxy, the blocking handler only: the write-up's 502 came from blocking
FRONTS = (None, "nginx", "haproxy")


def _row(front, mode, r):
    def secs(k):
        return fmt(r[k] / 1000.0, 2) if isinstance(r.get(k), float) else MISSING
    return [front or "-", mode, fmt(100 * r["success"], 1) if isinstance(r.get("success"), float) else MISSING,
            secs("mean_ms"), secs("p50_ms"), secs("p95_ms"), secs("p99_ms"), r.get("errors", ""),
            r.get("verdict", ""), fmt(100 * r["busy_web"], 0) if isinstance(r.get("busy_web"), float) else MISSING]


def run(ctx):
    """Direct: every handler mode, the lab restarted with each; behind each proxy (a lab of its
    own), the blocking handler alone. A quick look leaves the proxies out, with a timeout a little
    past the block."""
    seconds = ctx.seconds(SECONDS)
    fronts, timeout = (FRONTS[:1], max(4, seconds + 2)) if ctx.quick else (FRONTS, TIMEOUT)
    attack = ["--tool", "httperf", "--path", BLOCK, "--rate", str(RATE), "--duration", str(seconds),
              "--warmup", "0", "--timeout", str(timeout)] + (["--abort-on-overflow"] if ctx.netns else [])
    results, before = {}, loadavg()
    try:  # down whatever happened: a failed step must not leave the lab holding its ports
        for front in fronts:
            modes = MODES if front is None else MODES[:1]
            ctx.up("tiny", BASE + modes[0][1], *(["--instances", "1", "--lb", front] if front else []))
            rows = sweep(ctx, [("%s-%s" % (front or "direct", m.replace(" ", "")), BASE + f) for m, f in modes], attack)
            results.update({(front, m): rows["%s-%s" % (front or "direct", m.replace(" ", ""))][0] for m, _ in modes})
    finally:
        ctx.lab("down")
    lines = [_row(front, mode, r) for (front, mode), r in results.items()]
    measured = table(["front", "handler", "ok %", "mean s", "p50 s", "p95 s", "p99 s", "codes and errors",
                      "verdict", "web busy %"], lines, framed=True)
    return ["%d requests/s for %d s on GET %s, a %d s timeout, `%s`%s; load average %s before, %s after"
            % (RATE, seconds, BLOCK, timeout, " ".join(BASE), ", tcp_abort_on_overflow=1 in the web namespace"
               if ctx.netns else "", before, loadavg()), measured,
            "`offload` is the lab's extra (no figure of the write-up): %s %% answered."
            % fmt(100 * num(results[(None, "offload")], "success"), 1)], checks(results)


# the write-up's figures (003 L28, blocking; L30, the Future); K(name): the measured value (checks.declared);
# an error kind the write-up lists without a count is held to at least one
CHECKS = (
    (ck.share, "blocking: success", "003 L28", 0, K("blocking success"), "0.00 %"),
    (ck.latency, "blocking: mean", "003 L28", 7.156, K("blocking mean_ms")),
    (ck.latency, "blocking: p50", "003 L28", 4.390, K("blocking p50_ms")),
    (ck.latency, "blocking: p95", "003 L28", 22.700, K("blocking p95_ms")),
    (ck.value, "blocking: refused", "003 L28", '"connection refused"', K("blocking refused"), 1, None),
    (ck.value, "blocking: timeout", "003 L28", '"i/o timeout" (at connect)', K("blocking timeout"), 1, None),
    (ck.tier, "blocking: the tier that limits", "003 L2", "none", K("blocking verdict")),
    (ck.share, "Future: success", "003 L30", 31.10, K("Future success"), "31.10 %"),
    (ck.latency, "Future: mean", "003 L30", 6.768, K("Future mean_ms")),
    (ck.latency, "Future: p50", "003 L30", 2.182, K("Future p50_ms")),
    (ck.value, "Future: refused", "003 L30", '"connection refused"', K("Future refused"), 1, None),
    (ck.value, "Future: reset/EOF", "003 L30", '"EOF", "connection reset by peer"', K("Future reset/EOF"), 1, None),
    (ck.direction, "the Future against blocking: success %", "003 L22, L28, L30", "0.00 -> 31.10 %",
     K("blocking success %"), K("Future success %")))


def checks(results):
    """The write-up's figures against `results`, {(front, mode): a steps.csv row}; then the 502 behind
    each of the lab's proxies that ran, and the figures the lab sets."""
    inline, pool = results[(None, "inline")], results[(None, POOL)]
    measured = {"blocking verdict": [str(inline.get("verdict"))]}
    for side, r in (("blocking", inline), ("Future", pool)):
        share = num(r, "success")
        measured.update({side + " success": share, side + " success %": None if share is None else 100 * share})
        measured.update({"%s %s" % (side, k): num(r, k) if k.endswith("_ms") else count(r, k)
                         for k in ("mean_ms", "p50_ms", "p95_ms", "refused", "timeout", "reset/EOF")})
    out = ck.declared(CHECKS, measured) + [
        ck.value("blocking behind %s (the lab's proxy): 502 answers" % front, "003 L2, L5",
                 "502 Bad Gateway (count not stated)", count(results[(front, "inline")], "502"), 1, None)
        for front in FRONTS[1:] if (front, "inline") in results]
    level, fitted = inline.get("level"), num(results[(None, "pool 50")], "success")
    return out + [
        ck.set_by("Future, a pool fitted to 31 %: success", "003 L30", "31.10 %", "--offload-threads 50",
                  None if fitted is None else "%.1f %%" % (100 * fitted)),
        ck.set_by("requests, rate", "003 L26, L28", "3000 at 100.03/s", "--rate %d --duration %d" % (RATE, SECONDS),
                  "%.0f/s asked" % level if isinstance(level, float) else None)]
