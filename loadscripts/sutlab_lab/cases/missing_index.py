"""The Laravel blog write-up's missing index (000, steps 19-20): with the count gone, an index on
the users' name took its scenario from 55 to 63 rps (1.15x) and 200 to 144 ms, the database's CPU
from 84 % to 66 %. That index has no counterpart in sutlab's schema, so the lab drops one named
before the run (INDEX) and runs the blog scenario with and without it in alternated rounds, each
comparison against its own baseline: no index is picked after the fact as the one that mattered."""

import statistics

from .. import dbindex, engine
from ..engine import targets
from ..errors import RunError
from ..report import fmt, table
from . import checks as ck, texts
from .common import cells, cpu_range, cpu_share, loadavg, num, over

NAME = "missing-index"
TITLE = "The blog scenario with and without the articles' date index"
WRITEUP, INVENTED = texts.load(__name__)  # missing_index.md

USERS, ROUNDS, STEP_SECONDS = 32, 3, 20
INDEX = "idx_articles_created_at"
BASE = ["--workers", "2", "--bcrypt-cost", "4"]
BOARD_TABLES = ("articles", "article_tags", "comments", "favorites", "follows", "sessions")

# the write-up's figures (without the index, with it): 000 L181, L186
RPS = (55, 63)
MEAN_MS = (200, 144)
DB_PCT = (84, 66)
WEB_PCT = ((65, 90), (50, 80))
LOAD_PCT = (14, 16)
LINES = ("L181", "L186")


def order(rounds):
    """The runs in order: (round, "with" | "without"), the pair's order switching each round (the
    engine's alternated rounds) so that a drift of the machine does not fall on one side."""
    return [(i, side) for i in range(rounds) for side in engine.round_order(("with", "without"), i + 1)]


def run(ctx):
    if ctx.netns:
        raise RunError("missing-index runs on the single-box lab (its database is reached from here)")
    seconds, before = ctx.seconds(STEP_SECONDS), loadavg()
    steps_args = ["--tool", "locust", "--scenario", "blog", "--levels", str(USERS), "--duration", str(seconds),
                  "--warmup", "5", "--locust-arg=--fixture-users=1000"]
    ctx.up("small", BASE)
    try:
        ctx.lab("seed", "small")
        ctx.lab("restart", "--", *BASE)
        status = targets.db_indexes(targets.lab_bin(), targets.lab_db_url(), "status")
        if INDEX not in dbindex.listed(status, BOARD_TABLES):
            raise RunError("sutlab db indexes status does not list %s:\n%s" % (INDEX, status[-2000:]))
        arms = [engine.Arm("with"), dbindex.arm("without", ctx.run, INDEX)]  # the run and its output in commands.log
        runs = engine.run_on(None, arms, lambda arm, rnd, _s: ctx.steps("round%d-%s" % (rnd, arm.name),
                                                                        steps_args)[0], ROUNDS, seconds)
    finally:
        ctx.lab("down")
    return _sections(runs, seconds, before, loadavg()), checks(runs)


def _sections(runs, seconds, before, after):
    keys = ("rps", "mean_ms", "p99_ms", "busy_web", "busy_db", "busy_load", "verdict")
    ratios = [over(w, wo, "rps") for w, wo in zip(runs["with"], runs["without"])]
    lines = [["%d" % (i + 1)] + cells(side, runs[side][i], keys) +
             [fmt(ratios[i], 2, "{}x") if side == "with" and ratios[i] else ""] for i, side in order(ROUNDS)]
    return ["Locust `--scenario blog` at %d users, %d s per run, `small` fixtures, `%s`; %s dropped "
            "(`sutlab db indexes off %s`) for each run without it and restored after; %d alternated rounds; "
            "load average %s before, %s after" % (USERS, seconds, " ".join(BASE), INDEX, INDEX, ROUNDS, before, after),
            table(["round", INDEX, "users", "req/s", "mean ms", "p99 ms", "web busy %", "db busy %",
                   "load busy %", "verdict", "with / without req/s"], lines, framed=True)]


def checks(runs):
    """The write-up's figures against the rounds ({"with": rows, "without": rows}, one row a round
    as steps.csv gives it, round i of each side a pair): each figure the median over the rounds,
    and the direction in the worst round."""
    pairs = list(zip(runs["with"], runs["without"]))
    cite = "000 %s, %s" % LINES
    out = [ck.quotient(what + ", with / without the index", cite, figures[::-1],
                       _median([over(w, wo, key) for w, wo in pairs]))
           for what, key, figures in (("req/s", "rps", RPS), ("mean ms", "mean_ms", MEAN_MS))]
    for i, side in enumerate(("without", "with")):
        line, what = "000 " + LINES[i], "%s the index" % side
        cpu = {t: _median([cpu_share(r, t) for r in runs[side]]) for t in ("db", "web", "load")}
        out += [ck.share("%s: db CPU" % what, line, DB_PCT[i], cpu["db"]),
                cpu_range("%s: web CPU" % what, line, WEB_PCT[i], cpu["web"]),
                ck.share("%s: load CPU" % what, line, LOAD_PCT[i], cpu["load"])]
    worst = min(pairs, key=lambda p: over(p[0], p[1], "rps") or 0.0)
    out.append(ck.direction("req/s up with the index, every round (the worst shown)", cite,
                            "%d -> %d" % RPS, num(worst[1], "rps"), num(worst[0], "rps")))
    return out


def _median(values):
    """The median of the measured values; None (a failed check) when any round did not measure it."""
    return None if not values or any(v is None for v in values) else statistics.median(values)
