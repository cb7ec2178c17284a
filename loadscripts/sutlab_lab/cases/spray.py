"""The spray write-up (003): a handler that sleeps 2 s, attacked by vegeta at a fixed rate
(-rate=100 -duration=30s, an open model), first blocking its one actor, then as a Future on a
pool of 2000 threads. The lab maps both onto sutlab's handler modes and holds each figure of the
write-up's two vegeta reports (003 L28, L30) to a band, plus its 502 behind the lab's proxies."""

from ..report import MISSING, fmt, table
from . import checks as ck, texts
from .common import loadavg, sweep

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
            % fmt(100 * _success(results[(None, "offload")]), 1)], checks(results)


def _success(r):
    return r.get("success") if isinstance(r.get("success"), float) else None


def _ms(r, key):
    return r.get(key) if isinstance(r.get(key), float) else None


def count(r, kind):
    """How many of the row's failures are of `kind` ("refused", "reset/EOF", "502", ...): steps
    writes them as "kind:n kind:n"."""
    for kv in str(r.get("errors") or "").split():
        k, _, n = kv.rpartition(":")
        if k == kind:
            return int(n)
    return 0


def _latency(label, cite, figure_s, r, key):
    """A latency of the write-up (seconds) against the run's, in ms, ×/÷ the ratio band."""
    return ck.value("%s: %s" % (label, key.replace("_ms", "")), cite, "%.2f s" % figure_s, _ms(r, key),
                    round(1000 * figure_s / ck.RATIO_BAND), round(1000 * figure_s * ck.RATIO_BAND), " ms")


def _kind(label, cite, writeup, r, kind):
    """An error kind the write-up lists without a count: at least one of it."""
    return ck.value("%s: %s" % (label, kind), cite, writeup, count(r, kind), 1, None)


def checks(results):
    """The write-up's figures against `results`, {(front, mode): a steps.csv row}."""
    inline, pool = results[(None, "inline")], results[(None, POOL)]
    fitted = _success(results[(None, "pool 50")])
    out = [
        ck.share("blocking: success", "003 L28", 0, _success(inline), "0.00 %"),
        _latency("blocking", "003 L28", 7.156, inline, "mean_ms"),
        _latency("blocking", "003 L28", 4.390, inline, "p50_ms"),
        _latency("blocking", "003 L28", 22.700, inline, "p95_ms"),
        _kind("blocking", "003 L28", '"connection refused"', inline, "refused"),
        _kind("blocking", "003 L28", '"i/o timeout" (at connect)', inline, "timeout"),
        ck.tier("blocking: the tier that limits", "003 L2", "none", [str(inline.get("verdict"))]),
        ck.share("Future: success", "003 L30", 31.10, _success(pool), "31.10 %"),
        _latency("Future", "003 L30", 6.768, pool, "mean_ms"),
        _latency("Future", "003 L30", 2.182, pool, "p50_ms"),
        _kind("Future", "003 L30", '"connection refused"', pool, "refused"),
        _kind("Future", "003 L30", '"EOF", "connection reset by peer"', pool, "reset/EOF"),
        ck.direction("the Future against blocking: success %", "003 L22, L28, L30", "0.00 -> 31.10 %",
                     None if _success(inline) is None else 100 * _success(inline),
                     None if _success(pool) is None else 100 * _success(pool)),
    ]
    for front in FRONTS[1:]:
        if (front, "inline") in results:
            out.append(ck.value("blocking behind %s (the lab's proxy): 502 answers" % front, "003 L2, L5",
                                "502 Bad Gateway (count not stated)", count(results[(front, "inline")], "502"),
                                1, None))
    level = inline.get("level")
    return out + [
        ck.set_by("Future, a pool fitted to 31 %: success", "003 L30", "31.10 %", "--offload-threads 50",
                  None if fitted is None else "%.1f %%" % (100 * fitted)),
        ck.set_by("requests, rate", "003 L26, L28", "3000 at 100.03/s", "--rate %d --duration %d" % (RATE, SECONDS),
                  "%.0f/s asked" % level if isinstance(level, float) else None),
    ]
