"""dbindex.dropped: off before the block, on after it, also when it raises (a fake runner)."""

import os
import unittest

from toolstest import ROOT  # noqa: F401  first: it puts loadscripts/ on the path
from sutlab_lab import dbindex  # noqa: I100


class Dropped(unittest.TestCase):
    def setUp(self):
        self.calls = []
        os.environ["SUTLAB_LAB_BIN"] = "/x/sutlab"
        os.environ["SUTLAB_LAB_DB_URL"] = "postgresql://h/db"

    def run_(self, argv, what):
        self.calls.append((argv, what))

    def test_off_then_on(self):
        with dbindex.dropped(self.run_, dbindex.USERS_BY_NAME):
            self.calls.append("inside")
        self.assertEqual(self.calls, [
            (["/x/sutlab", "db", "indexes", "off", "idx_users_username_lower", "--db-url", "postgresql://h/db"],
             "indexes off idx_users_username_lower"),
            "inside",
            (["/x/sutlab", "db", "indexes", "on", "idx_users_username_lower", "--db-url", "postgresql://h/db"],
             "indexes on idx_users_username_lower")])

    def test_restored_when_the_block_fails(self):
        with self.assertRaises(RuntimeError):
            with dbindex.dropped(self.run_, "idx_x"):
                raise RuntimeError("the run failed")
        self.assertEqual([c[0][3] for c in self.calls], ["off", "on"])

    def test_an_arm_drops_before_each_run_and_restores_after(self):
        arm = dbindex.arm("without", self.run_, "idx_x")
        self.assertEqual(arm.name, "without")
        arm.setup()
        arm.teardown()
        self.assertEqual(self.calls, [
            (["/x/sutlab", "db", "indexes", "off", "idx_x", "--db-url", "postgresql://h/db"], "indexes off idx_x"),
            (["/x/sutlab", "db", "indexes", "on", "idx_x", "--db-url", "postgresql://h/db"], "indexes on idx_x")])

    def test_only_off_or_on(self):
        self.assertRaises(ValueError, dbindex.command, "drop", "idx_x")

    def test_the_migration_names_it(self):
        with open(os.path.join(ROOT, "db", "migrations", "004_users_username_lower.sql")) as f:
            self.assertIn("CREATE INDEX %s ON users (lower(username))" % dbindex.USERS_BY_NAME, f.read())


if __name__ == "__main__":
    unittest.main()
