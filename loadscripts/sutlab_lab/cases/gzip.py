"""The delivery write-up's appendix (001): nginx in front of one WAS did much better than the WAS
alone, which the author traced to nginx's gzip of the JSON listing. The write-up gives no figure
for it, and its direction follows from the bandwidth cap the lab chooses: under it the uncompressed
listing fills the link, so any gzip that compresses is faster, by about the compression ratio. So
nothing is counted and the verdict is `illustrated` (checks.verdict): sutlab's own gzip, on against
off, shown. No scale model: with no figure to compare, there is nothing to scale."""

from ..errors import RunError
from . import checks as c, texts
from .common import flip_run, load, top

NAME = "gzip"
TITLE = "gzip on a bandwidth-capped link"
WRITEUP, INVENTED = texts.load(__name__)  # gzip.md

LEVELS = "16,64"
STEP_SECONDS = 10
RATE = "10mbit"


def run(ctx):
    if not ctx.netns:
        raise RunError("gzip needs the bandwidth cap of the netns lab: run it with --netns (root)")
    seconds = ctx.seconds(STEP_SECONDS)
    return flip_run(  # (`down` deletes the namespaces, and the cap with them)
        ctx, ["--workers", "2", "--redis-cache"], (("off", ["--no-gzip"]), ("on", ["--gzip"])),
        load("wrk", LEVELS, seconds, script="stores_by_category.lua"),
        "wrk `stores_by_category.lua` with Accept-Encoding: gzip, levels %s connections, %d s each, through a %s "
        "link, `small` fixtures, `--workers 2 --redis-cache`" % (LEVELS, seconds, RATE),
        ["gzip", "connections", "req/s", "p99 ms", "web busy %", "load busy %", "verdict"],
        ("rps", "p99_ms", "busy_web", "busy_load", "verdict"), checks, size="small", reseed=True,
        up_args=["--rate", RATE], env={"WRK_HEADERS": "Accept-Encoding: gzip"})


def checks(runs):
    """The direction and the on / off ratio, both shown as set: the lab's cap decides them."""
    off, on = top(runs["off"]), top(runs["on"])
    shown = "%.0f -> %.0f (%.1fx)" % (off, on, on / off) if on is not None and off else None
    return [c.set_by("gzip on against off: req/s under the cap", "001 L123, L127", "much better, no figure",
                     "--rate %s, the lab's: the uncompressed listing fills the link, so gzip is faster by about "
                     "the compression ratio whatever the write-up's stack did" % RATE, shown)]
