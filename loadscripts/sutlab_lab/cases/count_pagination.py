"""The Laravel blog write-up's paginated index (000, steps 17-19): `paginate()` sent a
`SELECT count(*)` with every page of the article index; dropping the count raised the blog
scenario's throughput 1.12x at 8 users and 1.72x at 32, and the database's CPU fell.

The lab loads the index page alone (wrk), not the write-up's scenario: the checks hold that
experiment to the write-up's figures per level all the same, and the verdict comes out as it
comes (docs/bottlenecks.md, "Count pagination", says why it is not the write-up's scenario)."""

from . import checks as ck, texts
from ..flip import load as flip_load
from .common import cpu_range, cpu_share, flip_run, load, num, over, row_at

NAME = "count-pagination"
TITLE = "The paginated index and its count(*)"
WRITEUP, INVENTED = texts.load(__name__)  # count_pagination.md

LEVELS = (8, 32)
STEP_SECONDS = 10

# (level, figure): the write-up's figure for (count on, count off), 000 L168-L169 and L180-L181
RPS = {8: (17, 19), 32: (32, 55)}
MEAN_MS = {8: (98, 63), 32: (628, 200)}
DB_PCT = {8: (47, 25), 32: (99, 84)}
WEB_PCT = {8: ((8, 30), (8, 30)), 32: ((30, 50), (65, 90))}
LOAD_PCT = {8: (6, 6), 32: (8, 14)}
LINES = {8: ("L168", "L180"), 32: ("L169", "L181")}


def run(ctx):
    seconds, levels = ctx.seconds(STEP_SECONDS), ",".join(map(str, LEVELS))
    return flip_run(
        ctx, ["--workers", "2"], (("off", ["--no-count-pagination"]), ("on", ["--count-pagination"])),
        load("wrk", levels, seconds, script="articles_index.lua"),
        "wrk `articles_index.lua` (%s), levels %s connections, %d s each, `small` fixtures, `--workers 2`"
        % (flip_load.script_request("articles_index.lua", "/"), levels, seconds),
        ["count", "connections", "req/s", "mean ms", "p99 ms", "web busy %", "db busy %", "load busy %", "verdict"],
        ("rps", "mean_ms", "p99_ms", "busy_web", "busy_db", "busy_load", "verdict"), checks, size="small", reseed=True)


def checks(runs):
    """The write-up's figures at each level against the measured rows ({"on": rows, "off": rows},
    rows as steps.csv gives them), the fix's direction at each level, and the database as the
    limit with the count at 32 users."""
    out = []
    for level in LEVELS:
        on, off = row_at(runs["on"], level), row_at(runs["off"], level)
        out += _level_figures(level, on, off)
    for level in LEVELS:
        on, off = row_at(runs["on"], level), row_at(runs["off"], level)
        out.append(ck.direction("%d: req/s up without the count" % level, "000 %s, %s" % LINES[level],
                                "%d -> %d" % RPS[level], num(on, "rps"), num(off, "rps")))
    on32 = row_at(runs["on"], 32)
    out.append(ck.tier("32, count on: the tier that limits", "000 L169, L171", "db", [on32.get("verdict") or ""]))
    return out


def _level_figures(level, on, off):
    """One level's figures: the two ratios, then the CPU of each tier with and without the count."""
    cite = "000 %s, %s" % LINES[level]
    (rps_on, rps_off), (ms_on, ms_off) = RPS[level], MEAN_MS[level]
    out = [ck.ratio("%d: req/s, count off / on" % level, cite, rps_off / rps_on, over(off, on, "rps"),
                    writeup="%d / %d = %.2fx" % (rps_off, rps_on, rps_off / rps_on)),
           ck.ratio("%d: mean ms, count off / on" % level, cite, ms_off / ms_on, over(off, on, "mean_ms"),
                    writeup="%d / %d = %.2fx" % (ms_off, ms_on, ms_off / ms_on))]
    for label, row, i in (("count on", on, 0), ("count off", off, 1)):
        line = "000 " + LINES[level][i]
        out += [ck.share("%d, %s: db CPU" % (level, label), line, DB_PCT[level][i], cpu_share(row, "db")),
                cpu_range("%d, %s: web CPU" % (level, label), line, WEB_PCT[level][i], cpu_share(row, "web")),
                ck.share("%d, %s: load CPU" % (level, label), line, LOAD_PCT[level][i], cpu_share(row, "load"))]
    return out

