"""The private PostgreSQL 15 and Redis 7 of a run (the integration tests, bench's database suites,
tests/data/loadtools/capture): `with-services`, the script beside this file, starts both on free
loopback ports, runs a command beside them and removes them when it ends, whatever happens. The
command finds them in SUTLAB_TEST_* variables (SUTLAB_TEST_DB_URL, SUTLAB_TEST_REDIS_URL, ...: the
script's header lists them)."""

import os

from ..errors import RunError

WITH_SERVICES = os.path.join(os.path.dirname(os.path.realpath(__file__)), "with-services")


def running():
    """True in a command that with-services runs (its PostgreSQL's URL is set)."""
    return bool(os.environ.get("SUTLAB_TEST_DB_URL"))


def exec_under(argv, env=None):
    """Runs `argv` again beside a private PostgreSQL and Redis of its own, `env` added to this
    process's environment; does not return."""
    if not os.access(WITH_SERVICES, os.X_OK):
        raise RunError("%s is missing or not executable" % WITH_SERVICES)
    os.execve(WITH_SERVICES, [WITH_SERVICES] + list(argv), dict(os.environ, **(env or {})))
