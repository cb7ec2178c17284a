"""The HAProxy sizing write-up's keep-alive case: the same clients, with every response closing
its connection, ran at about a third of keep-alive."""

from ..report import table
from .common import Check, cells, flipped, loadavg

NAME = "keepalive"
TITLE = "Keep-alive against a connection per request"
WRITEUP = """\
The same load with keep-alive and with `Connection: close` on every response: close mode ran at
about a third of keep-alive's requests a second (a TCP handshake per request)."""
INVENTED = """\
- the load: ab on `GET /health_check` at 16 and 64 clients (the write-up's tool and levels are not
  the point; its ratio is); ab asks for keep-alive, and sutlab's `--keepalive-timeout 0` refuses it,
  so the client reconnects for every request;
- two workers (`--workers 2`), the `tiny` fixtures (the endpoint reads no data)."""

LEVELS = "16,64"
STEP_SECONDS = 10


def run(ctx):
    seconds = ctx.seconds(STEP_SECONDS)
    before = loadavg()
    runs = flipped(ctx, ["--workers", "2"], (("keep-alive", ["--keepalive-timeout", "10"]),
                                             ("close", ["--keepalive-timeout", "0"])),
                   ["--tool", "ab", "--path", "/health_check", "--levels", LEVELS, "--duration", str(seconds),
                    "--warmup", "2"])
    after = loadavg()
    keys = ("rps", "p99_ms", "errors", "busy_web", "busy_load", "verdict")
    sections = ["ab on GET /health_check, levels %s clients, %d s each, `--workers 2`; load average %s before, "
                "%s after" % (LEVELS, seconds, before, after),
                table(["connections", "clients", "req/s", "p99 ms", "errors", "web busy %", "load busy %", "verdict"],
                      [cells(label, r, keys) for label in runs for r in runs[label]], framed=True)]
    return sections, checks(runs)


def checks(runs):
    ka, close = max(r["rps"] for r in runs["keep-alive"]), max(r["rps"] for r in runs["close"])
    ratio = close / ka if ka else 0.0
    return [Check("close / keep-alive, req/s", "about 1/3", "%.0f / %.0f = %.2f" % (close, ka, ratio), "0.1-0.6",
                  0.1 <= ratio <= 0.6)]
