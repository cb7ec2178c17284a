#!/usr/bin/python3
"""Integration tests: `sutlab db migrate|seed|indexes` against the harness's real PostgreSQL.

Every test case works in a database of its own (pgtest.FreshDatabase) and asserts on the rows
PostgreSQL holds afterwards, read back with psql.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

from pgtest import PSQL as PSQL_BIN, fresh_database, psql, rows, scalar
from sutlab_testlib import clean_env, source_root, sutlab_bin

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import crypt  # deprecated in 3.11, removed in 3.13: only one assertion needs it
    except ImportError:
        crypt = None

# README.md's fixture sizes: tiny.
TINY = {"users": 10, "store_categories": 5, "stores": 50, "menus": 250,
        "tags": 10, "articles": 50, "favorites": 200, "comments": 50}
# Fixture tables whose size that table leaves open (derived from the seed), and every fixture table.
DERIVED = ("follows", "article_tags")
FIXTURE_TABLES = tuple(TINY) + DERIVED

# Every column, in key order: timestamps are fixtures too (the board over the 730 days before
# 2026, i.e. from 2024-01-02; users on the day before, stores on that first day), never the time
# of the run.
DUMPS = {
    "users": "SELECT id, username, email, password_hash, bio, image, created_at, updated_at FROM users ORDER BY id",
    "store_categories": "SELECT id, name FROM store_categories ORDER BY id",
    "stores": "SELECT id, name, phone, address, owner_id, open_status, introduction, category_id,"
              " created_at, updated_at FROM stores ORDER BY id",
    "menus": "SELECT id, store_id, name, price, description FROM menus ORDER BY id",
    "follows": "SELECT follower_id, followee_id, created_at FROM follows ORDER BY 1, 2",
    "tags": "SELECT id, name FROM tags ORDER BY id",
    "articles": "SELECT id, slug, title, description, body, author_id, favorites_count, created_at,"
                " updated_at FROM articles ORDER BY id",
    "article_tags": "SELECT article_id, tag_id, position FROM article_tags ORDER BY 1, 2",
    "favorites": "SELECT user_id, article_id, created_at FROM favorites ORDER BY 1, 2",
    "comments": "SELECT id, article_id, author_id, body, created_at, updated_at FROM comments ORDER BY id",
}

# Every foreign key of the board tables: (table, column, referenced table).
BOARD_FKS = [("follows", "follower_id", "users"), ("follows", "followee_id", "users"),
             ("articles", "author_id", "users"), ("article_tags", "article_id", "articles"),
             ("article_tags", "tag_id", "tags"), ("favorites", "user_id", "users"),
             ("favorites", "article_id", "articles"), ("comments", "article_id", "articles"),
             ("comments", "author_id", "users")]

# The schema's constraints and indexes, to compare before and after a seed (which drops and
# recreates them around the load).
SCHEMA_SQL = ("SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) || ' '"
              " || convalidated FROM pg_constraint WHERE connamespace = 'public'::regnamespace"
              " UNION ALL SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = 'public'"
              " ORDER BY 1")


def slugify(title, article_id):
    """docs/board-api.md: lower-cased, runs of anything but a-z0-9 -> '-', trimmed, '-<id>'."""
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return "%s-%d" % (s or "article", article_id)

IDX_SQL = ("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
           " AND indexname LIKE 'idx\\_%' ORDER BY indexname")


def db(*args, env=None, timeout=120):
    """Runs `sutlab db ARGS...`; returns (exit status, stdout, stderr)."""
    proc = subprocess.run([sutlab_bin(), "db"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=clean_env(env))
    return proc.returncode, proc.stdout, proc.stderr


def migration_versions():
    d = os.path.join(source_root(), "db", "migrations")
    return sorted(f[:-4] for f in os.listdir(d) if f.endswith(".sql"))


def dump(url, table):
    return psql(url, "COPY (%s) TO STDOUT" % DUMPS[table])


def count(url, table):
    return int(scalar(url, "SELECT count(*) FROM %s" % table))


class Case(unittest.TestCase):
    def ok(self, *args, **kw):
        rc, out, err = db(*args, **kw)
        self.assertEqual(rc, 0, "sutlab db %s: exit %d\nstdout: %s\nstderr: %s" % (args, rc, out, err))
        return out, err

    def migrated(self):
        url = fresh_database(self)
        self.ok("migrate", "--db-url", url)
        return url

    def seeded(self, *extra):
        url = self.migrated()
        self.ok("seed", "--db-url", url, "--size", "tiny", "--bcrypt-cost", "4", *extra)
        return url


class Usage(Case):
    def bad(self, *args):
        rc, out, err = db(*args, timeout=10)
        self.assertEqual(rc, 2, "exit %d for %s: %s" % (rc, args, err))
        lines = err.strip().splitlines()
        self.assertTrue(lines and lines[0].startswith("sutlab db"), err)
        return lines[0]

    def test_bad_usage_exits_2_with_one_line(self):
        self.assertIn("huge", self.bad("seed", "--size", "huge"))
        self.assertIn("sideways", self.bad("indexes", "sideways"))
        self.assertIn("--frobnicate", self.bad("migrate", "--frobnicate"))
        self.assertIn("--size", self.bad("seed"))
        self.bad("seed", "--size", "tiny", "--seed", "minus-one")
        self.bad("seed", "--size", "tiny", "--bcrypt-cost", "99")
        self.bad("indexes")
        self.bad("frobnicate")
        self.bad()

    def test_help_exits_0(self):
        for cmd in ([], ["migrate"], ["seed"], ["indexes"]):
            rc, out, err = db(*(cmd + ["--help"]), timeout=10)
            self.assertEqual(rc, 0, err)
            self.assertIn("usage: sutlab db", out)

    def test_unreachable_server_fails_fast_and_clearly(self):
        for cmd in (["migrate"], ["seed", "--size", "tiny"], ["indexes", "status"]):
            start = time.monotonic()
            rc, out, err = db(*cmd, "--db-url", "postgresql://127.0.0.1:1/x", timeout=30)
            self.assertEqual(rc, 1, err)
            self.assertLess(time.monotonic() - start, 10)
            self.assertRegex(err, r"cannot connect to the database: .*127\.0\.0\.1.*refused")

    def test_db_url_comes_from_the_environment(self):
        url = fresh_database(self)
        out, _ = self.ok("migrate", env={"SUTLAB_DB_URL": url})
        self.assertIn("%d applied" % len(migration_versions()), out)


class Migrate(Case):
    def test_applies_records_and_is_idempotent(self):
        url = fresh_database(self)
        versions = migration_versions()
        out, _ = self.ok("migrate", "--db-url", url)
        for v in versions:
            self.assertIn("applied %s.sql" % v, out)
        self.assertIn("%d applied, 0 already applied" % len(versions), out)
        self.assertEqual(psql(url, "SELECT version FROM schema_migrations ORDER BY version").split(),
                         versions)
        for table in TINY:
            self.assertEqual(scalar(url, "SELECT to_regclass('%s') IS NOT NULL" % table), "t")
        stamps = psql(url, "SELECT version, applied_at FROM schema_migrations ORDER BY version")

        out, _ = self.ok("migrate", "--db-url", url)
        self.assertEqual(out.strip(), "0 applied, %d already applied" % len(versions))
        self.assertEqual(psql(url, "SELECT version, applied_at FROM schema_migrations ORDER BY version"),
                         stamps)

    def test_failing_migration_rolls_back_and_stops(self):
        url = fresh_database(self)
        with tempfile.TemporaryDirectory() as d:
            def write(name, sql):
                with open(os.path.join(d, name), "w") as f:
                    f.write(sql)
            write("001_good.sql", "CREATE TABLE good (id int);\n")
            write("002_bad.sql", "CREATE TABLE partial (id int);\nINSERT INTO good VALUES (1);\nSELEC 1;\n")
            write("003_later.sql", "CREATE TABLE later (id int);\n")
            write("notes.txt", "not a migration")

            rc, out, err = db("migrate", "--db-url", url, "--migrations", d)
            self.assertEqual(rc, 1, err)
            self.assertIn("applied 001_good.sql", out)
            self.assertRegex(err, r"002_bad\.sql: line 3: ERROR: syntax error")
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertEqual(scalar(url, "SELECT to_regclass('partial') IS NULL"), "t")
            self.assertEqual(scalar(url, "SELECT to_regclass('later') IS NULL"), "t")
            self.assertEqual(count(url, "good"), 0)
            self.assertEqual(psql(url, "SELECT version FROM schema_migrations").split(), ["001_good"])

            # Fixed, the rest applies; 001 is not run again (it would fail: table exists).
            write("002_bad.sql", "CREATE TABLE partial (id int);\n")
            out, _ = self.ok("migrate", "--db-url", url, "--migrations", d)
            self.assertIn("2 applied, 1 already applied", out)
            self.assertEqual(psql(url, "SELECT version FROM schema_migrations ORDER BY 1").split(),
                             ["001_good", "002_bad", "003_later"])

    def test_migrations_dir_from_environment_and_missing_dir(self):
        url = fresh_database(self)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "001_x.sql"), "w") as f:
                f.write("CREATE TABLE from_env (id int);\n")
            self.ok("migrate", "--db-url", url, env={"SUTLAB_MIGRATIONS_DIR": d})
            self.assertEqual(scalar(url, "SELECT to_regclass('from_env') IS NOT NULL"), "t")
        rc, _, err = db("migrate", "--db-url", url, "--migrations", "/nonexistent/sutlab-migrations")
        self.assertEqual(rc, 1)
        self.assertIn("/nonexistent/sutlab-migrations", err)

    def test_concurrent_migrates_apply_each_file_once(self):
        url = fresh_database(self)
        procs = [subprocess.Popen([sutlab_bin(), "db", "migrate", "--db-url", url], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=clean_env()) for _ in range(3)]
        results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
        for out, err, rc in results:
            self.assertEqual(rc, 0, err)
        applied = sum(int(re.search(r"(\d+) applied,", out).group(1)) for out, _, _ in results)
        self.assertEqual(applied, len(migration_versions()))
        self.assertEqual(count(url, "schema_migrations"), len(migration_versions()))


class Seed(Case):
    def test_tiny_has_the_documented_counts_and_shapes(self):
        url = self.migrated()
        out, err = self.ok("seed", "--db-url", url, "--size", "tiny")
        for table, n in TINY.items():
            self.assertEqual(count(url, table), n, table)
            self.assertRegex(err, r"(?m)^%s: %d rows \(\d+\.\d s\)$" % (table, n))
        self.assertIn("seeded size tiny", out)
        self.assertRegex(err, r"(?m)^vacuum, analyze: %d tables \(\d+\.\d s\)$" % len(FIXTURE_TABLES))
        # Vacuumed: every page of every fixture table all-visible (count(*) may read the index alone),
        # so autovacuum has nothing left to do under a later run. ANALYZE alone leaves relallvisible 0.
        names = ", ".join("'%s'" % t for t in FIXTURE_TABLES)
        self.assertEqual(rows(url, "SELECT relname, relpages > 0, relallvisible = relpages FROM pg_class"
                                   " WHERE relkind = 'r' AND relname IN (%s) ORDER BY 1" % names),
                         [[t, "t", "t"] for t in sorted(FIXTURE_TABLES)])
        self.assertEqual(rows(url, "SELECT category_id, count(*) FROM stores GROUP BY 1 ORDER BY 1"),
                         [[str(c), "10"] for c in range(1, 6)])
        self.assertEqual(scalar(url, "SELECT count(*) FROM (SELECT store_id FROM menus GROUP BY 1"
                                     " HAVING count(*) = 5) s"), "50")
        self.assertEqual(rows(url, "SELECT id, username, email FROM users ORDER BY id")[:2],
                         [["1", "user1", "user1@example.com"], ["2", "user2", "user2@example.com"]])
        self.assertEqual(scalar(url, "SELECT max(id) || ' ' || max(username) FROM users"), "10 user9")
        names = psql(url, "SELECT name FROM store_categories ORDER BY id").split("\n")[:5]
        self.assertEqual(len(set(names)), 5)
        self.assertIn("Korean", names)
        for phone in psql(url, "SELECT phone FROM stores").split():
            self.assertRegex(phone, r"^010-\d{4}-\d{4}$")
        self.assertEqual(scalar(url, "SELECT count(*) FROM menus WHERE price < 1000 OR price > 30000"
                                     " OR price % 500 <> 0"), "0")
        self.assertEqual(scalar(url, "SELECT count(DISTINCT address) > 3 FROM stores"), "t")
        statuses = dict(rows(url, "SELECT open_status, count(*) FROM stores GROUP BY 1"))
        self.assertGreater(int(statuses.get("OPENED", 0)), int(statuses.get("CLOSED", 0)))
        self.assertEqual(scalar(url, "SELECT count(*) FROM stores WHERE introduction = '' OR name = ''"), "0")
        # Sequences past the fixture ids: the application's inserts do not collide.
        self.assertEqual(scalar(url, "INSERT INTO store_categories (name) VALUES ('New') RETURNING id"), "6")
        self.assertEqual(scalar(url, "SELECT nextval('users_id_seq')"), "11")
        self.assertEqual(scalar(url, "SELECT nextval('menus_id_seq')"), "251")
        # ANALYZEd: the planner knows the row counts.
        self.assertEqual(scalar(url, "SELECT reltuples FROM pg_class WHERE relname = 'menus'"), "250")

    def test_every_store_has_an_existing_owner_and_category(self):
        url = self.seeded()
        self.assertEqual(scalar(url, "SELECT count(*) FROM stores s LEFT JOIN users u ON u.id = s.owner_id"
                                     " LEFT JOIN store_categories c ON c.id = s.category_id"
                                     " WHERE u.id IS NULL OR c.id IS NULL"), "0")
        self.assertGreater(int(scalar(url, "SELECT count(DISTINCT owner_id) FROM stores")), 3)
        self.assertEqual(scalar(url, "SELECT count(*) FROM menus m LEFT JOIN stores s ON s.id = m.store_id"
                                     " WHERE s.id IS NULL"), "0")

    def test_password_hashes_are_bcrypt_of_password(self):
        url = self.migrated()
        self.ok("seed", "--db-url", url, "--size", "tiny")  # default cost 10
        hashes = set(psql(url, "SELECT password_hash FROM users").split())
        self.assertEqual(len(hashes), 1, "one hash shared by all fixture users")
        h = hashes.pop()
        self.assertTrue(h.startswith("$2b$10$"), h)
        if crypt is None:
            self.skipTest("python crypt module unavailable: bcrypt verification skipped")
        self.assertEqual(crypt.crypt("password", h), h)
        self.assertNotEqual(crypt.crypt("Password", h), h)

    def test_bcrypt_cost_flag(self):
        url = self.seeded()
        self.assertTrue(scalar(url, "SELECT min(password_hash) FROM users").startswith("$2b$04$"))

    def test_non_empty_database_is_refused_and_kept(self):
        url = self.seeded()
        before = {t: psql(url, "COPY (SELECT * FROM %s ORDER BY 1, 2) TO STDOUT" % t) for t in FIXTURE_TABLES}
        rc, out, err = db("seed", "--db-url", url, "--size", "tiny", "--seed", "2", "--bcrypt-cost", "4")
        self.assertEqual(rc, 1, err)
        self.assertIn("--force", err)
        self.assertIn("not empty", err)
        after = {t: psql(url, "COPY (SELECT * FROM %s ORDER BY 1, 2) TO STDOUT" % t) for t in FIXTURE_TABLES}
        self.assertEqual(before, after)  # timestamps included: nothing was rewritten

    def test_force_replaces_everything(self):
        url = self.seeded()
        first = dump(url, "stores")
        psql(url, "INSERT INTO sessions (token_hash, user_id) VALUES (sha256('t'), 1);"
                  "INSERT INTO stores (name, phone, address, owner_id, category_id)"
                  " VALUES ('Extra', '010-0000-0000', 'Seoul', 1, 1)")
        self.ok("seed", "--db-url", url, "--size", "tiny", "--seed", "2", "--force", "--bcrypt-cost", "4")
        for table, n in TINY.items():
            self.assertEqual(count(url, table), n, table)
        self.assertEqual(count(url, "sessions"), 0)
        self.assertEqual(scalar(url, "SELECT count(*) FROM stores WHERE name = 'Extra'"), "0")
        self.assertNotEqual(dump(url, "stores"), first)
        self.assertEqual(scalar(url, "SELECT max(id) FROM stores"), "50")

    def test_same_seed_same_rows_other_seed_other_rows(self):
        a, b, c = self.migrated(), self.migrated(), self.migrated()
        self.ok("seed", "--db-url", a, "--size", "tiny", "--seed", "42", "--bcrypt-cost", "4")
        self.ok("seed", "--db-url", b, "--size", "tiny", "--seed", "42", "--bcrypt-cost", "4")
        self.ok("seed", "--db-url", c, "--size", "tiny", "--seed", "43", "--bcrypt-cost", "4")
        for table in DUMPS:
            self.assertEqual(dump(a, table), dump(b, table), table)
            self.assertTrue(dump(a, table))
        for table in ("stores", "menus", "follows", "articles", "article_tags", "favorites", "comments"):
            self.assertNotEqual(dump(a, table), dump(c, table), table)
        # Same shape whatever the seed: the counts and ids do not move.
        self.assertEqual(psql(a, "SELECT id, category_id FROM stores ORDER BY id"),
                         psql(c, "SELECT id, category_id FROM stores ORDER BY id"))
        for table in TINY:
            self.assertEqual(count(c, table), TINY[table], table)

    def test_fixtures_do_not_depend_on_the_day_of_the_run(self):
        # Timestamps come from the seed, not now(): a database seeded "later" (another
        # transaction timestamp, another TimeZone) holds the same instants.
        a, b = self.migrated(), self.migrated()
        self.ok("seed", "--db-url", a, "--size", "tiny", "--bcrypt-cost", "4")
        time.sleep(1.1)
        self.ok("seed", "--db-url", b, "--size", "tiny", "--bcrypt-cost", "4",
                env={"PGTZ": "Asia/Seoul"})
        for table in ("users", "stores", "follows", "articles", "favorites", "comments"):
            self.assertEqual(dump(a, table), dump(b, table), table)

    def test_unmigrated_database_is_refused(self):
        url = fresh_database(self)
        rc, out, err = db("seed", "--db-url", url, "--size", "tiny")
        self.assertEqual(rc, 1, err)
        self.assertIn("sutlab db migrate", err)

    def test_a_failure_half_way_leaves_nothing(self):
        url = self.migrated()
        # Menus load after users and stores: a constraint most of them break fails the run after
        # those were copied, which must all roll back with it (and the dropped keys come back).
        psql(url, "ALTER TABLE menus ADD CONSTRAINT cheap CHECK (price < 5000)")
        rc, out, err = db("seed", "--db-url", url, "--size", "tiny", "--bcrypt-cost", "4")
        self.assertEqual(rc, 1, err)
        self.assertRegex(err, r"menus: .*cheap")
        for table in FIXTURE_TABLES:
            self.assertEqual(count(url, table), 0, table)

    def test_keys_and_indexes_are_the_same_after_seeding(self):
        url = self.migrated()
        before = psql(url, SCHEMA_SQL)
        self.assertIn("favorites_pkey", before)
        self.assertIn("idx_favorites_article_id", before)
        out, err = self.ok("seed", "--db-url", url, "--size", "tiny", "--bcrypt-cost", "4")
        self.assertRegex(err, r"(?m)^constraints: \d+ foreign keys, \d+ indexes and \d+ keys dropped")
        self.assertRegex(err, r"(?m)^constraints: \d+ restored \(\d+\.\d s\)$")
        self.assertEqual(psql(url, SCHEMA_SQL), before)
        # Checked, not just declared: a row breaking a restored foreign key is refused.
        rc = subprocess.run([PSQL_BIN, "-X", "-q", "-d", url, "-c",
                             "INSERT INTO favorites (user_id, article_id) VALUES (1, 999999)"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.assertNotEqual(rc.returncode, 0)
        self.assertIn("favorites_article_id_fkey", rc.stderr)

    def test_a_failure_while_restoring_leaves_nothing(self):
        url = self.migrated()
        # A plain unique index the fixtures break: dropped for the load, its rebuild fails.
        psql(url, "CREATE UNIQUE INDEX one_comment_each ON comments (author_id)")
        before = psql(url, SCHEMA_SQL)
        rc, out, err = db("seed", "--db-url", url, "--size", "tiny", "--bcrypt-cost", "4")
        self.assertEqual(rc, 1, err)
        last = err.strip().splitlines()[-1]
        self.assertRegex(last, r"^sutlab db seed: restoring one_comment_each: .*duplicate")
        for table in FIXTURE_TABLES:
            self.assertEqual(count(url, table), 0, table)
        self.assertEqual(psql(url, SCHEMA_SQL), before)


class Indexes(Case):
    def test_off_on_status_round_trip(self):
        url = self.seeded()
        before = rows(url, IDX_SQL)
        self.assertGreaterEqual(len(before), 4)
        kept_sql = ("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'"
                    " AND indexname NOT LIKE 'idx\\_%' ORDER BY 1")
        kept = psql(url, kept_sql).split()
        for name in ("users_pkey", "users_username_key", "users_email_key", "stores_pkey", "menus_pkey"):
            self.assertIn(name, kept)

        out, _ = self.ok("indexes", "status", "--db-url", url)
        for name, _ in before:
            self.assertRegex(out, r"(?m)^on +%s:" % name)

        out, _ = self.ok("indexes", "off", "--db-url", url)
        for name, _ in before:
            self.assertIn("dropped %s" % name, out)
        self.assertEqual(rows(url, IDX_SQL), [])
        # Primary keys and unique constraints stay (the saved-definitions table adds its own key).
        self.assertLessEqual(set(kept), set(psql(url, kept_sql).split()))
        self.assertEqual(rows(url, "SELECT name, definition FROM sutlab_dropped_indexes ORDER BY name"),
                         before)

        out, _ = self.ok("indexes", "off", "--db-url", url)
        self.assertIn("nothing to drop", out)
        self.assertEqual(count(url, "sutlab_dropped_indexes"), len(before))

        out, _ = self.ok("indexes", "status", "--db-url", url)
        for name, _ in before:
            self.assertRegex(out, r"(?m)^off +%s:" % name)

        out, _ = self.ok("indexes", "on", "--db-url", url)
        for name, _ in before:
            self.assertIn("created %s" % name, out)
        self.assertEqual(rows(url, IDX_SQL), before)
        self.assertEqual(count(url, "sutlab_dropped_indexes"), 0)

        out, _ = self.ok("indexes", "on", "--db-url", url)
        self.assertIn("nothing to restore", out)
        self.assertEqual(rows(url, IDX_SQL), before)

    def test_one_index_at_a_time(self):
        """off/on NAME change that index only; an unknown name is exit 2 with nothing changed."""
        url = self.migrated()
        before = rows(url, IDX_SQL)
        names = [n for n, _ in before]
        self.assertIn("idx_stores_category_id", names)
        out, _ = self.ok("indexes", "off", "idx_stores_category_id", "--db-url", url)
        self.assertIn("dropped idx_stores_category_id", out)
        self.assertEqual([n for n, _ in rows(url, IDX_SQL)], [n for n in names if n != "idx_stores_category_id"])
        out, _ = self.ok("indexes", "off", "idx_stores_category_id", "--db-url", url)
        self.assertIn("idx_stores_category_id already dropped", out)
        for bad in (["off", "idx_nope"], ["on", "idx_nope"], ["off", "idx_comments_article_id", "users_pkey"]):
            code, out, err = db("indexes", *bad, "--db-url", url)
            self.assertEqual(code, 2, (bad, out, err))
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn("no secondary index named", err)
        self.assertEqual(len(rows(url, IDX_SQL)), len(before) - 1, "a refused command changed something")
        out, _ = self.ok("indexes", "on", "idx_stores_category_id", "--db-url", url)
        self.assertIn("created idx_stores_category_id", out)
        self.assertEqual(rows(url, IDX_SQL), before)
        self.assertEqual(count(url, "sutlab_dropped_indexes"), 0)

    def test_status_names_the_endpoints_from_explain(self):
        """status: every index, present or dropped, with the endpoints whose statements' generic
        plans scan it. The test database is tiny, so sequential scans are priced out
        (PGOPTIONS) to see which index serves which statement; a dropped index is recreated for
        the plans in a transaction that is rolled back."""
        url = self.migrated()
        self.ok("indexes", "off", "idx_stores_category_id", "--db-url", url)
        out, _ = self.ok("indexes", "status", "--db-url", url, env={"PGOPTIONS": "-c enable_seqscan=off"})
        blocks = {}
        for line in out.splitlines():
            m = re.match(r"^(on|off) +(\S+):", line)
            if m:
                current = blocks.setdefault(m.group(2), {"state": m.group(1), "used": []})
            elif line.startswith("     used by "):
                current["used"].append(line.strip())
        self.assertEqual(blocks["idx_stores_category_id"]["state"], "off")
        self.assertIn("used by GET /stores?categoryId= [delivery_stores_by_category]",
                      blocks["idx_stores_category_id"]["used"])
        self.assertIn("used by GET /api/articles/:slug/comments [board_comments]",
                      blocks["idx_comments_article_id"]["used"])
        self.assertIn("used by GET /api/articles?tag= [board_articles_by_tag]",
                      blocks["idx_article_tags_tag_id"]["used"])
        self.assertEqual(set(blocks), {n for n, _ in rows(url, IDX_SQL)} | {"idx_stores_category_id"})
        # the plans' transaction was rolled back: the dropped index is still dropped
        self.assertNotIn("idx_stores_category_id", [n for n, _ in rows(url, IDX_SQL)])
        self.assertRegex(out, r"(?m)^\d+ present, 1 dropped")

    def test_on_with_nothing_ever_dropped(self):
        url = self.migrated()
        out, _ = self.ok("indexes", "on", "--db-url", url)
        self.assertIn("nothing to restore", out)

    def test_constraint_indexes_named_idx_are_kept(self):
        url = self.seeded()
        psql(url, "ALTER TABLE menus ADD CONSTRAINT idx_menus_unique_name UNIQUE (store_id, name)")
        self.ok("indexes", "off", "--db-url", url)
        self.assertEqual(scalar(url, "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'idx\\_%'"), "1")
        self.assertEqual(scalar(url, "SELECT to_regclass('idx_menus_unique_name') IS NOT NULL"), "t")
        self.ok("indexes", "on", "--db-url", url)

    def test_seeding_works_with_indexes_off(self):
        url = self.migrated()
        self.ok("indexes", "off", "--db-url", url)
        self.ok("seed", "--db-url", url, "--size", "tiny", "--bcrypt-cost", "4")
        self.assertEqual(rows(url, IDX_SQL), [])  # still off: the seed restores only what it dropped
        self.ok("indexes", "on", "--db-url", url)
        self.assertEqual(scalar(url, "SELECT count(*) FROM stores WHERE category_id = 2"), "10")
        self.assertEqual(scalar(url, "SELECT to_regclass('idx_favorites_article_id') IS NOT NULL"), "t")


class Board(Case):
    """The board app's fixtures (migration 002)."""

    def assertNone(self, url, sql, what):
        bad = psql(url, sql)
        self.assertEqual(bad, "", "%s: %s" % (what, bad[:500]))

    def check_board(self, url, size):
        """Invariants that hold at every size."""
        self.check_board_links(url, size)
        self.check_board_times(url)
        self.check_board_slugs(url, size)

    def check_board_links(self, url, size):
        """The rows' references: favorites, foreign keys, follows, tags and their positions."""
        # favorites: unique pairs, and favorites_count is the exact count for every article.
        self.assertNone(url, "SELECT user_id, article_id FROM favorites GROUP BY 1, 2 HAVING count(*) > 1",
                        "duplicate favorites")
        self.assertNone(url, "SELECT a.id, a.favorites_count, count(f.article_id) FROM articles a"
                             " LEFT JOIN favorites f ON f.article_id = a.id"
                             " GROUP BY a.id HAVING a.favorites_count <> count(f.article_id)",
                        "favorites_count differs from the favorites")
        # Every foreign key resolves.
        for table, column, ref in BOARD_FKS:
            self.assertNone(url, "SELECT t.%s FROM %s t LEFT JOIN %s r ON r.id = t.%s WHERE r.id IS NULL"
                                 % (column, table, ref, column), "%s.%s -> %s" % (table, column, ref))
        # follows: no self-follows, unique, ~5 each.
        self.assertNone(url, "SELECT * FROM follows WHERE follower_id = followee_id", "self-follows")
        self.assertNone(url, "SELECT 1 FROM follows GROUP BY follower_id, followee_id HAVING count(*) > 1",
                        "duplicate follows")
        users = count(url, "users")
        per_user = count(url, "follows") / users
        self.assertTrue(3 <= per_user <= 7, per_user)
        # tags: ids 1..T, distinct names.
        self.assertEqual(scalar(url, "SELECT count(DISTINCT name) || ' ' || min(id) || ' ' || max(id) FROM tags"),
                         "%d 1 %d" % (size["tags"], size["tags"]))
        # article_tags: 0-3 distinct tags per article, positions 0..k-1 in order.
        self.assertNone(url, "SELECT article_id FROM article_tags GROUP BY 1 HAVING count(*) > 3"
                             " OR min(position) <> 0 OR max(position) <> count(*) - 1"
                             " OR count(DISTINCT position) <> count(*)", "article_tags positions")

    def check_board_times(self, url):
        """The rows' times."""
        # Times: two years before 2026-01-01, updated >= created, comments and favorites after
        # their article, comment ids in time order.
        window = "NOT (%s >= '2024-01-01Z' AND %s <= '2026-01-01Z')"
        for table, cols in (("articles", ("created_at", "updated_at")), ("comments", ("created_at",)),
                            ("favorites", ("created_at",)), ("follows", ("created_at",))):
            for col in cols:
                self.assertNone(url, "SELECT %s FROM %s WHERE %s LIMIT 5" % (col, table, window % (col, col)),
                                "%s.%s outside the window" % (table, col))
        self.assertNone(url, "SELECT id FROM articles WHERE updated_at < created_at", "updated before created")
        # Users register on the day before that window, in id order; stores open on its first
        # day, after their owner registered.
        self.assertNone(url, "SELECT id FROM users WHERE NOT (created_at >= '2024-01-01Z' AND created_at < "
                             "'2024-01-02Z') OR updated_at <> created_at LIMIT 5", "users outside 2024-01-01")
        self.assertNone(url, "SELECT id FROM stores WHERE NOT (created_at >= '2024-01-02Z' AND created_at < "
                             "'2024-01-03Z') OR updated_at <> created_at LIMIT 5", "stores outside 2024-01-02")
        self.assertNone(url, "SELECT id FROM (SELECT id, created_at, lag(created_at) OVER (ORDER BY id) p"
                             " FROM users) s WHERE created_at <= p LIMIT 5", "user ids out of time order")
        self.assertNone(url, "SELECT s.id FROM stores s JOIN users u ON u.id = s.owner_id"
                             " WHERE s.created_at <= u.created_at LIMIT 5", "store before its owner")
        self.assertNone(url, "SELECT a.id FROM articles a JOIN users u ON u.id = a.author_id"
                             " WHERE a.created_at <= u.created_at LIMIT 5", "article before its author")
        self.assertNone(url, "SELECT c.id FROM comments c JOIN articles a ON a.id = c.article_id"
                             " WHERE c.created_at <= a.created_at LIMIT 5", "comment before its article")
        self.assertNone(url, "SELECT f.user_id FROM favorites f JOIN articles a ON a.id = f.article_id"
                             " WHERE f.created_at <= a.created_at LIMIT 5", "favorite before its article")
        self.assertNone(url, "SELECT id FROM (SELECT id, created_at, lag(created_at) OVER (ORDER BY id) p"
                             " FROM comments) s WHERE created_at < p LIMIT 5", "comment ids out of time order")
        self.assertNone(url, "SELECT id FROM (SELECT id, created_at, lag(created_at) OVER (ORDER BY id) p"
                             " FROM articles) s WHERE created_at <= p LIMIT 5", "article ids out of time order")

    def check_board_slugs(self, url, size):
        """The articles' slugs and the fields that must not be empty."""
        # Slugs: unique, and exactly the rule of docs/board-api.md.
        slugs = rows(url, "SELECT id, title, slug FROM articles ORDER BY id")
        self.assertEqual(len(slugs), size["articles"])
        self.assertEqual(len({s for _, _, s in slugs}), len(slugs))
        for aid, title, slug in slugs:
            self.assertEqual(slug, slugify(title, int(aid)))
        self.assertNone(url, "SELECT id FROM articles WHERE title = '' OR description = '' OR body = ''"
                             " OR author_id IS NULL", "empty article fields")
        self.assertNone(url, "SELECT id FROM comments WHERE body = '' OR updated_at <> created_at",
                        "comment fields")

    def test_tiny_counts_and_invariants(self):
        url = self.migrated()
        out, err = self.ok("seed", "--db-url", url, "--size", "tiny", "--bcrypt-cost", "4")
        for table, n in TINY.items():
            self.assertEqual(count(url, table), n, table)
            self.assertRegex(err, r"(?m)^%s: %d rows \(\d+\.\d s\)$" % (table, n))
        for table in DERIVED:  # counts the seed chose, stated in the progress output
            n = count(url, table)
            self.assertGreater(n, 0, table)
            self.assertRegex(err, r"(?m)^%s: %d rows \(\d+\.\d s\)$" % (table, n))
        self.assertLessEqual(count(url, "article_tags"), 3 * TINY["articles"])
        self.assertIn("seeded size tiny", out)
        self.check_board(url, TINY)
        # Sequences past the fixture ids.
        self.assertEqual(scalar(url, "SELECT nextval('articles_id_seq')"), "51")
        self.assertEqual(scalar(url, "SELECT nextval('comments_id_seq')"), "51")
        self.assertEqual(scalar(url, "SELECT nextval('tags_id_seq')"), "11")
        self.assertEqual(scalar(url, "SELECT reltuples FROM pg_class WHERE relname = 'favorites'"), "200")

    def test_small_counts_invariants_and_skew(self):
        url = self.migrated()
        start = time.monotonic()
        out, err = self.ok("seed", "--db-url", url, "--size", "small", "--bcrypt-cost", "4", timeout=300)
        elapsed = time.monotonic() - start  # reported, not asserted: the machine may be busy
        small = {"users": 1000, "articles": 10000, "favorites": 50000, "comments": 20000, "tags": 100}
        for table, n in small.items():
            self.assertEqual(count(url, table), n, table)
        self.check_board(url, small)
        # Popular articles and quiet ones: not every article alike.
        self.assertGreater(int(scalar(url, "SELECT max(favorites_count) FROM articles")), 50)
        self.assertGreater(int(scalar(url, "SELECT count(*) FROM articles WHERE favorites_count = 0")), 0)
        self.assertGreater(int(scalar(url, "SELECT count(*) FROM articles a WHERE NOT EXISTS"
                                           " (SELECT 1 FROM comments c WHERE c.article_id = a.id)")), 1000)
        self.assertGreater(int(scalar(url, "SELECT max(n) FROM (SELECT count(*) n FROM comments"
                                           " GROUP BY article_id) s")), 20)
        self.assertGreater(int(scalar(url, "SELECT count(DISTINCT author_id) FROM articles")), 500)
        self.assertGreater(int(scalar(url, "SELECT count(DISTINCT tag_id) FROM article_tags")), 50)
        sys.stderr.write("[small seeded in %.1f s] " % elapsed)


if __name__ == "__main__":
    unittest.main()
