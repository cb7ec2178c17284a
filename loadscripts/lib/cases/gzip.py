"""The delivery scale-out write-up's gzip: nginx compressed the listing, and under the link's
bandwidth the compressed listing was "much faster"."""

import os

from .. import LOADSCRIPTS
from ..errors import RunError
from ..report import fmt, table
from .common import Check, cells, flipped, loadavg

NAME = "gzip"
TITLE = "gzip on a bandwidth-capped link"
WRITEUP = """\
The 100-store JSON listing served gzip-compressed ("much faster"): the bytes on the wire, not the
server, limited the uncompressed one."""
INVENTED = """\
- the link: the netns lab's client-web link capped at 10 Mbit/s (`infra/lab up --netns --rate
  10mbit`, tc tbf); the write-up's bandwidth is not published;
- the load: wrk `stores_by_category.lua` with `Accept-Encoding: gzip` at 16 and 64 connections,
  `small` fixtures, the listing cached (`--redis-cache`) so that the link, not PostgreSQL, is what
  the uncompressed run meets; two workers."""

LEVELS = "16,64"
STEP_SECONDS = 10
RATE = "10mbit"


def run(ctx):
    if not ctx.netns:
        raise RunError("gzip needs the bandwidth cap of the netns lab: run it with --netns (root)")
    seconds = ctx.seconds(STEP_SECONDS)
    before = loadavg()
    runs = flipped(ctx, ["--workers", "2", "--redis-cache"], (("off", ["--no-gzip"]), ("on", ["--gzip"])),
                   ["--tool", "wrk", "--script", os.path.join(LOADSCRIPTS, "wrk", "stores_by_category.lua"),
                    "--levels", LEVELS, "--duration", str(seconds), "--warmup", "2"], size="small", reseed=True,
                   up_args=["--rate", RATE], env={"WRK_HEADERS": "Accept-Encoding: gzip"})
    # (`down` deleted the namespaces, and the cap with them)
    after = loadavg()
    keys = ("rps", "p99_ms", "busy_web", "busy_load", "verdict")
    sections = ["wrk `stores_by_category.lua` with Accept-Encoding: gzip, levels %s connections, %d s each, through "
                "a %s link, `small` fixtures, `--workers 2 --redis-cache`; load average %s before, %s after"
                % (LEVELS, seconds, RATE, before, after),
                table(["gzip", "connections", "req/s", "p99 ms", "web busy %", "load busy %", "verdict"],
                      [cells(label, r, keys) for label in runs for r in runs[label]], framed=True)]
    return sections, checks(runs)


def checks(runs):
    off, on = max(r["rps"] for r in runs["off"]), max(r["rps"] for r in runs["on"])
    ratio = on / off if off else 0.0
    return [Check("gzip on / off, req/s under the cap", "much faster", "%.0f / %.0f = %sx" % (on, off, fmt(ratio, 1)),
                  ">= 2x", ratio >= 2)]
