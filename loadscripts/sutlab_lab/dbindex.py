"""A secondary index of the lab's database dropped for a while and restored, through the server's
own `sutlab db indexes off|on NAME` (servers/tools/indexes.c: it refuses anything but an idx_
index that no constraint owns, saves the definition, and recreates it as it was), the way case
missing-index drops idx_articles_created_at.

    with dbindex.dropped(ctx.run, USERS_BY_NAME):
        rows = ctx.steps("without the index", args)

`run(argv, what)` is the caller's command runner (a case context's `run`, which logs the command
and raises RunError on failure).
"""

import contextlib

from . import engine
from .engine import targets

# The lookup of users by name (GET /api/profiles/:username through lower(username),
# db/migrations/004): the lab's counterpart of the blog write-up's index on its users' name
# (000 L183).
USERS_BY_NAME = "idx_users_username_lower"


def sutlab_bin():
    return targets.lab_bin()


def db_url():
    return targets.lab_db_url()


def command(action, name):
    """The argv of `sutlab db indexes off|on NAME` against the lab's database."""
    if action not in ("off", "on"):
        raise ValueError("action is off or on, not %r" % action)
    return [sutlab_bin(), "db", "indexes", action, name, "--db-url", db_url()]


@contextlib.contextmanager
def dropped(run, name):
    """NAME dropped inside the block, restored when it ends (also when it raises)."""
    run(command("off", name), "indexes off %s" % name)
    try:
        yield
    finally:
        run(command("on", name), "indexes on %s" % name)


def arm(name, run, index):
    """The engine's arm `name` with `index` dropped before each of its runs and restored after each
    (whatever happened), through run(argv, what) as in dropped."""
    return engine.Arm(name, setup=lambda: run(command("off", index), "indexes off %s" % index),
                      teardown=lambda: run(command("on", index), "indexes on %s" % index))
