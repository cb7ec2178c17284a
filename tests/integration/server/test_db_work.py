#!/usr/bin/python3
"""Integration tests: sutlab_work(k), the function of db/migrations/005_work.sql: k * 1000
iterations of integer arithmetic, database CPU on demand.

Run under loadscripts/sutlab_lab/services/with-services. Expected: it returns k; it is VOLATILE
(EXPLAIN shows the call, not a folded constant); its calls are counted one by one; its backend's CPU
time (/proc/PID/schedstat) grows with k. Nothing here times anything: the counts and the CPU
comparison hold on a loaded machine.
"""

import subprocess
import unittest

from pgtest import PSQL, FreshDatabase, psql, psql_env, scalar, server_url
from sutlab_testlib import migrate_and_seed


class Session:
    """One psql session kept open, asked one statement at a time (its backend's pid stays the same)."""

    def __init__(self, url):
        self.proc = subprocess.Popen([PSQL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=psql_env())
        self.pid = int(self.ask("SELECT pg_backend_pid()"))

    def ask(self, sql):
        """The one line sql answers."""
        self.proc.stdin.write(sql + ";\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("psql ended on %r: %s" % (sql, self.proc.stderr.read()))
        return line.strip()

    def cpu_ns(self):
        """The backend's CPU time so far (the first field of /proc/PID/schedstat), or None."""
        try:
            with open("/proc/%d/schedstat" % self.pid) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)
        self.proc.stdout.close()
        self.proc.stderr.close()


class Function(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        server_url()
        cls.db = FreshDatabase(prefix="sutlab_dw")
        cls.url = cls.db.create()
        try:
            migrate_and_seed(cls.url, timeout=120)
        except BaseException:
            cls.db.drop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.db.drop()

    def test_returns_k(self):
        self.assertEqual(psql(self.url, "SELECT sutlab_work(0), sutlab_work(1), sutlab_work(7),"
                                        " sutlab_work(NULL) IS NULL").strip(), "0|1|7|t")

    def test_volatile_so_each_call_runs(self):
        self.assertEqual(scalar(self.url, "SELECT provolatile FROM pg_proc WHERE oid = 'sutlab_work(integer)'"
                                          "::regprocedure"), "v")
        plan = psql(self.url, "EXPLAIN (VERBOSE, COSTS OFF) SELECT sutlab_work(3)")
        self.assertIn("Output: sutlab_work(3)", plan, "folded into a constant at plan time")

    def test_every_call_counted(self):
        # one string, one implicit transaction: track_functions for it alone, and pg_stat_xact_* reads
        # what it has done so far
        out = psql(self.url, "SET LOCAL track_functions = 'all'; SELECT sutlab_work(1); SELECT sutlab_work(2);"
                             " SELECT sutlab_work(0); SELECT calls FROM pg_stat_xact_user_functions"
                             " WHERE funcname = 'sutlab_work'")
        self.assertEqual(out.split()[-1], "3", out)  # psql prints each statement's rows: the count is last

    def test_cpu_grows_with_k(self):
        s = Session(self.url)
        self.addCleanup(s.close)
        if s.cpu_ns() is None:
            self.skipTest("no /proc/%d/schedstat: PostgreSQL runs out of sight" % s.pid)

        def cpu(k):
            start = s.cpu_ns()
            self.assertEqual(s.ask("SELECT sutlab_work(%d)" % k), str(k))
            return s.cpu_ns() - start
        cpu(1)  # the function's first call in this session compiles it
        # CPU time, not wall time: a busy machine delays a call but does not make it cost more
        small, large = cpu(2), cpu(200)
        self.assertGreater(large, small, "100 times the iterations, not more CPU")


if __name__ == "__main__":
    unittest.main()
