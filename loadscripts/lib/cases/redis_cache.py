"""The make-delivery write-up: the restaurant listing scaled once Redis cached it."""

import os

from .. import LOADSCRIPTS
from ..report import table
from .common import Check, cells, flipped, loadavg

NAME = "redis-cache"
TITLE = "The store listing, from PostgreSQL and from Redis"
WRITEUP = """\
The delivery app's store listing by category went from about 1,000 to 1,800 TPS once the listing
was cached in Redis (cache-aside)."""
INVENTED = """\
- the data: `small` (20 categories x 100 stores, 100-store listings of 21.6 KB);
- the load: wrk `stores_by_category.lua` (a random category per request) at 16 and 64
  connections; two workers; the write-up's load tool and levels are not the point, its ratio is."""

LEVELS = "16,64"
STEP_SECONDS = 10


def run(ctx):
    seconds = ctx.seconds(STEP_SECONDS)
    before = loadavg()
    runs = flipped(ctx, ["--workers", "2"], (("PostgreSQL", ["--no-redis-cache"]), ("Redis", ["--redis-cache"])),
                   ["--tool", "wrk", "--script", os.path.join(LOADSCRIPTS, "wrk", "stores_by_category.lua"),
                    "--levels", LEVELS, "--duration", str(seconds), "--warmup", "2"], size="small", reseed=True)
    after = loadavg()
    keys = ("rps", "p99_ms", "busy_web", "busy_db", "busy_redis", "busy_load", "verdict")
    sections = ["wrk `stores_by_category.lua`, levels %s connections, %d s each, `small` fixtures, `--workers 2`; "
                "load average %s before, %s after" % (LEVELS, seconds, before, after),
                table(["listing from", "connections", "req/s", "p99 ms", "web busy %", "db busy %", "redis busy %",
                       "load busy %", "verdict"], [cells(label, r, keys) for label in runs for r in runs[label]],
                      framed=True)]
    return sections, checks(runs)


def checks(runs):
    pg, redis = max(r["rps"] for r in runs["PostgreSQL"]), max(r["rps"] for r in runs["Redis"])
    ratio = redis / pg if pg else 0.0
    return [Check("Redis / PostgreSQL, req/s", "1,800 / 1,000 = 1.8x", "%.0f / %.0f = %.1fx" % (redis, pg, ratio),
                  "1.3-10x", 1.3 <= ratio <= 10)]
