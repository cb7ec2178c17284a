"""The Laravel blog write-up's paginated index: `paginate()` ran `SELECT count(*)` on every page;
`simplePaginate()` (no count) doubled the throughput."""

import os

from .. import LOADSCRIPTS
from ..report import table
from .common import Check, cells, flipped, loadavg

NAME = "count-pagination"
TITLE = "The paginated index and its count(*)"
WRITEUP = """\
The article index at `GET /api/articles` spent its time in `SELECT count(*)` (Laravel's
`paginate()`); with `simplePaginate()`, no count, the index's throughput doubled."""
INVENTED = """\
- the table size: `small` (10,000 articles; the write-up's is not published, and the count's cost
  grows with it: 95x at `large`, docs/bottlenecks.md);
- the load: wrk on the first page (`articles_index.lua`, limit 20) at 8 and 32 connections, where
  the write-up used Locust; two workers."""

LEVELS = "8,32"
STEP_SECONDS = 10


def run(ctx):
    seconds = ctx.seconds(STEP_SECONDS)
    before = loadavg()
    runs = flipped(ctx, ["--workers", "2"], (("off", ["--no-count-pagination"]), ("on", ["--count-pagination"])),
                   ["--tool", "wrk", "--script", os.path.join(LOADSCRIPTS, "wrk", "articles_index.lua"),
                    "--levels", LEVELS, "--duration", str(seconds), "--warmup", "2"], size="small", reseed=True)
    after = loadavg()
    keys = ("rps", "p99_ms", "busy_web", "busy_db", "busy_load", "verdict")
    sections = ["wrk `articles_index.lua` (GET /api/articles?limit=20&offset=0), levels %s connections, %d s "
                "each, `small` fixtures, `--workers 2`; load average %s before, %s after"
                % (LEVELS, seconds, before, after),
                table(["count", "connections", "req/s", "p99 ms", "web busy %", "db busy %", "load busy %", "verdict"],
                      [cells(label, r, keys) for label in runs for r in runs[label]], framed=True)]
    return sections, checks(runs)


def checks(runs):
    off, on = max(r["rps"] for r in runs["off"]), max(r["rps"] for r in runs["on"])
    ratio = off / on if on else 0.0
    db_on = max(r.get("busy_db") or 0.0 for r in runs["on"])
    return [Check("count off / on, req/s", "2x", "%.0f / %.0f = %.1fx" % (off, on, ratio), "1.5-20x",
                  1.5 <= ratio <= 20),
            Check("count on: the tier that pays", "the database", "db busy %.0f %%" % (100 * db_on), ">= 50 %",
                  db_on >= 0.5)]
