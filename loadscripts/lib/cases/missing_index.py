"""The Laravel blog write-up's missing index: its user scenario ran 1.15x faster once an index was
added. Here every secondary index the blog's statements can use is dropped in turn, under the
same scenario, to find the one that matters most."""

import os
import re
import subprocess

from .. import REPO
from ..errors import RunError
from ..report import MISSING, fmt, table
from .common import Check, cells, loadavg

NAME = "missing-index"
TITLE = "The blog scenario without each index in turn"
WRITEUP = """\
The blog's user scenario (Locust: index, read, like, comment, post, profile) was 1.15x faster in
throughput once the missing index (on the users' name) was added."""
INVENTED = """\
- the write-up's index has no counterpart to drop: sutlab's `users.username` is UNIQUE, a
  constraint every lookup by name uses, and constraints stay (correctness must not depend on the
  flip); each secondary index of the blog's tables is dropped in turn instead;
- `small` fixtures (10,000 articles, 1,000 users), the scenario at 32 users, two workers,
  `--bcrypt-cost 4`: the scenario logs in often, and at the default cost 10 bcrypt saturates the
  web tier and hides every index (docs/bottlenecks.md, "Where the pressure is")."""

USERS = 32
STEP_SECONDS = 20
BASE = ["--workers", "2", "--bcrypt-cost", "4"]
BOARD_TABLES = ("articles", "article_tags", "comments", "favorites", "follows", "sessions")


def board_indexes(status):
    """The secondary indexes of the blog's tables, from `sutlab db indexes status`."""
    names = []
    for m in re.finditer(r"^\w+\s+(idx_\w+): CREATE INDEX \w+ ON (?:\w+\.)?(\w+)", status, re.M):
        if m.group(2) in BOARD_TABLES:
            names.append(m.group(1))
    return names


def _sutlab():
    return os.environ.get("SUTLAB_LAB_BIN") or os.path.join(REPO, "build", "sutlab")


def _db_url():
    return os.environ.get("SUTLAB_LAB_DB_URL") or \
        "postgresql://postgres@127.0.0.1:%s/sutlab" % os.environ.get("SUTLAB_LAB_PG_PORT", "25432")


def run(ctx):
    if ctx.netns:
        raise RunError("missing-index runs on the single-box lab (its database is reached from here)")
    seconds = ctx.seconds(STEP_SECONDS)
    steps_args = ["--tool", "locust", "--scenario", "blog", "--levels", str(USERS), "--duration", str(seconds),
                  "--warmup", "5", "--locust-arg=--fixture-users=1000"]
    before = loadavg()
    ctx.lab("down")
    ctx.lab("up", "--size", "small", "--", *BASE)
    runs = {}
    try:
        ctx.lab("seed", "small")
        ctx.lab("restart", "--", *BASE)
        status = subprocess.run([_sutlab(), "db", "indexes", "status", "--db-url", _db_url()], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=120).stdout
        names = board_indexes(status)
        if not names:
            raise RunError("sutlab db indexes status listed no index of the blog's tables:\n" + status[-2000:])
        # the baseline before and after the drops: their mean is the reference, so a drift of the
        # machine over the runs does not pass for an index's effect (their spread is the noise)
        runs["(none)"] = ctx.steps("all-indexes", steps_args)[0][0]
        for name in names:
            ctx.run([_sutlab(), "db", "indexes", "off", name, "--db-url", _db_url()], "indexes off %s" % name)
            try:
                runs[name] = ctx.steps("without-" + name, steps_args)[0][0]
            finally:
                ctx.run([_sutlab(), "db", "indexes", "on", name, "--db-url", _db_url()], "indexes on %s" % name)
        runs["(none, again)"] = ctx.steps("all-indexes-again", steps_args)[0][0]
    finally:
        ctx.lab("down")
    after = loadavg()
    base = reference(runs)
    keys = ("rps", "p99_ms", "busy_web", "busy_db", "busy_load", "verdict")
    lines = [cells(name, r, keys) + [fmt(base / r["rps"], 2, "{}x") if r.get("rps") else MISSING]
             for name, r in runs.items()]
    sections = ["Locust `--scenario blog` at %d users, %d s per run, `small` fixtures, `%s`; each index dropped "
                "(`sutlab db indexes off NAME`) for one run and restored; load average %s before, %s after"
                % (USERS, seconds, " ".join(BASE), before, after),
                table(["index dropped", "users", "req/s", "p99 ms", "web busy %", "db busy %", "load busy %", "verdict",
                       "with / without"], lines, framed=True)]
    return sections, checks(runs)


def reference(runs):
    """req/s with every index: the mean of the runs before and after the drops."""
    base = [runs[k]["rps"] for k in ("(none)", "(none, again)") if k in runs and runs[k].get("rps")]
    return sum(base) / len(base)


def checks(runs):
    base = reference(runs)
    effects = {name: base / r["rps"] for name, r in runs.items() if not name.startswith("(none") and r.get("rps")}
    top = max(effects, key=effects.get)
    pair = [runs[k]["rps"] for k in ("(none)", "(none, again)") if k in runs]
    noise = max(pair) / min(pair) if len(pair) == 2 and min(pair) else 1.0
    return [Check("the single index that matters most, with / without", "1.15x (users' name)",
                  "%s: %.2fx" % (top, effects[top]), ">= 1.1x and beyond the baselines' spread (%.2fx)" % noise,
                  effects[top] >= max(1.1, noise))]
