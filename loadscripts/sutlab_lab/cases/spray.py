"""The spray write-up (003): a handler that sleeps 2 s, attacked by vegeta at 100 requests a second,
blocking its one actor, then as a Future on 2000 threads; sutlab's handler modes, the two vegeta
reports' figures (003 L28, L30) each in a band, the fix's direction the bottleneck part, the 502
behind the lab's proxies. No scale model: one host of unstated CPU, figures set by time, not CPU."""

import os

from .. import ramps, spray
from ..report import table
from . import checks as ck, texts
from .checks import Key as K
from .common import cells, error_count as count, loadavg, num, sweep

NAME, TITLE = "spray", "Blocking handler under an open-model spray"
WRITEUP, INVENTED = texts.load(__name__)  # spray.md

RATE, SECONDS, BLOCK, TIMEOUT = 100, 30, "/work/sleep?ms=2000", 30
BASE = ["--workers", "1", "--backlog", "100"]
POOL = "pool 2000"
MODES = (("inline", ["--handler-mode", "inline"]),
         (POOL, ["--handler-mode", "pool", "--offload-threads", "2000"]),
         ("offload", ["--handler-mode", "offload"]))
KEYS = ("success", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "errors", "verdict", "busy_web")
DUAL = "::1,127.0.0.1"  # `localhost` as the write-up's vegeta dialled it: refused at [::1], read on 127.0.0.1


def legs(ctx):
    """(key, modes, the server's extra flags, steps' target, the lab's options) of each part: direct (::1
    where the machine has it, else IPv4); `localhost`, the server on 127.0.0.1 alone; each proxy (IPv4)."""
    port = os.environ.get("SUTLAB_LAB_PORT", "8080")
    direct = [(None, MODES, [], ["--url", ramps.lab_url(ctx.netns)], [])] if _dialled(ctx) != "::1" else [
        (None, MODES, ["--listen", "[::1]:%s" % port], ["--url", "http://[::1]:%s" % port], []),
        ("localhost", MODES[:2], [], ["--url", "http://localhost:%s" % port, "--resolve", DUAL], [])]
    return direct + [(lb, MODES[:1], [], [], ["--instances", "1", "--lb", lb]) for lb in ("nginx", "haproxy")
                     if not ctx.quick]


def _dialled(ctx):
    """What the direct runs dial: ::1, unless in the netns lab (IPv4 alone) or on a machine without it."""
    return "IPv4 (netns)" if ctx.netns else "::1" if spray.ipv6_loopback() else "127.0.0.1 (no ::1 here)"


def run(ctx):
    """Each leg, the lab restarted with each mode; a quick look: no proxies, a timeout just past the block."""
    seconds, timeout = ctx.seconds(SECONDS), max(4, ctx.seconds(SECONDS) + 2) if ctx.quick else TIMEOUT
    attack = ["--tool", "httperf", "--path", BLOCK, "--rate", str(RATE), "--duration", str(seconds),
              "--warmup", "0", "--timeout", str(timeout)] + (["--abort-on-overflow"] if ctx.netns else [])
    results, before = {}, loadavg()
    try:  # down whatever happened: a failed step must not leave the lab holding its ports
        for key, modes, listen, target, opts in legs(ctx):
            ctx.up("tiny", BASE + listen + modes[0][1], *opts)
            labels = ["%s-%s" % (key or "direct", m.replace(" ", "")) for m, _ in modes]
            rows = sweep(ctx, [(label, BASE + listen + f) for label, (_, f) in zip(labels, modes)], attack + target)
            results.update({(key, m): rows[label][0] for label, (m, _) in zip(labels, modes)})
    finally:
        ctx.lab("down")
    measured = table(["dialled, handler", "req/s asked", "ok %", "mean ms", "p50 ms", "p95 ms", "p99 ms",
                      "codes and errors", "verdict", "web busy %"], left=1, framed=True,
                     rows=[cells("%s, %s" % (key or _dialled(ctx), m), r, KEYS) for (key, m), r in results.items()])
    return ["%d requests/s for %d s on GET %s, a %d s timeout, `%s`%s; load average %s before, %s after"
            % (RATE, seconds, BLOCK, timeout, " ".join(BASE), ", tcp_abort_on_overflow=1 in the web namespace"
               if ctx.netns else "", before, loadavg()), measured], checks(results)


BLOCKED = "follows from the block: one request at a time for 2 s, %d asked a second: at most 1 %% answered" % RATE
# the write-up's figures (003 L28, blocking; L30, the Future; K: the measured value); an error kind is held to >= 1
CHECKS = (
    (ck.set_by, "blocking: success", "003 L26, L28", "0.00 % (none of 3000)", BLOCKED, K("blocking success shown")),
    (ck.latency, "blocking: mean", "003 L28", 7.156, K("blocking mean_ms")),
    (ck.latency, "blocking: p50", "003 L28", 4.390, K("blocking p50_ms")),
    (ck.latency, "blocking: p95", "003 L28", 22.700, K("blocking p95_ms")),
    (ck.value, "blocking: refused", "003 L28", '"connection refused"', K("blocking refused"), 1, None),
    (ck.value, "blocking: timeout", "003 L28", '"i/o timeout" (at connect)', K("blocking timeout"), 1, None),
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
    measured = {}
    for side, r in (("blocking", inline), ("Future", pool)):
        share = num(r, "success")
        measured.update({side + " success": share, side + " success %": None if share is None else 100 * share,
                         side + " success shown": None if share is None else "%.2f %%" % (100 * share)})
        measured.update({"%s %s" % (side, k): num(r, k) for k in ("mean_ms", "p50_ms", "p95_ms")})
        measured.update({"%s %s" % (side, k): count(r, *kinds) for k, kinds in spray.VEGETA_KINDS.items()})
    out = ck.declared(CHECKS, measured) + [
        ck.value("blocking behind %s (the lab's proxy): 502 answers" % front, "003 L2, L5",
                 "502 Bad Gateway (count not stated)", count(results[(front, "inline")], "502"), 1, None)
        for front in ("nginx", "haproxy") if (front, "inline") in results]
    level = inline.get("level")
    return out + [ck.set_by("requests, rate", "003 L26, L28", "3000 at 100.03/s", "--rate %d --duration %d"
                            % (RATE, SECONDS), "%.0f/s asked" % level if isinstance(level, float) else None)]
