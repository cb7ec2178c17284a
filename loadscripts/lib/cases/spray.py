"""The spray write-up: a handler that blocks for 2 s, attacked at a fixed rate (vegeta -rate=100
-duration=30s, an open model), run on the event loop, as a Future, and fixed; then behind a proxy."""

from ..report import MISSING, fmt, table
from .common import Check, loadavg

NAME = "spray"
TITLE = "Blocking handler under an open-model spray"
WRITEUP = """\
`vegeta attack -rate=100 -duration=30s` against a handler that blocked for 2 s:
- blocking on the event loop: success 0 %, mean 7.2 s, p99 30 s, "connection refused" and "i/o timeout";
- the handler as a Future (a bounded thread pool): success 31 %, "EOF" and "connection reset by peer";
- behind a proxy: 502 Bad Gateway;
- the fix (a non-blocking wait): every request answered."""
INVENTED = """\
- the pool sizes (8 and 50: the write-up does not give its executor's; 50 is what its 31 % implies,
  see docs/bottlenecks.md), one worker, `--backlog 128`, the `tiny` fixtures (the endpoint reads no data);
- the proxies' timeouts are the lab's (HAProxy `timeout connect 2s`, nginx `proxy_connect_timeout 2s`);
- with `--duration` (a quick look) the client's timeout is the duration + 2 s (at least 4) instead of
  vegeta's 30 s, and the proxies are left out."""

RATE, SECONDS, BLOCK = 100, 30, "/work/sleep?ms=2000"
BASE = ["--workers", "1", "--backlog", "128"]
MODES = (("inline", ["--handler-mode", "inline"]),
         ("pool 8", ["--handler-mode", "pool", "--offload-threads", "8"]),
         ("pool 50", ["--handler-mode", "pool", "--offload-threads", "50"]),
         ("offload", ["--handler-mode", "offload"]))
FRONTS = (None, "nginx", "haproxy")


def _up(ctx, front, flags):
    where = ["--netns"] if ctx.netns else []
    if front:
        where += ["--instances", "1", "--lb", front]
    ctx.lab("down")
    ctx.lab("up", *where, "--size", "tiny", "--", *flags)


def _row(front, mode, r):
    return [front or "-", mode, fmt(100 * r["success"], 1) if isinstance(r.get("success"), float) else MISSING,
            fmt(r["mean_ms"] / 1000.0, 2) if isinstance(r.get("mean_ms"), float) else MISSING,
            fmt(r["p99_ms"] / 1000.0, 2) if isinstance(r.get("p99_ms"), float) else MISSING,
            r.get("errors", ""), r.get("verdict", ""), fmt(100 * r["busy_web"], 0) if isinstance(r.get("busy_web"), float)
            else MISSING]


def run(ctx):
    seconds = ctx.seconds(SECONDS)
    # a quick look: the proxies left out, and a timeout a little past the block
    fronts, timeout = (FRONTS[:1], max(4, seconds + 2)) if ctx.quick else (FRONTS, 30)
    results, lines = {}, []
    before = loadavg()
    for front in fronts:
        for i, (mode, flags) in enumerate(MODES):
            if i == 0:
                _up(ctx, front, BASE + flags)
            else:
                ctx.lab("restart", "--", *(BASE + flags))
            args = ["--tool", "httperf", "--path", BLOCK, "--rate", str(RATE), "--duration", str(seconds),
                    "--warmup", "0", "--timeout", str(timeout)] + (["--abort-on-overflow"] if ctx.netns else [])
            rows, _ = ctx.steps("%s-%s" % (front or "direct", mode.replace(" ", "")), args)
            results[(front, mode)] = rows[0]
            lines.append(_row(front, mode, rows[0]))
    ctx.lab("down")
    after = loadavg()
    measured = table(["front", "handler", "ok %", "mean s", "p99 s", "codes and errors", "verdict", "web busy %"],
                     lines, framed=True)
    sections = ["%d requests/s for %d s on GET %s, a %d s timeout, `--workers 1 --backlog 128`%s; "
                "load average %s before, %s after" % (RATE, seconds, BLOCK, timeout, ", tcp_abort_on_overflow=1 in "
                                                      "the web namespace" if ctx.netns else "", before, after),
                measured]
    return sections, checks(results, timeout)


def _ok(r):
    return r.get("success") if isinstance(r.get("success"), float) else 0.0


def _proxy_5xx(r):
    errors = str(r.get("errors", ""))
    return sum(int(kv.split(":")[1]) for kv in errors.split() if kv[:1] == "5" and ":" in kv)


def checks(results, timeout):
    inline, pool, fixed = results[(None, "inline")], results[(None, "pool 50")], results[(None, "offload")]
    fronts = [f for f in FRONTS if f and (f, "inline") in results]
    behind = [results[(f, "inline")] for f in fronts]
    proxies = [Check("blocking behind a proxy: the proxy's 5xx", "502", " / ".join(
        "%s %s" % (f, results[(f, "inline")].get("errors", "")) for f in fronts), "5xx > 0 for each",
        all(_proxy_5xx(r) > 0 for r in behind))] if fronts else []
    return [
        Check("blocking: success", "0 %", "%.1f %%" % (100 * _ok(inline)), "< 5 %", _ok(inline) < 0.05),
        Check("blocking: p99", "30 s (the timeout)", fmt(inline.get("p99_ms", 0) / 1000.0, 1) + " s", "the timeout",
              (inline.get("p99_ms") or 0) >= 1000 * timeout - 1),
        Check("Future: success", "31 %", "%.1f %% (50 threads)" % (100 * _ok(pool)), "15-50 %",
              0.15 <= _ok(pool) <= 0.50),
        Check("fixed: success", "100 %", "%.1f %%" % (100 * _ok(fixed)), ">= 95 %", _ok(fixed) >= 0.95),
    ] + proxies

