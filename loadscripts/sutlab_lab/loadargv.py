"""The command line of each load tool, built here for every caller: flip (flip/load.py), steps
(loads.Load) and bench (bench/common.py). A function per tool takes what a run is (the target,
the level, the seconds, the timeout, the script and its arguments) and returns the argv; taskset
puts one on given cores. Nothing here runs a tool.

The callers spell some options differently, and the logs and bench's report show the command
lines: wrk's short options glued to their value (-c64, flip and bench) or apart (-c 64, steps),
its --timeout as one word (--timeout=30s, bench) or two; Locust's tags and --csv where flip puts
them or where steps does. The spelling is the caller's choice; what the tool is told is the same.
"""

import os
import shlex

from . import LOADSCRIPTS
from .services import procs

LOCUST = "/usr/bin/locust"
SPRAY = os.path.join(LOADSCRIPTS, "spray")
PG_BIN = "/usr/lib/postgresql/15/bin"
PGBENCH = os.path.join(PG_BIN, "pgbench")
AB_MAX_RPS = 200000  # more than ab reaches on one core


def taskset(cpus, argv):
    """argv on the cores `cpus` (a list of CPU numbers, or taskset's own "0,1" or 1), or as it is
    when None or empty."""
    if cpus is None or cpus == "" or cpus == []:
        return list(argv)
    if isinstance(cpus, (list, tuple)):
        cpus = ",".join(str(c) for c in cpus)
    return ["taskset", "-c", str(cpus)] + list(argv)


def _opt(name, value, glued):
    return [name + value] if glued else [name, value]


def wrk(url, connections, seconds, threads=1, timeout=None, latency=False, script=None, script_args=None,
        glued=True, equals=False, options=()):
    """wrk on `url` (the whole URL: a script's requests take their paths from it, or from its
    arguments) with `connections` over `threads` for `seconds` (whole seconds); --timeout in
    seconds when given, --latency for the percentiles, -s script, and `-- script_args` when they
    are a list (an empty one still gives the --). glued: -c64 rather than -c 64 (and -d); equals:
    --timeout=10s rather than --timeout 10s. options (-H HEADER ...) stand just before the URL."""
    argv = ["wrk", "-t%d" % threads] + _opt("-c", str(connections), glued) + _opt("-d", "%ds" % seconds, glued)
    if timeout:
        argv += ["--timeout=%ds" % timeout] if equals else ["--timeout", "%ds" % timeout]
    if latency:
        argv.append("--latency")
    if script:
        argv += ["-s", script]
    argv += list(options) + [url]
    return argv if script_args is None else argv + ["--"] + [str(a) for a in script_args]


def ab(url, level, seconds, timeout):
    # -r: a reset or a timed-out receive is counted, not the end of the run
    # -t alone stops at 50,000 requests; ab keeps a record per request, so the cap is
    # sized to the run, not set huge (4 GB of records cost seconds to fault in)
    return ["ab", "-r", "-k", "-q", "-s", str(timeout), "-c", str(level), "-t", str(seconds),
            "-n", str(max(50000, seconds * AB_MAX_RPS)), url]


def hey(url, level, seconds, timeout, cpus=1):
    return ["hey", "-cpus", str(cpus), "-c", str(level), "-z", "%ds" % seconds, "-t", str(timeout), url]


def spray(base_url, path, rate, seconds, timeout, extra=()):
    """loadscripts/spray (httperf processes, open model) at `rate` arrivals a second, its summary
    as a JSON line."""
    return ["/usr/bin/python3", SPRAY, "--url", base_url, "--path", path, "--rate", str(rate),
            "--duration", str(seconds), "--timeout", str(timeout), "--json", "--no-report"] + list(extra)


def locust(locustfiles, host, users, seconds, csv, tags=(), extra=(), tags_first=False):
    """Headless Locust: `users` started at once (-r users), for `seconds`, its CSVs at PREFIX csv;
    failed requests are the run's errors, not a failed tool (--exit-code-on-error 0). tags_first:
    --tags after --host and --csv before --only-summary (flip's order), else both at the end
    (steps'); `extra` (the locustfile's options) last."""
    head = [LOCUST, "-f", ",".join(locustfiles), "--headless", "--host", host]
    ramp = ["-u", str(users), "-r", str(users), "-t", "%ds" % seconds]
    tail = ["--only-summary", "--exit-code-on-error", "0"]
    tagged = ["--tags"] + list(tags) if tags else []
    if tags_first:
        return head + tagged + ramp + ["--csv", csv] + tail + list(extra)
    return head + ramp + tail + ["--csv", csv] + tagged + list(extra)


def locust_ramp(locustfile, host, users, ramp, seconds, csv, tags=(), options=(), extra=()):
    """Headless Locust with sutlab's locustfile ramping `users` up over `ramp` seconds itself (its
    --ramp-up), for `seconds` in all, its CSVs at PREFIX csv; failed requests are the run's errors.
    tags (--tags ...), options and extra are the locustfile's, in that order around the run's own."""
    return [LOCUST, "-f", locustfile, "--headless", "--host", host] + list(tags) + \
        ["-u", str(users), "--ramp-up", str(ramp), "-t", "%ds" % seconds, "--only-summary",
         "--exit-code-on-error", "0"] + list(options) + ["--csv", csv] + list(extra)


def locust_soak(locustfiles, host, users, spawn_rate, seconds, csv, extra=()):
    """Headless Locust started `spawn_rate` users a second up to `users`, for `seconds`, its CSVs
    at PREFIX csv; `extra` (the locustfiles' options) before them; a failed request fails the run."""
    return [LOCUST, "-f", ",".join(locustfiles), "--headless", "--host", host, "-u", str(users),
            "-r", str(spawn_rate), "-t", "%ds" % seconds] + list(extra) + ["--csv", csv, "--only-summary"]


def locust_distributed(master, locustfiles, worker_args, workers):
    """A headless Locust argv (`master`, /usr/bin/locust first) as a master and `workers` workers
    on loopback, under one shell: the load tier's process tree (the sampler's, loadcap's) holds
    them all. When the master ends, the shell stops any worker still running (one that missed the
    master's quit message waits for its heartbeat a minute, holding the caller's pipe open) and
    exits with the master's status. worker_args (the sutlab options: --print-responses, ...) go to
    every worker: each reads its own; the master sends them the host, the tags and the users."""
    port = procs.free_port()
    master = master[:1] + ["--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port),
                           "--expect-workers", str(workers)] + master[1:]
    worker = [LOCUST, "-f", ",".join(locustfiles), "--worker", "--master-host", "127.0.0.1",
              "--master-port", str(port)] + list(worker_args)
    script = "".join("%s & w%d=$!; " % (shell(worker), i) for i in range(workers)) + shell(master) + \
        "; rc=$?; kill %s 2>/dev/null; wait; exit $rc" % " ".join("$w%d" % i for i in range(workers))
    return ["/bin/sh", "-c", script]


def shell(argv):
    return " ".join(shlex.quote(a) for a in argv)


def s_time(host_port, seconds, path, tls_version):
    """openssl s_time: new TLS connections one at a time for `seconds`, each GET `path`, the
    session offered back (-reuse); tls_version "1.3" -> -tls1_3."""
    return ["openssl", "s_time", "-connect", host_port, "-reuse", "-time", str(seconds), "-www", path,
            "-tls%s" % tls_version.replace(".", "_")]


def pgbench(db_url, seconds, clients, jobs, seed, script, defines=(), log_prefix=None):
    """pgbench on a script, prepared statements, no vacuum; -D NAME=VALUE for each (name, value)
    of defines; with log_prefix, its per-transaction log (-l)."""
    argv = [PGBENCH, "-n", "-M", "prepared", "-T", str(seconds), "-c", str(clients), "-j", str(jobs),
            "--random-seed=%d" % seed]
    for k, v in defines:
        argv += ["-D", "%s=%s" % (k, v)]
    argv += ["-f", script]
    if log_prefix:
        argv += ["-l", "--log-prefix", log_prefix]
    return argv + [db_url]


def redis_benchmark(port, connections, n, command, threads=1):
    """redis-benchmark on 127.0.0.1:port, `n` requests of `command`, CSV output; --threads above 1."""
    argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(connections), "-n", str(n), "--csv"]
    if threads > 1:
        argv += ["--threads", str(threads)]
    return argv + list(command)
