#!/usr/bin/python3
"""Integration tests: --db-work K, SELECT sutlab_work(K) before every statement an app sends
(README.md's flag table, docs/admin-api.md, db/migrations/005_work.sql).

Run under loadscripts/sutlab_lab/services/with-services. Expected:
- with --db-work 2, the work statement's count in /metrics (`query="db_work"`) grows by as much as
  the app's statements together over the same requests, GET /api/tags being one statement each,
  in async and in sync mode; no query fails, and every answer is the body a server without the
  flag gives on the same database;
- through the admin listener, the flag turns the work statements on and off;
- async, a work statement runs in its app statement's batch, one implicit transaction (the row an
  update writes has the xid the work statement ran under); sync, it runs just before, in its own;
  a work statement that fails fails no request (async: the app's statement is sent again alone)
  and counts in db_errors_total;
- the function returns K, is VOLATILE (EXPLAIN shows the call, not a folded constant), its calls
  are counted one by one, and its backend's CPU time (/proc/PID/schedstat) grows with K;
- against a database without the function, serve exits 2 with one line naming `sutlab db migrate`,
  with --db-work above 0 and with the admin listener (where it can turn on); a database it cannot
  reach is no refusal (the pools keep trying), and without either nothing is asked of it.
Nothing here times anything: the counts and the CPU comparison hold on a loaded machine.
"""

import subprocess
import unittest

from pgtest import PSQL, FreshDatabase, fresh_database, psql, psql_env, scalar, server_url
from sutlab_testlib import Server, assert_usage_error, free_port, migrate_and_seed, stop_class_server
from test_admin import TOKEN, Admin
from test_delivery import make_session

K = 2
TAGS = "/api/tags"  # board_tags: one statement per request
REQUESTS = 12


def queries(srv):
    """{statement: db_query_duration_seconds_count} of srv's /metrics."""
    return {labels["query"]: value
            for labels, value in srv.metrics().samples("db_query_duration_seconds_count")}


def delta(before, after):
    """(app statements, work statements) run between two queries() readings."""
    app = sum(after[q] - before.get(q, 0) for q in after if q != "db_work")
    return app, after.get("db_work", 0) - before.get("db_work", 0)


def errors(srv):
    return srv.metrics().total("db_errors_total")


def migrated(extra_sql=None):
    """A fresh database, migrated and seeded, then extra_sql run in it: (its FreshDatabase, its URL)."""
    server_url()
    db = FreshDatabase(prefix="sutlab_dw")
    url = db.create()
    try:
        migrate_and_seed(url, timeout=120)
        if extra_sql:
            psql(url, extra_sql)
    except BaseException:
        db.drop()
        raise
    return db, url


class Counted:
    """A fresh database, migrated and seeded; a server with --db-work K and one without beside it."""
    MODE = None

    @classmethod
    def setUpClass(cls):
        cls.work = cls.plain = None
        cls.db, cls.url = migrated()
        try:
            common = ["--db-url", cls.url, "--db-mode", cls.MODE]
            cls.work = Server(extra_args=common + ["--db-work", str(K)], ready_path="/readyz")
            cls.plain = Server(extra_args=common, ready_path="/readyz")
            cls.work.start()
            cls.plain.start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            stop_class_server(cls.plain)
        finally:
            stop_class_server(cls.work, db=cls.db)

    def paths(self):
        sid = int(scalar(self.url, "SELECT min(id) FROM stores"))
        cat = int(scalar(self.url, "SELECT category_id FROM stores WHERE id = %d" % sid))
        slug = scalar(self.url, "SELECT slug FROM articles ORDER BY id LIMIT 1")
        name = scalar(self.url, "SELECT username FROM users ORDER BY id LIMIT 1")
        return [TAGS, "/stores/categories", "/stores?categoryId=%d" % cat, "/stores/%d" % sid,
                "/api/articles?limit=3", "/api/articles/" + slug, "/api/profiles/" + name]

    def test_one_work_statement_per_app_statement(self):
        before, failed = queries(self.work), errors(self.work)
        for _ in range(REQUESTS):
            status, _, body = self.work.get(TAGS)
            self.assertEqual(status, 200, body[:200])
        app, work = delta(before, queries(self.work))
        self.assertEqual(app, REQUESTS, "one board_tags per request")
        self.assertEqual(work, REQUESTS)
        self.assertEqual(errors(self.work), failed)

    def test_same_answers_and_counts_on_every_kind_of_request(self):
        before = queries(self.work)
        for path in self.paths():
            with self.subTest(path=path):
                expected = self.plain.get(path)
                got = self.work.get(path)
                self.assertEqual(expected[0], 200, expected[2][:200])
                self.assertEqual((got[0], got[2]), (expected[0], expected[2]))
        app, work = delta(before, queries(self.work))
        self.assertGreaterEqual(app, len(self.paths()))
        self.assertEqual(work, app)

    def test_a_write_with_its_session_lookup(self):
        sid, owner = (int(x) for x in scalar(self.url, "SELECT id || '|' || owner_id FROM stores ORDER BY id"
                                                       " LIMIT 1").split("|"))
        token = make_session(self.url, owner)
        headers = {"Authorization": "Token " + token}
        path = "/stores/%d/opened" % sid
        expected = self.plain.request("PATCH", path, headers=headers)
        before = queries(self.work)
        got = self.work.request("PATCH", path, headers=headers)
        self.assertEqual(expected[0], 200, expected[2][:200])
        self.assertEqual((got[0], got[2]), (expected[0], expected[2]))
        app, work = delta(before, queries(self.work))
        self.assertEqual(app, 2, "the session, then the update")
        self.assertEqual(work, 2)


class Async(Counted, unittest.TestCase):
    MODE = "async"


class Sync(Counted, unittest.TestCase):
    MODE = "sync"


class Live(unittest.TestCase):
    def test_turned_on_and_off_through_the_admin_listener(self):
        url = fresh_database(self)
        migrate_and_seed(url, timeout=120)
        for mode in ("async", "sync"):
            with self.subTest(mode=mode), Admin(db_url=url, workers=1, extra=["--db-mode", mode]) as a:
                self.assertEqual(self.statements(a.srv), (REQUESTS, 0))
                status, _, body = a.call("PUT", "/admin/flags/db-work", {"value": K})
                self.assertEqual((status, body), (200, {"flag": "db-work", "value": K}))
                self.assertEqual(a.call("GET", "/admin")[2]["flags"]["db-work"], K)
                self.assertEqual(a.srv.build_flags()["db-work"], str(K))
                self.assertEqual(self.statements(a.srv), (REQUESTS, REQUESTS))
                self.assertEqual(a.call("PUT", "/admin/flags/db-work", {"value": 0})[0], 200)
                self.assertEqual(self.statements(a.srv), (REQUESTS, 0))
                for bad in (-1, 1000001, "x"):
                    self.assertEqual(a.call("PUT", "/admin/flags/db-work", {"value": bad})[0], 422, bad)
                self.assertIn("--db-work changed from 0 to %d" % K, a.srv.stderr())

    def statements(self, srv):
        """(app statements, work statements) of REQUESTS requests for TAGS."""
        before = queries(srv)
        for _ in range(REQUESTS):
            self.assertEqual(srv.get(TAGS)[0], 200)
        return delta(before, queries(srv))


# sutlab_work replaced, in a database of its own, by one that says when it ran (the xid of its
# transaction) and fails for k = FAILING
FAILING = 13
LOGGING_WORK = """
CREATE TABLE work_log (n serial PRIMARY KEY, k integer, xid bigint DEFAULT txid_current() %% 4294967296);
CREATE OR REPLACE FUNCTION sutlab_work(k integer) RETURNS integer LANGUAGE plpgsql VOLATILE STRICT AS $$
BEGIN
    IF k = %d THEN
        RAISE EXCEPTION 'sutlab_work: failing on purpose';
    END IF;
    INSERT INTO work_log (k) VALUES (k);
    RETURN k;
END
$$;
""" % FAILING


class Batch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.db, cls.url = migrated(LOGGING_WORK)
        cls.sid, owner = (int(x) for x in scalar(cls.url, "SELECT id || '|' || owner_id FROM stores ORDER BY id"
                                                          " LIMIT 1").split("|"))
        cls.headers = {"Authorization": "Token " + make_session(cls.url, owner)}

    @classmethod
    def tearDownClass(cls):
        cls.db.drop()

    def patch(self, srv, verb):
        status, _, body = srv.request("PATCH", "/stores/%d/%s" % (self.sid, verb), headers=self.headers)
        self.assertEqual(status, 200, body[:200])
        last_work = scalar(self.url, "SELECT xid FROM work_log ORDER BY n DESC LIMIT 1")
        return int(last_work), int(scalar(self.url, "SELECT xmin::text FROM stores WHERE id = %d" % self.sid))

    def test_async_one_batch_sync_just_before(self):
        # async: a batch is one implicit transaction, so the update's row was written by the
        # transaction its work statement ran in; sync: the work ran first, in one of its own.
        # --db-latency-ms holds the two together.
        for mode in ("async", "sync"):
            for latency in ("0", "30"):
                with self.subTest(mode=mode, latency=latency), Server(extra_args=[
                        "--db-url", self.url, "--db-mode", mode, "--db-work", "1", "--db-latency-ms", latency]) as srv:
                    for verb in ("closed", "opened"):
                        work_xid, row_xid = self.patch(srv, verb)
                        if mode == "async":
                            self.assertEqual(work_xid, row_xid)
                        else:
                            self.assertLess(work_xid, row_xid)

    def test_a_failing_work_statement_fails_no_request(self):
        # async: its batch aborts, and the app's statement is sent again alone; sync: it runs anyway
        for mode in ("async", "sync"):
            with self.subTest(mode=mode), Server(extra_args=["--db-url", self.url, "--db-mode", mode,
                                                             "--db-work", str(FAILING)]) as srv:
                before, failed = queries(srv), errors(srv)
                for _ in range(REQUESTS):
                    status, _, body = srv.get(TAGS)
                    self.assertEqual(status, 200, body[:200])
                self.assertEqual(delta(before, queries(srv)), (REQUESTS, REQUESTS))
                self.assertEqual(errors(srv) - failed, REQUESTS, "the work statements' own failures")


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
        cls.db, cls.url = migrated()

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


class Refused(unittest.TestCase):
    def test_without_the_function(self):
        url = fresh_database(self)  # empty: no migration
        listen = ["serve", "--listen", "127.0.0.1:%d" % free_port(), "--db-url", url]
        for extra in (["--db-work", str(K)], ["--db-work", "1", "--db-mode", "sync"],
                      ["--admin-listen", ":%d" % free_port(), "--admin-token", TOKEN]):
            with self.subTest(extra=extra):
                line = assert_usage_error(self, listen + extra, "sutlab_work", "sutlab db migrate")
                self.assertTrue(line.startswith("sutlab serve: --db-work"), line)

    def test_an_unreachable_database_is_no_refusal(self):
        # the pools keep trying it, as without the flag: the server starts
        with Server(extra_args=["--db-url", "postgresql://nobody@127.0.0.1:1/none", "--db-work", str(K)]) as srv:
            self.assertEqual(srv.get("/health_check")[0], 200)

    def test_bad_values_exit_2(self):
        for bad in ("-1", "x", "1000001", ""):
            assert_usage_error(self, ["serve", "--db-work", bad, "--listen", "127.0.0.1:1"], "--db-work")

    def test_zero_needs_nothing(self):
        # a database without the function still serves what it has without the flag
        url = fresh_database(self)
        with Server(extra_args=["--db-url", url]) as srv:
            self.assertEqual(srv.get("/health_check")[0], 200)
            self.assertNotIn("db_work", queries(srv))


if __name__ == "__main__":
    unittest.main()
