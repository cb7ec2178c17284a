#!/usr/bin/python3
"""Integration test: `loadscripts/bench --suite cost` for real (valgrind --tool=callgrind, strace)
on /health_check and the uncached store listing, with few requests.

Run under loadscripts/sutlab_lab/services/with-services: bench is told it already runs beside the services
(SUTLAB_BENCH_SERVICES=1) and works in a fresh database of its own (migrated and seeded --size
small by bench). Assertions are on bench's table: its shape, the objects adding up to the total,
what each kind must cost (libh2o and libc for any answer, libpq for the listing, the listing more
than /health_check, a read and a write per request), the raw dump it keeps agreeing with the
table, and a second run giving the same /health_check total within 1 %.
"""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from pgtest import FreshDatabase, server_url
from sutlab_testlib import source_root, sutlab_bin
from sutlab_lab import callgrind  # noqa: I100  (loadscripts/ is on PYTHONPATH: tests/meson.build)

BENCH = os.path.join(source_root(), "loadscripts", "bench")
N = 300
OBJECTS_ALWAYS = ("sutlab", "libh2o", "libpq", "hiredis", "libc")


def bench_cost(kinds, out_dir=None):
    """bench --suite cost in a fresh database: (exit status, stdout, stderr)."""
    db = FreshDatabase(prefix="sutlab_cost")
    url = db.create()
    try:
        env = dict(os.environ, SUTLAB_BENCH_SERVICES="1", SUTLAB_TEST_DB_URL=url, SUTLAB_BIN=sutlab_bin(),
                   PYTHONDONTWRITEBYTECODE="1")
        argv = ["/usr/bin/python3", BENCH, "--suite", "cost", "--cost-kinds", kinds, "--cost-requests", str(N)]
        if out_dir:
            argv += ["--cost-out", out_dir]
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120, env=env)
        return p.returncode, p.stdout, p.stderr
    finally:
        db.drop()


def table(out):
    """The cost table: (header cells, {kind: {column: cell}})."""
    lines = [ln for ln in out.splitlines() if ln.startswith("|")]
    assert len(lines) >= 3 and re.fullmatch(r"\|[-|]+\|", lines[1]), "no Markdown table in:\n" + out
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    header, rows = cells[0], cells[2:]
    for r in rows:
        assert len(r) == len(header), "row %r has %d cells, the header %d" % (r, len(r), len(header))
    return header, {r[0]: dict(zip(header, r)) for r in rows}


class CostSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        server_url()
        missing = [t for t in ("valgrind", "callgrind_control", "strace") if not shutil.which(t)]
        if missing:
            raise unittest.SkipTest("%s not installed (apt-get install valgrind strace; infra/lab test "
                                    "installs them)" % ", ".join(missing))
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-cost-")
        cls.rc, cls.out, cls.err = bench_cost("health_check,listing", cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.rc, 0, "bench exited %s\nstdout:\n%s\nstderr:\n%s" % (self.rc, self.out, self.err))
        self.header, self.rows = table(self.out)

    def objects(self):
        return self.header[self.header.index("Ir/req") + 1:self.header.index("syscalls/req")]

    def test_table_is_well_formed(self):
        self.assertEqual(self.header[:5], ["kind", "requests", "body B", "window s", "Ir/req"])
        self.assertEqual(self.header[-1], "syscalls/req")
        self.assertEqual(self.objects()[:len(OBJECTS_ALWAYS)], list(OBJECTS_ALWAYS))
        self.assertEqual(list(self.rows), ["health_check", "listing"])
        for kind, row in self.rows.items():
            self.assertEqual(row["requests"], str(N))
            for col in self.header[2:]:
                self.assertRegex(row[col], r"^\d+(\.\d+)?$", "%s %s" % (kind, col))
        self.assertEqual(self.rows["health_check"]["body B"], "2")  # "ok"
        self.assertIn("top 10 functions by self cost", self.out)

    def test_objects_add_up_to_the_total(self):
        cols = self.objects()
        for kind, row in self.rows.items():
            parts = sum(int(row[c]) for c in cols)
            # each cell rounded: off by at most half a unit each
            self.assertLessEqual(abs(parts - int(row["Ir/req"])), len(cols) / 2 + 0.5,
                                 "%s: %s add up to %d, total %s" % (kind, cols, parts, row["Ir/req"]))

    def test_what_each_kind_costs(self):
        h, ls = self.rows["health_check"], self.rows["listing"]
        self.assertGreater(int(h["libh2o"]), 0)
        self.assertGreater(int(h["libc"]), 0)
        self.assertGreater(int(ls["libpq"]), 0)
        self.assertGreater(int(ls["Ir/req"]), int(h["Ir/req"]))
        for kind, row in self.rows.items():
            # at least one read of the request and one write of the answer
            self.assertGreaterEqual(float(row["syscalls/req"]), 2.0, kind)

    def test_kept_dump_agrees_with_the_table(self):
        for kind, row in self.rows.items():
            p = callgrind.read(os.path.join(self.tmp, kind + ".callgrind.out"))
            self.assertEqual(p.totals, p.total)
            self.assertAlmostEqual(p.total / N, int(row["Ir/req"]), delta=0.5)
            self.assertTrue(os.path.getsize(os.path.join(self.tmp, kind + ".strace.txt")) > 0)

    def test_second_run_repeats(self):
        rc, out, err = bench_cost("health_check")
        self.assertEqual(rc, 0, "second bench run exited %s\n%s\n%s" % (rc, out, err))
        first, again = int(self.rows["health_check"]["Ir/req"]), int(table(out)[1]["health_check"]["Ir/req"])
        self.assertLess(abs(again - first) / first, 0.01, "health_check: %d then %d Ir/req" % (first, again))



class StaticOptions(unittest.TestCase):
    """bench's static suite option for a third contender: a path that is not an executable is
    refused before anything starts (exit 2, one line naming the option)."""

    def test_h2o_bin_must_be_an_executable(self):
        for bad in ("/nonexistent/h2o", os.path.join(source_root(), "README.md")):
            p = subprocess.run(["/usr/bin/python3", BENCH, "--suite", "static", "--h2o-bin", bad],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("--h2o-bin", p.stderr)
            self.assertIn("not an executable file", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
