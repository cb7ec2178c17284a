"""The delivery write-up's appendix (001): nginx in front of one WAS did much better than the WAS
alone, which the author traced to nginx's gzip of the JSON listing. The write-up gives no figure
for it, so the case holds the lab to the direction only (checks.py): sutlab's own gzip, on against
off, under a bandwidth cap the lab chooses; the ratio under that cap is the compression ratio,
which the cap sets, and is shown, not counted."""

from ..errors import RunError
from . import checks as c
from .common import flip_run, load

NAME = "gzip"
TITLE = "gzip on a bandwidth-capped link"
WRITEUP = """\
The make-delivery write-up (001), in its appendix: one nginx in front of one WAS performed much
better than the WAS on its own (001 L123); the author found the cause in nginx's gzip, which
compressed the JSON responses of about 100 rows, ruling out nginx's static-file caching and micro
caching, neither of them in play (001 L127). No TPS, latency, response size or bandwidth is given
for either configuration, so there is no figure to compare: only the direction."""
INVENTED = """\
- the comparison: sutlab's own gzip (`--gzip`, libh2o's filter at quality 1) on against off, not
  nginx in front of the server against the server alone (the write-up's), so nginx's other work
  (its proxying, its connections) is left out and only the compression is measured;
- the link: the netns lab's client-web link capped at 10 Mbit/s (`infra/lab up --netns --rate
  10mbit`, tc tbf); the write-up names neither the link nor its bandwidth. Under the cap the
  uncompressed listing fills the link, so on / off is about the compression ratio: the cap sets it,
  and it is shown as set (a `>= 2x` check of it, which held for any run, was removed);
- the load: wrk `stores_by_category.lua` with `Accept-Encoding: gzip` at 16 and 64 connections
  (the write-up's nGrinder script, its headers and its users are not published), `small` fixtures
  (100 stores per category, the write-up's "about 100 rows"), the listing cached (`--redis-cache`,
  as the write-up's was in Redis) so that the link, not PostgreSQL, is what the uncompressed run
  meets; two workers;
- no tier check: the write-up names no limiting tier (001 L123, L127). Steps' own verdict, `network`
  when the capped link carries 85 % of its rate and no server tier is saturated, is in the measured
  table, not counted: the cap is the lab's, so the link limiting proves the set-up, not the
  write-up;
- no figure, so no "partly reproduced": the one counted check is the direction, and the verdict is
  reproduced or not reproduced."""

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


def _top(rows):
    return max((r["rps"] for r in rows if isinstance(r.get("rps"), float)), default=None)


def checks(runs):
    """The direction (counted) and the on / off ratio the cap sets (shown)."""
    off, on = _top(runs["off"]), _top(runs["on"])
    ratio = "%.0f / %.0f = %.1fx" % (on, off, on / off) if on is not None and off else None
    return [c.direction("gzip on against off: req/s under the cap", "001 L123, L127", "much better, no figure",
                        off, on),
            c.set_by("gzip on / off: req/s under the cap", "001 L123", "no figure",
                     "--rate %s: under the cap the ratio is the compression ratio" % RATE, ratio)]
