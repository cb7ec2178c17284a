"""loadscripts/soak: a long mixed load against the lab's sutlab, watching its memory and descriptors.

    infra/lab up                      # (or infra/lab up --size small -- --redis-cache ...)
    loadscripts/soak                  # 30 minutes, 50 users: the blog scenario + store browsing
    loadscripts/soak --duration 5m --users 20

Runs Locust headless with loadscripts/locust/scenario.py (log in, browse, read, like, comment,
post, log out: bcrypt, writes, the article index) and loadscripts/locust/stores.py (category
list, cached store listing, store details) side by side, and every --interval seconds samples
the sutlab process: VmRSS, VmHWM, open file descriptors, threads (from /proc) and
http_connections_open plus the 5xx count (from /metrics). Writes to --out (default
var/soak/<date-time>/):

    samples.csv        t_s,rss_kb,hwm_kb,fds,threads,connections_open,requests_total,server_5xx
    locust_stats.csv   Locust's per-endpoint totals (and _history, _failures, locust.log)

and prints at the end: requests, failures and the error rate (Locust's and sutlab's 5xx), RSS and
fds min/max/first/last, and their growth between the end of the warm-up (first 10 % of the run)
and the end. Exit status 1 if any request failed or the process died. Not part of `infra/lab test`
(see docs/reliability.md).
"""

import argparse
import csv
import datetime
import os
import re
import signal
import subprocess
import sys
import time

import psutil

from ..cli import Parser
from .. import LOADSCRIPTS, REPO, loadargv, parsers
from ..services import metrics
from ..services import procs

SAMPLE_COLUMNS = ["t_s", "rss_kb", "hwm_kb", "fds", "threads", "connections_open", "requests_total",
                  "server_5xx"]


def parse_duration(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError("duration like 30m, 300s, 1h or 90")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def parse_args(argv):
    ap = Parser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    port = os.environ.get("SUTLAB_LAB_PORT", "8080")
    ap.add_argument("--url", default="http://127.0.0.1:%s" % port, help="sutlab (default %(default)s)")
    ap.add_argument("--pid", type=int, help="sutlab's pid (default: var/sutlab.pid of the lab)")
    ap.add_argument("--duration", type=parse_duration, default=parse_duration("30m"),
                    help="how long (30m, 300s, 1h; default 30m)")
    ap.add_argument("--users", type=int, default=50, help="Locust users, split over both scenarios (default 50)")
    ap.add_argument("--spawn-rate", type=float, default=10, help="users started per second (default 10)")
    ap.add_argument("--think-time", default="0.05-0.2", help="seconds between tasks of a user (default 0.05-0.2)")
    ap.add_argument("--fixture-users", type=int, default=10,
                    help="fixture users to log in as: 10 tiny, 1000 small ... (default 10)")
    ap.add_argument("--interval", type=float, default=10, help="seconds between samples (default 10)")
    ap.add_argument("--out", help="output directory (default var/soak/<date-time>)")
    return ap.parse_args(argv)


def proc_sample(pid):
    """(VmRSS kB, VmHWM kB, open fds, threads) of pid; OSError once it is gone. psutil has no
    peak RSS: VmHWM is read from /proc/PID/status."""
    try:
        p = psutil.Process(pid)
        with p.oneshot():
            rss, fds, threads = p.memory_info().rss // 1024, p.num_fds(), p.num_threads()
    except psutil.Error as e:
        raise OSError("process %d: %s" % (pid, e))
    with open("/proc/%d/status" % pid) as f:
        hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return rss, hwm, fds, threads


def metrics_sample(url):
    """(http_connections_open, requests, 5xx) from URL/metrics, or Nones when it does not answer."""
    try:
        m = metrics.scrape(url)
    except (OSError, metrics.MetricsFormatError):
        return None, None, None
    fivexx = sum(v for labels, v in m.samples("http_requests_total") if labels.get("code", "").startswith("5"))
    return (int(m.total("http_connections_open")), int(m.total("http_requests_total")), int(fivexx))


def start_locust(args, prefix):
    argv = loadargv.locust_soak(["%s/locust/scenario.py" % LOADSCRIPTS, "%s/locust/stores.py" % LOADSCRIPTS],
                                args.url, args.users, args.spawn_rate, int(args.duration), prefix,
                                ["--think-time", args.think_time, "--fixture-users", str(args.fixture_users)])
    log = open(prefix + ".log", "w")
    # a group of its own: SIGINT to the group makes Locust write its CSVs and exit
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True), log


def stop_locust(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def sample_until_done(args, pid, proc, out):
    """Samples every --interval s into samples.csv until Locust ends or sutlab dies. Returns
    ([row + [Locust still running]], whether sutlab died)."""
    samples, t0 = [], time.monotonic()
    with open(os.path.join(out, "samples.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SAMPLE_COLUMNS)
        while True:
            t = time.monotonic() - t0
            running = proc.poll() is None
            try:
                rss, hwm, fds, threads = proc_sample(pid)
            except OSError:
                print("soak: sutlab (pid %d) is gone at t=%.0f s" % (pid, t), flush=True)
                return samples, True
            conns, total, errors = metrics_sample(args.url)
            row = [round(t, 1), rss, hwm, fds, threads, conns, total, errors]
            samples.append(row + [running])
            w.writerow(row)
            f.flush()
            print("  t=%5.0fs rss=%7.1f MB fds=%5d threads=%3d conns=%s requests=%s 5xx=%s"
                  % (t, rss / 1024, fds, threads, conns, total, errors), flush=True)
            if not running:
                return samples, False
            time.sleep(max(0.0, args.interval - ((time.monotonic() - t0) % args.interval)))


def summary(out, prefix, samples):
    """Prints the summary; returns Locust's failures (None when it wrote no statistics)."""
    try:
        agg = parsers.locust_aggregate(prefix + "_stats.csv")
    except (OSError, ValueError):
        agg = None
    # the figures are those sampled under load (the last sample may come after Locust stopped)
    rows = [r for r in samples if r[8]] or samples
    print()
    print("soak summary (%s)" % out)
    if agg is not None:
        rate = 100.0 * agg["errors"] / agg["requests"] if agg["requests"] else 0.0
        print("  requests %d, failures %d, error rate %.4f %% (Locust)" % (agg["requests"], agg["errors"], rate))
    else:
        print("  no Locust statistics (see %s.log)" % prefix)
    if len(rows) >= 2:
        served = (samples[-1][6] or 0) - (samples[0][6] or 0)
        five = (samples[-1][7] or 0) - (samples[0][7] or 0)
        print("  sutlab served %d requests, %d of them 5xx" % (served, five))
        warm = rows[max(1, len(rows) // 10)] if len(rows) > 2 else rows[0]
        for name, i, scale, unit in (("RSS", 1, 1024.0, "MB"), ("fds", 3, 1, ""), ("threads", 4, 1, "")):
            vals = [r[i] / scale for r in rows]
            print("  %-7s min %.1f%s max %.1f%s first %.1f last %.1f; after warm-up (t=%.0f s) %.1f -> %.1f (%+.1f)"
                  % (name, min(vals), unit, max(vals), unit, vals[0], vals[-1], warm[0], warm[i] / scale,
                     vals[-1], vals[-1] - warm[i] / scale))
        print("  VmHWM (peak RSS) %.1f MB" % (rows[-1][2] / 1024.0))
    return agg["errors"] if agg is not None else None


def main(argv):
    args = parse_args(argv)
    var = os.environ.get("SUTLAB_LAB_VAR", os.path.join(REPO, "var"))
    pid = args.pid or procs.read_pidfile(os.path.join(var, "sutlab.pid"))
    if pid is None or not psutil.pid_exists(pid):
        sys.exit("soak: no sutlab process (start the lab with infra/lab up, or give --pid)")
    if metrics_sample(args.url)[1] is None:
        sys.exit("soak: %s/metrics does not answer" % args.url)
    out = args.out or os.path.join(REPO, "var", "soak", datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    prefix = os.path.join(out, "locust")
    print("soak: %s for %d s, %d users, sampling pid %d every %g s into %s"
          % (args.url, args.duration, args.users, pid, args.interval, out), flush=True)
    proc, log = start_locust(args, prefix)
    samples, died = [], False
    try:
        samples, died = sample_until_done(args, pid, proc, out)
    except KeyboardInterrupt:
        print("soak: interrupted", flush=True)
    finally:
        stop_locust(proc)
        log.close()
    failures = summary(out, prefix, samples)
    # Locust exits 1 when a request failed; failures already tells
    bad = died or failures is None or failures > 0 or proc.returncode not in (0, 1)
    sys.exit(1 if bad else 0)
