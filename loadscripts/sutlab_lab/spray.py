"""spray: an open-model load, reported as vegeta reports it. vegeta (`attack -rate=100
-duration=30s`, the spray write-up's tool) is not in Debian; httperf is, and sends at a fixed
rate whether or not earlier requests were answered, which is what makes the model open.

What httperf lacks is made up here:
- it is select()-based, so one process holds at most FD_SETSIZE (1024) connections; a rate that
  needs more in flight (rate x timeout) is shared by as many processes as it takes, each sending
  rate/N (httperf --client I/N), and their reports are added up;
- latencies: httperf prints no percentiles, but -v -v prints a lifetime histogram in 1 ms bins
  of the connections that got a reply; a timed-out request counts at the timeout, as vegeta
  records it; refused and reset ones are left out (httperf does not say when they failed);
- status codes: its report has classes only (5xx); every reply's status line
  (--print-reply=header) gives the codes, so a proxy's 502 is told from its 504.
httperf counts a connection closed without a reply (vegeta's "EOF") as connreset: the two are
one kind here, "reset/EOF".

httperf dials IPv4 alone (it refuses `--server ::1`): an IPv6 address or a host name goes to
spray's own attacker (attacker.py, asyncio), which dials as vegeta does and tells apart what
httperf cannot: a connect timeout from a reply timeout, EOF from reset, and the address each
failure happened on. Its report has the same shape, so everything below reads both.
"""

import contextlib
import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

from . import attacker as attacker_cmd, httperf, progress, stats
from .services import procs
from .errors import RunError

FD_BUDGET = 900  # connections one httperf process may hold: FD_SETSIZE, less its own descriptors
# vegeta's errors as each attacker names them: its "connection refused"; its "i/o timeout" at connect
# (httperf's timeout does not tell a connect from a reply); its "EOF" and "connection reset by peer"
VEGETA_KINDS = {"refused": ("refused",), "timeout": ("connect-timeout", "timeout"),
                "reset/EOF": ("reset", "EOF", "reset/EOF")}
ERROR_NAMES = {"connrefused": "refused", "client-timo": "timeout", "connreset": "reset/EOF",
               "fd-unavail": "unsent", "addrunavail": "unsent", "ftab-full": "unsent", "socket-timo": "timeout",
               "other": "other"}


def processes_for(rate, timeout):
    """How many httperf processes hold `rate` arrivals a second that may each stay `timeout` s."""
    return max(1, int(math.ceil(rate * timeout / float(FD_BUDGET))))


def commands(host, port, uri, rate, duration, timeout):
    """The httperf commands that share the attack: rate x duration requests in all, split so
    that the shares add up to it exactly."""
    n = processes_for(rate, timeout)
    total = max(1, int(round(rate * duration)))
    return [httperf.command(host, port, uri, rate / float(n), duration, timeout, detail=True, client=(i, n),
                            num=total // n + (1 if i < total % n else 0))
            for i in range(n)]


def target(url):
    """(host, port) of a plain http://HOST[:PORT] or http://[IPv6]:PORT URL (the host without its
    brackets); ValueError for anything else."""
    m = re.match(r"^http://(?:\[([0-9A-Fa-f:.]+)\]|([^:/\[\]]+))(?::(\d+))?/?$", url or "")
    if m is None:
        raise ValueError("wants http://HOST[:PORT] or http://[IPv6]:PORT (plain HTTP), got %r" % url)
    return m.group(1) or m.group(2), int(m.group(3) or 80)


def ipv6_loopback():
    """True if this machine has ::1 to listen on (a kernel booted without IPv6 has none)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def attacker_for(host):
    """Which attacker spray sends with: httperf for an IPv4 address, which it reaches and at rates
    far past the attacker's; the attacker (attacker.py) for an IPv6 address or a name, which
    httperf cannot dial (it refuses `--server ::1`) or would dial as IPv4 alone."""
    try:
        socket.inet_pton(socket.AF_INET, host)
        return "httperf"
    except OSError:
        return "asyncio"


def run(host, port, uri, rate, duration, timeout, log=None, show_progress=False, on_start=None,
        attacker="httperf", given=None):
    """The attack, by httperf's processes or by the attacker (attacker_for), started and waited
    for; its merged report. `log`, a file, gets each process's command and output; show_progress:
    a progress line (progress.py) with the replies so far, for a caller that shows none of its
    own; on_start(pids): called once the processes run (a caller that samples them as the load
    tier); given: the attacker's addresses for a name (attacker.addresses). RunError if one
    fails to report."""
    if attacker == "httperf":
        argvs, parse = commands(host, port, uri, rate, duration, timeout), httperf.parse
        sample = progress.replies_in
    else:
        argvs = [attacker_cmd.command(sys.executable, host, port, uri, rate, duration, timeout, given)]
        parse, sample = parse_attacker, progress.attacker_progress
    started = time.monotonic()
    reports = _processes(argvs, parse, log, on_start, duration + timeout, sample if show_progress else None,
                         "spray: %g req/s" % rate)
    merged = merge(reports)
    merged["wall_s"] = time.monotonic() - started
    return merged


def _processes(argvs, parse, log, on_start, seconds, sample, label):
    """Every argv started together and waited for; parse(output) of each.

    Each process writes to a file of its own, not a pipe: a status line per reply fills a pipe
    in seconds, and an httperf blocked on a full pipe stops sending, which would close the
    open model."""
    outputs = [tempfile.TemporaryFile(mode="w+") for _ in argvs]
    running = []
    try:
        running += [subprocess.Popen(a, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    preexec_fn=procs.die_with_parent) for a, out in zip(argvs, outputs)]
        if on_start is not None:
            on_start([proc.pid for proc in running])
        # progress from what the processes have written so far (their files, by descriptor)
        files = ["/proc/self/fd/%d" % out.fileno() for out in outputs]
        ticker = progress.Ticker(label, seconds, sample=sample(files)) if sample else contextlib.nullcontext()
        with ticker:
            for proc in running:
                proc.wait(timeout=seconds + 60)
        reports = []
        for argv, proc, out in zip(argvs, running, outputs):
            out.seek(0)
            text = out.read()
            if log is not None:
                log.write("$ %s\n%s\n" % (" ".join(argv), text))
            try:
                reports.append(parse(text))
            except ValueError as e:
                name = os.path.basename(argv[1] if argv[0] == sys.executable else argv[0])
                raise RunError("%s exited with status %s: %s" % (name, proc.returncode, e))
        return reports
    finally:
        for proc in running:  # on a timeout or Ctrl-C, none outlives the call
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for out in outputs:
            out.close()


def parse_attacker(text):
    """The attacker's report (its last line, JSON) with its keys as numbers again. ValueError if
    there is none (its error message then is the text)."""
    line = next((ln for ln in reversed(text.splitlines()) if ln.startswith("{")), None)
    if line is None:
        raise ValueError(text.strip()[-300:] or "no report")
    r = json.loads(line)
    r["codes"] = {int(c): n for c, n in r["codes"].items()}
    r["lifetimes_ms"] = {float(ms): n for ms, n in r["lifetimes_ms"].items()}
    return r


def merge(reports):
    """One report from several processes' (httperf.parse, or the attacker's one): counts added,
    histograms and codes added, the test duration the longest; the attacker's own fields (its
    late arrivals, error set, addresses, complete latencies) carried over."""
    out = {"connections": 0, "requests": 0, "replies": 0, "status": {}, "errors": {}, "codes": {},
           "lifetimes_ms": {}, "error_set": {}, "late": 0, "duration_s": 0.0, "processes": len(reports)}
    for r in reports:
        for k in ("connections", "requests", "replies", "late"):
            out[k] += r.get(k, 0)
        for k in ("status", "errors", "codes", "lifetimes_ms", "error_set"):
            for key, n in r.get(k, {}).items():
                out[k][key] = out[k].get(key, 0) + n
        out["duration_s"] = max(out["duration_s"], r["duration_s"])
        for k in ("latencies_complete", "addresses"):
            if k in r:
                out[k] = r[k]
    return out


def figures(s):
    """What --fail-if reads of a summary: req/s of replies of any status (as steps counts them),
    latencies, success, and errors: the requests without a 2xx/3xx."""
    replies = sum(n for c, n in s["codes"].items() if c != 0)
    return {"rps": replies / s["duration_s"] if s["duration_s"] else 0.0, "p50": s["p50"], "p95": s["p95"],
            "p99": s["p99"], "mean": s["mean"], "success": s["success"],
            "errors": 1.0 - s["success"] if s["requests"] else None}


def summary(report, rate, duration, timeout):
    """vegeta's report of a merged report (httperf's or the attacker's): requests, rate, throughput, success ratio,
    latencies (ms) mean/p50/p95/p99/max, status codes (0 = no reply) and errors by kind."""
    sent = report["connections"]
    errors = {}
    for name, n in report["errors"].items():
        if n:
            kind = ERROR_NAMES.get(name, name)
            errors[kind] = errors.get(kind, 0) + n
    codes = dict(report["codes"])
    if not codes:  # no status lines: the classes (a 5xx stays a class)
        codes = {cls: n for cls, n in report["status"].items() if n}
    answered = sum(codes.values())
    if sent - answered > 0:
        codes[0] = sent - answered
    ok = sum(n for c, n in codes.items() if isinstance(c, int) and 200 <= c < 400) + \
        sum(n for c, n in codes.items() if c in ("2xx", "3xx"))
    lat = dict(report["lifetimes_ms"])
    timeouts = 0 if report.get("latencies_complete") else errors.get("timeout", 0)
    if timeouts:
        lat[timeout * 1000.0] = lat.get(timeout * 1000.0, 0) + timeouts
    n_lat = sum(lat.values())
    return {
        "requests": sent,
        "rate": sent / float(duration) if duration else None,
        "asked_rate": rate,
        "throughput": ok / report["duration_s"] if report["duration_s"] else 0.0,
        "success": ok / float(sent) if sent else 0.0,
        "mean": sum(v * n for v, n in lat.items()) / n_lat if n_lat else None,
        "p50": stats.counts_percentile(lat, 50),
        "p95": stats.counts_percentile(lat, 95),
        "p99": stats.counts_percentile(lat, 99),
        "max": max(lat) if lat else None,
        "codes": codes,
        "errors": errors,
        "unsent": errors.get("unsent", 0) + report.get("late", 0),
        "error_set": report.get("error_set", {}),
        "addresses": report.get("addresses"),
        "duration_s": report["duration_s"],
        "processes": report.get("processes", 1),
    }


def _seconds(ms):
    if ms is None:
        return "-"
    return "%.3fs" % (ms / 1000.0) if ms >= 1000 else "%.3fms" % ms


def text(s, duration):
    """The summary as vegeta's `report` prints it."""
    codes = "  ".join("%s:%d" % (c, n) for c, n in sorted(s["codes"].items(), key=lambda kv: str(kv[0])))
    lines = [
        "Requests      [total, rate, throughput]  %d, %.2f, %.2f" % (s["requests"], s["rate"] or 0, s["throughput"]),
        "Duration      [attack, wait]             %ds, %.1fs" % (duration, max(0.0, s["duration_s"] - duration)),
        "Latencies     [mean, 50, 95, 99, max]    %s" % ", ".join(_seconds(s[k]) for k in
                                                                   ("mean", "p50", "p95", "p99", "max")),
        "Success       [ratio]                    %.2f%%" % (100.0 * s["success"]),
        "Status Codes  [code:count]               %s" % codes,
        "Error Set:",
    ]
    lines += ["  %s: %d" % (k, n) for k, n in sorted((s.get("error_set") or s["errors"]).items())] or ["  (none)"]
    if s.get("addresses"):
        lines.append("(spray's attacker, dialling %s in this order; %d arrivals sent late)"
                     % (", ".join(s["addresses"]), s["unsent"]))
    elif s["processes"] > 1:
        lines.append("(%d httperf processes, %.4g req/s each: one holds at most %d connections)"
                     % (s["processes"], s["asked_rate"] / s["processes"], FD_BUDGET))
    return "\n".join(lines)


def json_line(s):
    return json.dumps(dict(s, codes={str(k): v for k, v in s["codes"].items()}), sort_keys=True)


# -- the kernel's answer to a full accept queue ---------------------------------------------------

ABORT_SYSCTL = "net.ipv4.tcp_abort_on_overflow"


class AbortOnOverflow:
    """net.ipv4.tcp_abort_on_overflow=1 for the run, in the network namespace `netns` (None: this
    one), and its old value back afterwards. With the default 0 the kernel drops the handshake's
    last ACK when the accept queue is full and the client retries until it times out; with 1 it
    answers RST, which is the write-up's "connection reset by peer". The setting is per network
    namespace: in the netns lab it touches the web namespace only."""

    def __init__(self, netns=None):
        self.prefix = ["ip", "netns", "exec", netns] if netns else []
        self.old = None

    def _sysctl(self, *args):
        proc = subprocess.run(self.prefix + ["sysctl", "-n"] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=10)
        if proc.returncode != 0:
            why = "root is needed" if os.geteuid() != 0 else "sysctl failed"
            raise RunError("cannot set %s (%s): %s" % (ABORT_SYSCTL, why, proc.stdout.strip()))
        return proc.stdout.strip()

    def __enter__(self):
        self.old = self._sysctl(ABORT_SYSCTL)
        self._sysctl("-w", "%s=1" % ABORT_SYSCTL)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            self._sysctl("-w", "%s=%s" % (ABORT_SYSCTL, self.old))
        return False

