"""Throwaway PostgreSQL databases for integration tests (standard library + the psql CLI).

The harness (loadscripts/sutlab_lab/services/with-services) runs one private PostgreSQL server and passes its URL in
SUTLAB_TEST_DB_URL. Tests that need a database of their own create one on the same server:

    with FreshDatabase() as url:          # CREATE DATABASE sutlab_t_<random>; dropped on exit
        psql(url, "SELECT 1")

or, in a TestCase, `url = fresh_database(self)`, which drops the database in a cleanup.
"""

import os
import shutil
import subprocess
import unittest
import urllib.parse
import uuid

PSQL = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"


def server_url():
    """SUTLAB_TEST_DB_URL, or skip the test when not run under the harness."""
    url = os.environ.get("SUTLAB_TEST_DB_URL")
    if not url:
        raise unittest.SkipTest("SUTLAB_TEST_DB_URL is not set "
                                "(run under loadscripts/sutlab_lab/services/with-services)")
    return url


def with_database(url, dbname):
    """url with its database name replaced by dbname (user, host, port and query kept)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ValueError("not a postgresql:// URL: %r" % url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + urllib.parse.quote(dbname)))


def psql_env():
    # PG* variables of the caller (PGDATABASE, PGOPTIONS ...) must not change what a URL means.
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def psql(url, sql, check=True, timeout=60):
    """Runs sql with `psql -At`; returns stdout (rows as 'a|b' lines, COPY ... TO STDOUT as is).

    With check, a failure raises AssertionError carrying psql's message.
    """
    proc = subprocess.run(
        [PSQL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=psql_env())
    if check and proc.returncode != 0:
        raise AssertionError("psql failed (%d) on %r: %s" % (proc.returncode, sql, proc.stderr.strip()))
    return proc.stdout


def scalar(url, sql):
    """The single value sql returns, as text."""
    return psql(url, sql).strip()


def rows(url, sql):
    """The rows sql returns, as lists of text fields."""
    return [line.split("|") for line in psql(url, sql).splitlines()]


class FreshDatabase:
    """A new, empty database on the harness's server; a context manager yielding its URL."""

    def __init__(self, prefix="sutlab_t"):
        self.admin_url = with_database(server_url(), "postgres")
        self.name = "%s_%s" % (prefix, uuid.uuid4().hex[:12])
        self.url = with_database(server_url(), self.name)

    def create(self):
        psql(self.admin_url, 'CREATE DATABASE "%s"' % self.name)
        return self.url

    def drop(self):
        # FORCE: a test that failed half-way may have left a client connected.
        psql(self.admin_url, 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % self.name, check=False)

    def __enter__(self):
        return self.create()

    def __exit__(self, *exc):
        self.drop()
        return False


def fresh_database(test):
    """Creates a database for one TestCase method and drops it when the test ends."""
    db = FreshDatabase()
    url = db.create()
    test.addCleanup(db.drop)
    return url
