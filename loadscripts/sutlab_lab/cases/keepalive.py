"""The HAProxy sizing write-up's keep-alive rule: going from HTTP keep-alive to a connection per
request cuts the request rate to about a third (002 L61; its table: 243,000 requests/s with
keep-alive, 82,000 HTTP connections/s, L37 and L41). The write-up's figures are HAProxy's on one
dedicated core; the lab flips sutlab's keep-alive under ab and holds the ratio, the direction and
the limiting tier to them: a run the load tool limits measured the tool, not the server."""

from . import checks as c
from .common import flip_run, load

NAME = "keepalive"
TITLE = "Keep-alive against a connection per request"
WRITEUP = """\
HAProxy 1.6 alone on one core of a 3.7 GHz Core i7 (002 L29), small objects (002 L23):
- end-to-end keep-alive: 243,000 HTTP requests/s (002 L41);
- a connection per request: 82,000 HTTP connections/s (002 L37), 0.34 of keep-alive;
- the rule of thumb: from keep-alive to close, the request rate falls to a third (002 L61);
- server-close mode (keep-alive to the client, close to the server): 97,000 requests/s (002 L39);
- CPU: HAProxy 15 % and the kernel 85 % in close mode, about 30 % and 70 % with keep-alive (002 L3)."""
INVENTED = """\
- the server under test is sutlab, not HAProxy: a server answering, not a proxy opening a second
  connection per request; `--workers 2` on this 2-core machine (HAProxy had one dedicated core and
  two more for interrupts, 002 L29) and the load tool on the same cores;
- the load: ab on `GET /health_check` (a small object, 002 L23) at 16 and 64 clients, 10 s a step;
  ab asks for keep-alive and sutlab's `--keepalive-timeout 0` refuses it, so ab reconnects for
  every request; each run's figure is its best step, and the tier check reads those steps;
- the tier: the write-up's rates are the proxy's own, on its dedicated core (002 L29), so the
  server's tier must be the limit; where ab (one thread) is what saturates, the rates are ab's,
  and the case is not reproduced whatever the ratio;
- not compared, and why: the absolute rates, 243,000 requests/s with keep-alive (002 L41),
  82,000 HTTP and 83,000 TCP connections/s (L37, L35), which are HAProxy 1.6's on a dedicated
  3.7 GHz core with two more for interrupts (L29), against sutlab sharing two cores with ab: only
  their ratio carries over; server-close (002 L39), which needs a proxy between client and server;
  the CPU split (002 L3), since the lab's tables do not split a tier's CPU into user and kernel
  time;
- removed: the old band of 0.1-0.6 for the ratio, wider than the rule's third x/÷1.5."""

LEVELS = "16,64"
STEP_SECONDS = 10
THIRD = 1 / 3  # 002 L61; the table's 82,000 / 243,000 = 0.337 (L37, L41) is inside the same band


def run(ctx):
    seconds = ctx.seconds(STEP_SECONDS)
    return flip_run(
        ctx, ["--workers", "2"],
        (("keep-alive", ["--keepalive-timeout", "10"]), ("close", ["--keepalive-timeout", "0"])),
        load("ab", LEVELS, seconds, path="/health_check"),
        "ab on GET /health_check, levels %s clients, %d s each, `--workers 2`" % (LEVELS, seconds),
        ["connections", "clients", "req/s", "p99 ms", "errors", "web busy %", "load busy %", "verdict"],
        ("rps", "p99_ms", "errors", "busy_web", "busy_load", "verdict"), checks)


def best(rows):
    """The step with the most req/s (a failed step's empty rps counts as none)."""
    return max(rows, key=lambda r: r["rps"] if isinstance(r.get("rps"), float) else -1.0)


def checks(runs):
    """The write-up's figures (002 L61, L37, L41, L29) against the best step of each run."""
    ka, close = best(runs["keep-alive"]), best(runs["close"])
    ka_rps, close_rps = (r["rps"] if isinstance(r.get("rps"), float) else None for r in (ka, close))
    ratio = close_rps / ka_rps if ka_rps and close_rps is not None else None
    return [
        c.ratio("close / keep-alive, req/s", "002 L61", THIRD, ratio,
                writeup="1/3 (82,000 / 243,000 = 0.34, L37/L41)"),
        c.direction("keep-alive raises req/s", "002 L37, L41", "82,000 -> 243,000", close_rps, ka_rps),
        c.tier("the tier that limits both runs' best steps", "002 L29", "web",
               [v for v in (ka.get("verdict"), close.get("verdict")) if v]),
        c.set_by("object size", "002 L23", "small objects", "GET /health_check"),
    ]
