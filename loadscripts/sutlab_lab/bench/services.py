"""The private PostgreSQL 15 and Redis 7 of bench's database suites: the services layer starts them
(services/with-services: bench re-executes itself under it), Services migrates, seeds, queries,
pins and meters them."""

import os
import re
import subprocess
import sys
import time

from ..errors import RunError
from ..services import private, procs
from .common import PSQL, log

PYTHON = "/usr/bin/python3"
SERVICES_MARK = "SUTLAB_BENCH_SERVICES"  # set when bench runs under with-services


def in_services():
    return os.environ.get(SERVICES_MARK) == "1" and private.running()


def reexec_under_services(script, argv):
    """Runs `script argv` again under with-services; does not return."""
    log("bench: starting a private PostgreSQL 15 + Redis 7 (loadscripts/sutlab_lab/services/with-services); "
        "they are removed when bench exits")
    sys.stdout.flush()
    private.exec_under([PYTHON, script] + argv, {SERVICES_MARK: "1"})


class Services:
    """The private PostgreSQL and Redis of with-services, migrated and seeded."""

    def __init__(self, sutlab_bin, size):
        e = os.environ
        self.db_url = e["SUTLAB_TEST_DB_URL"]
        self.redis_url = e["SUTLAB_TEST_REDIS_URL"]
        self.redis_port = int(e["SUTLAB_TEST_REDIS_PORT"])
        self.pgdata = e["SUTLAB_TEST_PG_DATA"]
        self.sutlab_bin = sutlab_bin
        self.size = None  # what the database holds
        self.seed_seconds = {}  # size -> seconds its seeding took in this run
        self._sutlab_db(["migrate"])
        self.seed(size)
        self.pg_pid = procs.read_pidfile(os.path.join(self.pgdata, "postmaster.pid"))
        if self.pg_pid is None:
            raise RunError("cannot read PostgreSQL's postmaster.pid in %s" % self.pgdata)
        info = self.redis_cli("INFO", "server")
        m = re.search(r"^process_id:(\d+)", info, re.M)
        if not m:
            raise RunError("no process_id in Redis INFO:\n%s" % info)
        self.redis_pid = int(m.group(1))

    def _sutlab_db(self, cmd):
        argv = [self.sutlab_bin, "db"] + cmd + ["--db-url", self.db_url]
        log("bench: sutlab db %s" % " ".join(cmd))
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=procs.clean_env(), timeout=900)
        out = p.stdout.decode("utf-8", "replace").strip()
        if p.returncode != 0:
            raise RunError("sutlab db %s failed (status %d):\n  %s\n%s"
                             % (cmd[0], p.returncode, " ".join(argv), out))
        if out:
            log("  " + out.splitlines()[-1])

    def seed(self, size):
        """Seeds `size` (replacing what is there) unless the database already holds it."""
        if size == self.size:
            return
        t0 = time.monotonic()
        self._sutlab_db(["seed", "--size", size] + (["--force"] if self.size else []))
        self.seed_seconds[size] = time.monotonic() - t0
        self.size = size
        self._read_stores()

    def _read_stores(self):
        rows = self.sql("SELECT (SELECT count(*) FROM store_categories), "
                        "(SELECT min(id) FROM store_categories), (SELECT max(id) FROM store_categories), "
                        "(SELECT count(*) FROM stores), (SELECT min(id) FROM stores), "
                        "(SELECT max(id) FROM stores), "
                        "(SELECT count(*) FROM stores WHERE category_id = 1)").split("|")
        ncat, cmin, cmax, nstores, smin, smax, cat1 = (int(x or 0) for x in rows)
        if ncat == 0 or nstores == 0:
            raise RunError("the seeded database has no store categories or stores")
        if (cmin, cmax) != (1, ncat) or (smin, smax) != (1, nstores):
            raise RunError("expected dense ids 1..N: categories %d..%d (%d), stores %d..%d (%d)"
                             % (cmin, cmax, ncat, smin, smax, nstores))
        self.categories, self.stores, self.cat1_rows = ncat, nstores, cat1

    def sql(self, query, timeout=60):
        return self.psql(["-c", query], query, timeout)

    def psql(self, cmd_args, what, timeout=60, stdin_text=None):
        """psql -X -A -t -q -v ON_ERROR_STOP=1 CMD_ARGS URL; its stdout, stripped."""
        p = subprocess.run([PSQL, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"] + cmd_args
                           + [self.db_url],
                           input=stdin_text.encode() if stdin_text is not None else None,
                           stdin=subprocess.DEVNULL if stdin_text is None else None,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        if p.returncode != 0:
            raise RunError("psql failed: %s\n%s" % (what, p.stderr.decode("utf-8", "replace")))
        return p.stdout.decode("utf-8", "replace").strip()

    def redis_cli(self, *cmd):
        p = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(self.redis_port)] + list(cmd),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=30)
        if p.returncode != 0:
            raise RunError("redis-cli %s failed: %s" % (" ".join(cmd),
                                                          p.stderr.decode("utf-8", "replace")))
        return p.stdout.decode("utf-8", "replace")

    def unpin_pg(self):
        """PostgreSQL back on every CPU bench may use (for seeding: parallel index builds)."""
        allowed = os.sched_getaffinity(0)
        procs.pin_tree(self.pg_pid, allowed)
        return ",".join(map(str, sorted(allowed)))

    def pin_pg(self, cpu):
        n = procs.pin_tree(self.pg_pid, {cpu})
        cpus = procs.tree_cpus(self.pg_pid)
        if cpus != {str(cpu)}:
            raise RunError("PostgreSQL's processes are allowed on CPUs %s after pinning to %d"
                             % (sorted(cpus), cpu))
        return n

    def pin_redis(self, cpu):
        procs.pin_tree(self.redis_pid, {cpu})
        cpus = procs.tree_cpus(self.redis_pid)
        if cpus != {str(cpu)}:
            raise RunError("Redis's threads are allowed on CPUs %s after pinning to %d"
                             % (sorted(cpus), cpu))

    def pg_size(self):
        """How many processes PostgreSQL has now (the postmaster and every process under it)."""
        return len(procs.tree_pids(self.pg_pid))

    def settle(self, size):
        """After pgbench: wait (up to 3 s) for its backends to exit, i.e. for PostgreSQL's process
        tree to shrink back to `size`, so that the CPU reading after the run includes them (in the
        postmaster's cutime) rather than racing their exit."""
        procs.wait_tree_size(self.pg_pid, size, 3)

    def drain(self, what, timeout=60):
        """Waits until no client session of PostgreSQL is running a query (two looks 0.1 s apart);
        the seconds waited. wrk abandons its in-flight requests when its time is up, but sutlab has
        already sent their queries down its pipelined connections: at tens of milliseconds a page,
        PostgreSQL may need a second or more to work through them, which must not land in the next
        run."""
        t0 = time.monotonic()
        quiet = 0
        while time.monotonic() - t0 < timeout and quiet < 2:
            busy = int(self.sql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = "
                                "'client backend' AND state <> 'idle' AND pid <> pg_backend_pid()") or 0)
            quiet = quiet + 1 if busy == 0 else 0
            if quiet < 2:
                time.sleep(0.1)
        waited = time.monotonic() - t0
        if waited > 1:
            log("bench: board: waited %.1f s for PostgreSQL to finish the queries queued by %s" % (waited, what))
        return waited
