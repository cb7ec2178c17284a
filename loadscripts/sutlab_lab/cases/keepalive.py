"""The HAProxy sizing write-up's keep-alive rule, on sutlab: from HTTP keep-alive to a connection
per request, the request rate falls to about a third (002 L61; its table: 82,000 HTTP
connections/s against 243,000 requests/s with keep-alive, L37 and L41). The figures are HAProxy's on
a dedicated core (L29): only their ratio carries over to sutlab, measured under the write-up's
topology (the subject alone on its core, the clients apart) scaled onto this machine. Both checks
are the bottleneck part: the ratio, and that the load tool did not limit the steps it reads (a run
ab limits measured ab, not the subject)."""

from . import checks as c, texts
from .common import flip_run, load, num
from .scale import Machine, Topology

NAME = "keepalive"
TITLE = "Keep-alive against a connection per request"
WRITEUP, INVENTED = texts.load(__name__)  # keepalive.md

LEVELS = "16,64"
STEP_SECONDS = 10
BASE = ["--workers", "1"]  # one process, as HAProxy ran (002 L29)
CLOSE, KEEP_ALIVE = 82000, 243000  # 002 L37, L41: 0.34, the rule's third (L61) inside the same band
TOPOLOGY = Topology(
    [Machine("web", "the subject (HAProxy 1.6 there, sutlab here): one process on a dedicated core of a "
                    "3.7 GHz Core i7", 1, "002 L29"),
     Machine("net", "two more cores for the network's interrupts (on loopback, each process's own work here)", 2,
             "002 L29"),
     Machine("load", "the clients, beyond its dual-port 10 Gbps NIC: not stated", None, "002 L29")],
    "small objects (002 L23); here ab at 16 and 64 clients, each run's best step",
    ["the load generator, its concurrency and duration", "which resource limited each row (002 L27: figures to "
     "expect from a well-tuned system)"])
S, WHY_S = 0.5, ("half a core for the subject's dedicated one (002 L29), so that ab, one thread, keeps a core of its "
                 "own beside it as the write-up's clients were apart; only a ratio is compared, which s does not "
                 "change")


def run(ctx):
    ctx.scale(TOPOLOGY, S, (), WHY_S)
    seconds = ctx.seconds(STEP_SECONDS)
    return flip_run(
        ctx, BASE,
        (("keep-alive", ["--keepalive-timeout", "10"]), ("close", ["--keepalive-timeout", "0"])),
        load("ab", LEVELS, seconds, path="/health_check"),
        "ab on GET /health_check, levels %s clients, %d s each, `%s`" % (LEVELS, seconds, " ".join(BASE)),
        ["connections", "clients", "req/s", "p99 ms", "errors", "web busy %", "load busy %", "verdict"],
        ("rps", "p99_ms", "errors", "busy_web", "busy_load", "verdict"), checks)


def best(rows):
    """The step with the most req/s (a failed step's empty rps counts as none; no step: {})."""
    return max(rows, key=lambda r: num(r, "rps") if num(r, "rps") is not None else -1.0, default={})


def checks(runs):
    """The ratio of the best steps' req/s (002 L37, L41, L61), and their verdicts: not the load tool's
    (a missing verdict fails). No direction: the ratio's band, 0.22-0.51x, excludes the wrong side."""
    ka, close = best(runs.get("keep-alive", [])), best(runs.get("close", []))
    ka_rps, close_rps = num(ka, "rps"), num(close, "rps")
    return [
        c.ratio("close / keep-alive, req/s", "002 L37, L41, L61", CLOSE / KEEP_ALIVE,
                close_rps / ka_rps if ka_rps and close_rps is not None else None,
                writeup="82,000 / 243,000 = 0.34x (the rule: a third, L61)", part="bottleneck"),
        c.not_limited_by_load("both runs' best steps: not the load tool", "002 L27, L29",
                              [ka.get("verdict"), close.get("verdict")]),
        c.set_by("object size", "002 L23", "small objects", "GET /health_check"),
    ]
