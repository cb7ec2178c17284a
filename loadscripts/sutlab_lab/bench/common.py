"""What bench's suites share: the run's context, sutlab servers, the load generators pinned to
the load CPU (wrk, pgbench, redis-benchmark) with their own CPU time per request, the CPU meter
around a run, and the report's common lines."""

import glob
import os
import platform
import re
import subprocess
import sys

from .. import LOADSCRIPTS, REPO, loadargv, parsers, tiers
from ..services import procs
from ..errors import RunError
from ..services.server import ServerProcess
from ..tools import run_tool

BENCH_D = os.path.join(LOADSCRIPTS, "bench.d")
WRK_SCRIPT = os.path.join(BENCH_D, "random_path.lua")
WRK_LINE_SCRIPT = os.path.join(BENCH_D, "random_line.lua")
PGBENCH_SCRIPT = os.path.join(BENCH_D, "stores_by_category.sql")
BOARD_ARTICLE_SCRIPT = os.path.join(BENCH_D, "board_article.sql")
BOARD_PAGE_SCRIPT = os.path.join(BENCH_D, "board_page.sql")
NGINX = "/usr/sbin/nginx"
PG_BIN, PGBENCH = loadargv.PG_BIN, loadargv.PGBENCH
PSQL = os.path.join(PG_BIN, "psql")
DB_SUITES = ("delivery", "dbmode", "board", "cost")  # run beside a private PostgreSQL and Redis

NOISE_NOTE = ("note: this machine is noisy and drifts by tens of percent between runs; trust the "
              "ratios of one alternating run more than absolute numbers, and rerun before concluding.")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Context:
    """One bench run: its arguments, the sutlab binary, the docroot, the temp dir (server logs,
    pgbench logs), the environment line of the reports, the services (None without a database
    suite) and the ports already handed out."""

    def __init__(self, args, sutlab_bin, docroot, tmpdir, env_line, svc):
        self.args, self.sutlab_bin, self.docroot = args, sutlab_bin, docroot
        self.tmpdir, self.env_line, self.svc = tmpdir, env_line, svc
        self.taken = set()

    def port(self):
        return procs.free_port(self.taken)


def sutlab_server(ctx, name, port, flags, ready_path="/health_check"):
    """`sutlab serve --listen 127.0.0.1:PORT FLAGS --sutlab-arg...` on the server CPU, without the
    caller's SUTLAB_* variables. /readyz answers per worker: it is asked until 6 answers in a row
    are 200."""
    argv = ["taskset", "-c", str(ctx.args.server_cpu), ctx.sutlab_bin, "serve",
            "--listen", "127.0.0.1:%d" % port] + flags + ctx.args.sutlab_arg
    return ServerProcess(argv, port, os.path.join(ctx.tmpdir, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".out"),
                         name=name, env=procs.clean_env(), ready_path=ready_path,
                         ready_hits=6 if ready_path == "/readyz" else 1, die_with_parent=True)


def check_alive(servers, when):
    for s in servers:
        if not s.running():
            raise RunError("%s %s:\n%s" % (s.name, when, s.log_tail()))


# ---------------------------------------------------------------------------------------------
# Load generators, on the load CPU

def with_loadgen(res, tool):
    """res with `loadgen`: the load generator's own CPU microseconds per request."""
    res["loadgen"] = tool.cpu_s * 1e6 / res["requests"] if res["requests"] else None
    return res


def wrk_argv(args, port, path, seconds, script_args=None, script=WRK_SCRIPT, connections=None, timeout=None):
    """wrk on the load CPU: GET `path`, or the script's requests when script_args is given (then
    path is not used)."""
    scripted = script_args is not None
    url = "http://127.0.0.1:%d%s" % (port, "" if scripted else path)
    return loadargv.taskset(args.wrk_cpu, loadargv.wrk(
        url, connections or args.connections, seconds, args.threads, timeout, latency=True,
        script=script if scripted else None, script_args=script_args, equals=True))


def run_wrk(args, port, path, seconds, **kw):
    argv = wrk_argv(args, port, path, seconds, **kw)
    tool = run_tool(argv, seconds + 60 + (kw.get("timeout") or 0), "wrk")
    try:
        return with_loadgen(parsers.parse_wrk(tool.output), tool)
    except ValueError as e:
        raise RunError("cannot parse wrk output (%s): %s\n%s" % (e, " ".join(argv), tool.output))


def pgbench_argv(args, db_url, seconds, script, defines, log_prefix=None):
    """pgbench on a script of bench.d, -D NAME=VALUE for each (name, value) of defines."""
    return loadargv.taskset(args.wrk_cpu, loadargv.pgbench(db_url, seconds, args.pgbench_clients, args.threads,
                                                           args.seed, script, defines, log_prefix))


def run_pgbench(argv, seconds, log_prefix=None):
    """A pgbench run; with log_prefix (argv's -l), p50/p99 from its per-transaction log, which
    is removed."""
    tool = run_tool(argv, seconds + 60, "pgbench")
    try:
        res = parsers.parse_pgbench(tool.output)
    except ValueError as e:
        raise RunError("cannot parse pgbench output (%s): %s\n%s" % (e, " ".join(argv), tool.output))
    lines = []
    for path in glob.glob(log_prefix + ".*") if log_prefix else ():
        with open(path) as f:
            lines += f.readlines()
        os.unlink(path)
    parsers.with_log_percentiles(res, parsers.pgbench_latencies(lines)[0])
    return with_loadgen(res, tool)


def redis_bench_argv(args, port, n, command):
    return loadargv.taskset(args.wrk_cpu, loadargv.redis_benchmark(port, args.connections, n, command,
                                                                   args.threads))


def run_redis_benchmark(args, port, n, command, expect_seconds):
    argv = redis_bench_argv(args, port, n, command)
    tool = run_tool(argv, int(expect_seconds * 4) + 60, "redis-benchmark")
    try:
        res = parsers.parse_redis_benchmark(tool.output)
    except ValueError as e:
        raise RunError("cannot parse redis-benchmark output (%s): %s" % (e, " ".join(argv)))
    res["requests"] = n
    return with_loadgen(res, tool)


# ---------------------------------------------------------------------------------------------
# Measuring

class Meter:
    """The CPU of process trees ({label: root pid, or a ServerProcess, whose pid is read when the
    run starts}) around one run, read by the sampler that loadscripts/steps and flip use
    (tiers.Sampler), each label a tier of its own. timeline: the sampler's looks, each label
    renamed as `names` says ({label: tier}: the static suite's one label is each server's name),
    for report.html's CPU per tier over time (panels.py)."""

    def __init__(self, trees, names=None):
        self.trees, self.names = trees, names or {}

    def __enter__(self):
        roots = {k: [v.pid if isinstance(v, ServerProcess) else v] for k, v in self.trees.items()}
        self.sampler = tiers.Sampler(roots).start()
        return self

    def __exit__(self, *exc):
        self.usage, signals = self.sampler.stop()
        self.timeline = [(t, {self.names.get(k, k): v for k, v in cpu.items()}) for t, cpu in signals["timeline"]]
        return False

    def cpu_s(self):
        return sum(self.usage[k]["cpu_s"] for k in self.trees if k in self.usage)

    def per_request(self, requests):
        """{label: CPU microseconds per request}, None for each when no request completed (or the
        tree was not there to measure)."""
        return {k: self.usage[k]["cpu_s"] * 1e6 / requests if requests and k in self.usage else None
                for k in self.trees}


def metered(run, trees, servers=(), names=None):
    """run() (a load generator run, returning its result) with the CPU of `trees` read around it
    and added to the result as {label: us per request}, and its timeline as "cpu_timeline"
    (Meter); the servers must be alive before and after."""
    check_alive(servers, "is no longer running")
    with Meter(trees, names) as meter:
        r = run()
    check_alive(servers, "died during the run")
    r.update(meter.per_request(r["requests"]))
    r["cpu_timeline"] = meter.timeline
    return r


# ---------------------------------------------------------------------------------------------
# Report lines

def short_cmd(argv):
    """A command line for the report, with the repo-relative script paths."""
    out = []
    for a in argv:
        if a.startswith(REPO + "/"):
            a = os.path.relpath(a, REPO)
        if re.search(r"[\s?*'\"]", a):
            a = "'" + a.replace("'", "'\\''") + "'"
        out.append(a)
    return " ".join(out)


def first_line(argv):
    """The first line a tool prints about itself (its version), '?' when it cannot say."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = p.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip() if lines else "?"


def environment_line(sutlab_bin, args):
    with open("/proc/cpuinfo") as f:
        m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
    tools = [re.sub(r"\s*Copyright.*$", "", first_line(["wrk", "-v"]))] if set(args.suite) - {"cost"} else []
    if "static" in args.suite:
        tools.append(first_line([NGINX, "-v"]))
    if any(x in args.suite for x in DB_SUITES):
        tools.append(first_line([os.path.join(PG_BIN, "postgres"), "--version"]))
        tools.append(re.sub(r" sha=.*$", "", first_line(["redis-server", "--version"])))
    if "delivery" in args.suite or "board" in args.suite:
        tools.append(first_line([PGBENCH, "--version"]))
    if "cost" in args.suite:
        tools += [first_line(["valgrind", "--version"]), first_line(["strace", "-V"])]
    return ("env: nproc=%d (%s), kernel %s, %s, sutlab %s"
            % (os.cpu_count() or 0, m.group(1).strip() if m else "?", platform.release(), ", ".join(tools),
               first_line([sutlab_bin, "--version"])))


def print_head(title, ctx, load_before, load_after, skews=True):
    """A suite's first lines: its title, the environment, the load average around it."""
    print()
    print("== %s ==" % title)
    print(ctx.env_line)
    print("load average (1/5/15 min): %s before, %s after%s"
          % (load_before, load_after, " (other work on this machine skews the numbers)" if skews else ""))
