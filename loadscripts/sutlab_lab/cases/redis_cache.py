"""The make-delivery write-up's first step: one application server answering the store listing by
category from MySQL, then from a Redis cache. The lab replays the flip (PostgreSQL against Redis)
on sutlab and holds the two rates, their ratio, the direction and the limiting tier to the
write-up's figures (001 L47, L53). The write-up's later steps (nginx in front, a second server, a
larger load generator: 001 L57-L111) are not replayed here."""

from . import checks as c, texts
from .common import flip_run, load

NAME = "redis-cache"
TITLE = "The store listing, from PostgreSQL and from Redis"
WRITEUP, INVENTED = texts.load(__name__)  # redis_cache.md

LEVELS = "16,64"
STEP_SECONDS = 10

# 1800대 = 1,800-1,899 TPS from Redis and 1000대 = 1,000-1,999 TPS from MySQL (001 L47).
REDIS_LOW, REDIS_HIGH = 1800, 1899
DB_LOW, DB_HIGH = 1000, 1999
# The ratio's ends from those ranges: 1800 / 1999 = 0.9005 (fastest MySQL, slowest Redis) and
# 1899 / 1000 = 1.899 (the other way round). The low end is below 1 because the words allow it;
# the direction check holds the write-up's claim that the cache was the faster.
RATIO_LOW, RATIO_HIGH = REDIS_LOW / DB_HIGH, REDIS_HIGH / DB_LOW


def run(ctx):
    seconds = ctx.seconds(STEP_SECONDS)
    return flip_run(
        ctx, ["--workers", "2"], (("PostgreSQL", ["--no-redis-cache"]), ("Redis", ["--redis-cache"])),
        load("wrk", LEVELS, seconds, script="stores_by_category.lua"),
        "wrk `stores_by_category.lua`, levels %s connections, %d s each, `small` fixtures, `--workers 2`"
        % (LEVELS, seconds),
        ["listing from", "connections", "req/s", "p99 ms", "web busy %", "db busy %", "redis busy %", "load busy %",
         "verdict"], ("rps", "p99_ms", "busy_web", "busy_db", "busy_redis", "busy_load", "verdict"), checks,
        size="small", reseed=True)


def best(rows):
    """The step with the most req/s (a failed step's empty rps counts as none)."""
    return max(rows, key=lambda r: r["rps"] if isinstance(r.get("rps"), float) else -1.0)


def _rps(row):
    return row["rps"] if isinstance(row.get("rps"), float) else None


def checks(runs):
    """The write-up's figures (001 L47, L53) against the best step of each run."""
    db, redis = best(runs["PostgreSQL"]), best(runs["Redis"])
    most = max(runs["Redis"], key=lambda r: r["level"])  # 001 L53: the most users
    db_rps, redis_rps = _rps(db), _rps(redis)
    ratio = redis_rps / db_rps if db_rps and redis_rps is not None else None
    return [
        c.value("from the database, req/s", "001 L47", "in the 1,000 range", db_rps, DB_LOW, DB_HIGH),
        c.value("from Redis, req/s", "001 L47", "in the 1,800 range", redis_rps, REDIS_LOW, REDIS_HIGH),
        c.ratio("Redis / database, req/s", "001 L47", 1.8, ratio, writeup="1,800 range / 1,000 range",
                low=RATIO_LOW, high=RATIO_HIGH),
        c.direction("the cache raises req/s", "001 L47", "1,000 range -> 1,800 range", db_rps, redis_rps),
        c.tier("one cached server at its most users: the tier that limits", "001 L53", "web",
               [v for v in (most.get("verdict"),) if v]),
        c.set_by("rows in a listing", "001 L19", "about 100", "`small` fixtures: 100 stores a category"),
        c.set_by("the server's cores", "001 L47", "2 vCPU", "--workers 2 on this 2-core machine"),
    ]
