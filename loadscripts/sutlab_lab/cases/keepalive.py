"""The HAProxy sizing write-up's keep-alive rule: going from HTTP keep-alive to a connection per
request cuts the request rate to about a third (002 L61; its table: 243,000 requests/s with
keep-alive, 82,000 HTTP connections/s, L37 and L41). The write-up's figures are HAProxy's on one
dedicated core; the lab flips sutlab's keep-alive under ab and holds the ratio, the direction and
the limiting tier to them: a run the load tool limits measured the tool, not the server."""

from . import checks as c, texts
from .common import flip_run, load

NAME = "keepalive"
TITLE = "Keep-alive against a connection per request"
WRITEUP, INVENTED = texts.load(__name__)  # keepalive.md

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
