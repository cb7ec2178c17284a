"""A stepped run: one load tool held at each level in turn, each step measured by the tool itself
and by the per-tier sampler, read by the verdict rules (loadscripts/steps is its command line).

Each level: a warm-up (a run of its own, or, for Locust, whose start is slow, the first seconds of
the measured run, left out of its figures), then the measured seconds with the sampler on. A
tool that fails marks its row failed and the run goes on; the caller exits 1 if any row failed.
"""

import contextlib
import csv
import os
import signal
import subprocess
import threading
import time

from . import cpubudget, report, tiers, verdict
from .services import metrics
from .services import procs
from . import progress as ticking

CSV_COLUMNS = ("level", "rps", "success", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "errors", "verdict", "reason")
OPEN_SHORTFALL = 0.05  # an open-model tool that started fewer arrivals than asked by this much is saturated
# A scale model's budget of the load tool (cases/scale.py, when the write-up's load generator is one of
# its machines): the cgroup.procs file every load tool of a step joins before it execs, or None.
LOAD_GROUP = None


def _start_tool():
    """preexec_fn of a step's load tool: dies with the thread that started it; joins LOAD_GROUP."""
    procs.die_with_parent()
    if LOAD_GROUP:
        cpubudget.join(LOAD_GROUP)


class Step:
    """A running load tool: its process, with the sampler around the measured seconds."""

    def __init__(self, argv, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        # a process group of its own: a distributed Locust's workers end with the step
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=_start_tool, start_new_session=True)

    def wait(self, timeout):
        """(exit status, output); status None when the tool outlived `timeout` seconds and was
        killed (ab opening 20,000 sockets on a busy machine took over a minute)."""
        timed_out = False
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # what the tool left behind
            except OSError:
                pass
            self.log.close()
        with open(self.log_path, errors="replace") as f:
            return None if timed_out else self.proc.returncode, f.read()


def web_scraper(url):
    """A callable giving the web tier's open connections and worst event-loop lag from /metrics."""
    def scrape():
        try:
            # read every few tenths of a second: the format check (the server tests' job) would
            # cost as much again
            m = metrics.scrape(url, timeout=2, check=False)
        except (OSError, ValueError, metrics.MetricsFormatError):
            return None  # a scrape that fails leaves the signal unknown for that sample
        lags = [v for _, v in m.samples("event_loop_lag_seconds")]
        conns = [v for _, v in m.samples("http_connections_open")]
        return {"connections": sum(conns) if conns else None, "loop_lag_s": max(lags) if lags else None}
    return scrape


def link(lab_var):
    """(interface, capacity in bytes/s or None) of the link the load crosses: the netns lab's
    client veth (`to-web`, seen where steps runs in the client namespace) with the rate its
    `--rate` set, else loopback, uncapped."""
    if not os.path.exists("/sys/class/net/to-web"):
        return "lo", None
    try:
        with open(os.path.join(lab_var, "netns", "netns.conf")) as f:
            conf = dict(ln.strip().split("=", 1) for ln in f if "=" in ln)
    except OSError:
        return "to-web", None
    return "to-web", rate_bytes(conf.get("RATE", "").strip())


def rate_bytes(rate):
    """Bytes a second of a tc rate like 10mbit, or None."""
    for unit, mult in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)):
        if rate.endswith(unit) and rate[:-len(unit)].isdigit():
            return int(rate[:-len(unit)]) * mult / 8
    return None


def link_bytes(iface):
    """(rx, tx) bytes of iface so far, or None."""
    try:
        with open("/sys/class/net/%s/statistics/rx_bytes" % iface) as rx, \
                open("/sys/class/net/%s/statistics/tx_bytes" % iface) as tx:
            return int(rx.read()), int(tx.read())
    except (OSError, ValueError):
        return None


def run_level(load, level, roots, duration, warmup, out_dir, scrape, ticker=None, net=("lo", None), window=None):
    """One row: the tool at `level` for `warmup` + `duration` seconds; ticker(seconds): a context
    that shows the progress of the measured seconds (progress.Ticker), or None; window(): a
    scrape of the server taken as the measured seconds start and as they end, kept in the row's
    "window" (steps' per-route table), or None."""
    tag = "level-%s" % level
    inline_warmup = load.tool == "locust"
    if warmup > 0 and not inline_warmup:
        Step(load.command(level, warmup, tag + "-warmup"), os.path.join(out_dir, tag + "-warmup.log")) \
            .wait(warmup + load.timeout + 30)
    seconds = duration + (warmup if inline_warmup else 0)
    step = Step(load.command(level, seconds, tag), os.path.join(out_dir, tag + ".log"))
    if inline_warmup:
        time.sleep(warmup)
    # the first scrape runs beside the measured seconds, not before them: a server that holds a
    # request for seconds (sync workers as slow as PHP) answers it late, and waiting for it here
    # let a load of fixed length end before the sampler started (every tier read 0 %)
    first = {}
    opening = threading.Thread(target=lambda: first.update(m=window()), daemon=True) if window else None
    if opening:
        opening.start()
    sampler = tiers.Sampler(dict(roots, load=[step.proc.pid]), scrape=scrape, load_rusage=True).start()
    bytes0, t0 = link_bytes(net[0]), time.monotonic()
    # the measured seconds only: a tool's shut-down (Locust's writes its reports for a second or
    # more) and an open model's drain are not the load
    with ticker(duration) if ticker else contextlib.nullcontext():
        try:
            step.proc.wait(timeout=duration)
        except subprocess.TimeoutExpired:
            pass
    usage, signals = sampler.stop()
    bytes1, t1 = link_bytes(net[0]), time.monotonic()
    last = window() if window else None
    if opening:
        opening.join()
    limit = seconds + load.timeout + 60
    code, output = step.wait(limit)
    row = {"level": level, "tiers": usage, "net_iface": net[0], "net_capacity_Bps": net[1],
           "window": (first.get("m"), last)}
    if bytes0 is not None and bytes1 is not None and t1 > t0:
        # loopback counts each packet once each way: rx is what the load's side received
        row["net_rx_Bps"], row["net_tx_Bps"] = (bytes1[0] - bytes0[0]) / (t1 - t0), (bytes1[1] - bytes0[1]) / (t1 - t0)
    row.update(signals)
    if code is None:
        row.update(failed=True, error="%s did not finish within %d s: killed (%s)" % (load.tool, limit, step.log_path))
        return row
    if code != 0:
        row.update(failed=True, error="%s exited with status %s (%s)" % (load.tool, code, step.log_path))
        return row
    try:
        row.update(load.result(output, tag, level, skip_s=warmup if inline_warmup else 0))
    except ValueError as e:
        row.update(failed=True, error=str(e))
        return row
    if "shortfall" in row:
        # httperf polls its timers and shows busy whatever the rate: what says it is saturated
        # is the arrivals it could not start
        row["tiers"]["load"]["busy"] = 1.0 if row["shortfall"] >= OPEN_SHORTFALL else 0.0
    return row


def run(load, levels, roots, duration, warmup, out_dir, scrape=None, progress=print, sample=None, net=("lo", None),
        window=None):
    """The rows of every level; sample: what the progress line reads during a step (progress.py:
    the server's req/s), or None for no progress line; window: see run_level."""
    rows = []
    for i, level in enumerate(levels):
        label = "step %d/%d: %s at %s" % (i + 1, len(levels), load.tool, level)
        progress("%s for %d s (+%d s warm-up)" % (label, duration, warmup))
        ticker = (lambda seconds, label=label: ticking.Ticker(label, seconds, sample=sample)) if sample else None
        rows.append(run_level(load, level, roots, duration, warmup, out_dir, scrape, ticker, net, window))
    for row, (v, why) in zip(rows, verdict.verdicts(rows)):
        row["verdict"], row["reason"] = v, why
    return rows


# -- thresholds ----------------------------------------------------------------------------------

def subjects(rows, duration):
    """What --fail-if reads (sutlab_lab/thresholds.py): {level: figures} of each row that ran, and "run":
    req/s over the levels' seconds, errors over all their requests, the worst level's latencies."""
    out, ran = {}, [r for r in rows if not r.get("failed")]
    for r in ran:
        requests = (r.get("rps") or 0.0) * duration
        errors = sum((r.get("errors") or {}).values())
        out[str(r["level"])] = {"rps": r.get("rps"), "p50": r.get("p50"), "p95": r.get("p95"), "p99": r.get("p99"),
                                "mean": r.get("mean"), "success": r.get("success"),
                                "errors": min(1.0, errors / requests) if requests else (1.0 if errors else None)}
    if ran:
        figures = list(out.values())
        total = sum((r.get("rps") or 0.0) * duration for r in ran)
        failed = sum(sum((r.get("errors") or {}).values()) for r in ran)
        run = {"rps": total / (duration * len(ran)),
               "errors": min(1.0, failed / total) if total else (1.0 if failed else None)}
        for k in ("p50", "p95", "p99", "mean"):
            vals = [f[k] for f in figures]
            run[k] = None if None in vals else max(vals)
        succ = [f["success"] for f in figures]
        run["success"] = None if None in succ else sum(succ) / len(succ)
        out["run"] = run
    return out


# -- output --------------------------------------------------------------------------------------

def _errors_text(errors):
    return " ".join("%s:%d" % (k, n) for k, n in sorted((errors or {}).items())) or "0"


def _tier_cells(row, tier):
    u = row.get("tiers", {}).get(tier)
    if u is None:
        return "-"
    per_req = u["cpu_s"] / (row["rps"] * u["elapsed_s"]) * 1e6 if row.get("rps") and u["elapsed_s"] else None
    # % of one core / capacity in cores, then CPU per request
    return "%d%% of %g, %s" % (round(u["cores_used"] * 100), u["capacity"], report.fmt(per_req, 0, "{} us"))


def markdown(rows, tier_names):
    # the success ratio where the tool gives it (the open model's, vegeta's figure)
    ok_col = any("success" in r for r in rows)
    header = ["level", "req/s"] + (["ok %"] if ok_col else []) + ["mean ms", "p50 ms", "p99 ms", "errors"] + \
             ["cpu %s" % t for t in tier_names] + ["cpu outside", "net MB/s", "Send-Q", "largest Send-Q", "listen q",
                                                   "overflows", "conns", "lag ms", "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        if r.get("failed"):
            cells = [str(r["level"])] + ["failed: %s" % r.get("error", "")] + [""] * (len(header) - 2)
        else:
            cells = [str(r["level"]), report.fmt(r.get("rps"), 0)]
            if ok_col:
                cells.append(report.fmt(_pct(r.get("success")), 1))
            cells += [report.fmt(r.get("mean")), report.fmt(r.get("p50")), report.fmt(r.get("p99")),
                      _errors_text(r.get("errors"))]
            cells += [_tier_cells(r, t) for t in tier_names]
            # work beside the run, outside every tier sampled: what makes a step `disturbed`
            cells.append(report.fmt(_pct(r.get("outside_cores")), 0, "{}%"))
            cells.append(_net_cell(r))
            # the server's sockets (the web tier's): all of them summed, and the fullest one
            cells += [report.fmt(_kib(r.get("send_q")), 0, "{} KiB"),
                      report.fmt(_kib(r.get("send_q_max")), 0, "{} KiB"), report.fmt(r.get("listen_q"), 0),
                      report.fmt(r.get("overflows"), 0), report.fmt(r.get("connections"), 0),
                      report.fmt(_ms(r.get("loop_lag_s")), 1), "**%s**" % r.get("verdict")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _net_cell(r):
    """The network tier: the busier direction of the load's link, MB/s, and its share of the
    link's capacity (verdict.net_share) where the lab caps it, else "not capped" (loopback, or
    the netns lab without --rate: no capacity to compare with)."""
    rates = [r.get(k) for k in ("net_rx_Bps", "net_tx_Bps") if r.get(k) is not None]
    if not rates:
        return report.MISSING
    share = verdict.net_share(r)
    text = "%.2f" % (max(rates) / 1e6)
    if share is None:
        return text + " (not capped)"
    return text + " of %.2f (%.3g%%)" % (r["net_capacity_Bps"] / 1e6, 100 * share)


def _pct(v):
    return None if v is None else v * 100.0


def _round(v, digits):
    return "" if v is None else round(v, digits)


def _kib(v):
    return None if v is None else v / 1024.0


def _ms(v):
    return None if v is None else v * 1000.0


def write_csv(rows, tier_names, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(CSV_COLUMNS) + ["cpu_%s_pct" % t for t in tier_names] +
                   ["capacity_%s" % t for t in tier_names] + ["busy_%s" % t for t in tier_names] +
                   ["send_q", "recv_q", "listen_q", "overflows", "connections", "loop_lag_s", "failed",
                    "writing_load", "send_q_max", "outside_cores", "machine_busy", "net_iface", "net_rx_Bps",
                    "net_tx_Bps", "net_capacity_Bps", "net_share"])
        for r in rows:
            u = r.get("tiers", {})
            w.writerow([r["level"], r.get("rps"), r.get("success"), r.get("mean"), r.get("p50"), r.get("p95"), r.get("p99"),
                        _errors_text(r.get("errors")), r.get("verdict"), r.get("reason")] +
                       [round(u[t]["cores_used"] * 100, 1) if t in u else "" for t in tier_names] +
                       [u[t]["capacity"] if t in u else "" for t in tier_names] +
                       [round(u[t]["busy"], 3) if t in u else "" for t in tier_names] +
                       [r.get(k) for k in ("send_q", "recv_q", "listen_q", "overflows", "connections",
                                           "loop_lag_s")] + [1 if r.get("failed") else 0] +
                       # share of the step the load tool sat blocked writing its own output
                       [round(u["load"]["writing_s"] / u["load"]["elapsed_s"], 3)
                        if "load" in u and u["load"].get("elapsed_s") else ""] +
                       [r.get("send_q_max"), _round(r.get("outside_cores"), 3), _round(r.get("machine_busy"), 3)] +
                       [r.get("net_iface"), _round(r.get("net_rx_Bps"), 0), _round(r.get("net_tx_Bps"), 0),
                        _round(r.get("net_capacity_Bps"), 0), _round(verdict.net_share(r), 6)])


def plot(rows, tier_names, path, title, unit):
    """rps and p95 (p99 where the tool gives no p95) against level, over a stacked bar of each
    tier's CPU (% of one core) at each level. title: the load (loads.Load.describe); unit: what a
    level counts (loads.LEVEL_UNITS: connections, users, ...), the x axis' label."""
    from . import plots
    plt = plots._pyplot()
    ok = [r for r in rows if not r.get("failed")]
    x = list(range(len(ok)))
    fig, (top, bottom) = plots._figure(plt, (1000, 700), nrows=2, sharex=True)
    top.plot(x, [r.get("rps") or 0 for r in ok], "o-", color="tab:blue", label="req/s")
    top.set_ylabel("req/s")
    top.set_ylim(bottom=0, top=max([r.get("rps") or 0 for r in ok] + [1]) * 1.15)
    lat = top.twinx()
    p95 = [r.get("p95") if r.get("p95") is not None else r.get("p99") for r in ok]
    lat.plot(x, [v if v is not None else float("nan") for v in p95], "s--", color="tab:red", label="p95 ms")
    lat.set_ylabel("p95 ms (p99 where no p95)")
    lat.set_ylim(bottom=0)
    bottoms = [0.0] * len(ok)
    for tier in tier_names:
        vals = [r.get("tiers", {}).get(tier, {}).get("cores_used", 0) * 100 for r in ok]
        bottom.bar(x, vals, bottom=bottoms, label=tier)
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    bottom.set_ylabel("CPU, % of one core")
    bottom.set_xticks(x)
    bottom.set_xticklabels(["%s\n%s" % (r["level"], r.get("verdict", "")) for r in ok])
    bottom.set_xlabel("level: %s (under each, the tier that limits)" % unit)
    bottom.legend(loc="upper left", fontsize="small")
    plots._title(fig, (1000, 700), title, [], 3)
    return plots._save(fig, plt, path, (1000, 700))
