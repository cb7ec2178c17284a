"""An open-model load and vegeta's report: requests arrive at --rate a second for --duration
seconds whether or not earlier ones were answered (vegeta attack -rate=R -duration=Ds | vegeta
report), sent by httperf to an IPv4 address, by spray's own asyncio attacker to an IPv6 one or a
name (httperf has no IPv6).

  loadscripts/spray --path '/work/sleep?ms=2000' --rate 100 --duration 30
  loadscripts/spray --path '/work/sleep?ms=2000' --rate 100 --duration 30 --abort-on-overflow
  loadscripts/spray --url 'http://[::1]:8080' --rate 100     (IPv6: the server needs --listen '[::1]:8080')
  loadscripts/spray --url http://localhost:8080 --resolve ::1,127.0.0.1   (a name dialled as vegeta does)
  infra/lab exec-client -- loadscripts/spray --path '/work/sleep?ms=2000' --rate 100   (the netns lab)

The report (OUT/report.html, with report.txt) carries CPU per tier over time (OUT/cpu.csv,
cpu.png: the lab's tiers, or those given with --web-pid, --db-pid, ..., and httperf as the load)
and, when a Prometheus is reachable (--prometheus auto: the lab's with `infra/lab up
--monitoring`), the run's series (OUT/prometheus.csv, .png).

--abort-on-overflow sets net.ipv4.tcp_abort_on_overflow=1 for the run (root; the netns lab's web
namespace when the URL is its address, else this machine's namespace) and restores it: a full
accept queue then resets connections, as in the write-up, instead of dropping them silently.
Exit 0 once the report is printed, whatever the success ratio, unless a --fail-if threshold is
violated (sutlab_lab/thresholds.py: `--fail-if 'success>=99%' --fail-if 'p99<2500ms'`): then 1, as when
httperf failed; 2 on bad usage.
"""

import os
import shutil
import signal
import socket
import sys
import time

from .. import REPO, htmlreport, panels, spray, thresholds, tiers
from ..cli import Parser, Usage
from ..errors import RunError


def arguments(argv):
    p = Parser(prog="loadscripts/spray", description=__doc__.split("\n\n")[0])
    default_url = os.environ.get("SUTLAB_URL") or "http://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_PORT", "8080")
    p.add_argument("--url", default=default_url, help="the target (default $SUTLAB_URL, else the lab's)")
    p.add_argument("--path", default="/work/sleep?ms=2000", help="what every request asks (default %(default)s)")
    p.add_argument("--rate", type=float, default=100, help="requests a second (default 100, the write-up's)")
    p.add_argument("--duration", type=int, default=30, help="seconds of arrivals (default 30)")
    p.add_argument("--timeout", type=int, default=30, help="seconds a request may take (default 30, vegeta's)")
    p.add_argument("--abort-on-overflow", action="store_true", help="tcp_abort_on_overflow=1 for the run")
    p.add_argument("--attacker", choices=("auto", "httperf", "asyncio"), default="auto",
                   help="who sends: httperf (IPv4 addresses only) or spray's asyncio attacker (IPv6, names); "
                        "auto: httperf for an IPv4 address, else the attacker")
    p.add_argument("--resolve", metavar="IP,IP...",
                   help="the attacker dials these for the URL's host, in this order, as a name that resolves "
                        "to them (a `localhost` that is ::1 then 127.0.0.1, as on the write-up's machine)")
    p.add_argument("--json", action="store_true", help="also print the summary as one JSON line, last")
    p.add_argument("--log", help="write httperf's commands and outputs to this file")
    p.add_argument("--out", help="directory for report.html and report.txt (default var/spray/TIME)")
    p.add_argument("--no-report", action="store_true", help="no report.html (loadscripts/steps runs spray so)")
    panels.add_arguments(p, pids=True)
    p.add_argument("--fail-if", action="append", default=[], type=thresholds.argument(without=("ratio",)), metavar="EXPR",
                   help="exit 1 unless the run meets it (repeatable): success>=99%%, p99<2500ms, errors<1%%, "
                        "rps>=95, mean<..., p50<..., p95<...")
    args = p.parse_args(argv)
    if not 0 < args.rate <= 100000:
        raise Usage("--rate wants a number of requests a second above 0 (at most 100000)")
    for name in ("duration", "timeout"):
        if not 1 <= getattr(args, name) <= 3600:
            raise Usage("--%s wants whole seconds from 1 to 3600" % name)
    try:
        args.host, args.port = spray.target(args.url)
    except ValueError as e:
        raise Usage("--url %s" % e)
    if not args.path.startswith("/"):
        raise Usage("--path must start with /")
    args.given = _resolve(args.resolve)
    if args.attacker == "auto":
        args.attacker = "asyncio" if args.given else spray.attacker_for(args.host)
    if args.attacker == "httperf" and (args.given or ":" in args.host):
        raise Usage("httperf dials IPv4 only: an IPv6 URL or --resolve needs --attacker asyncio (or auto)")
    if args.attacker == "httperf" and shutil.which("httperf") is None:
        raise Usage("httperf is not installed (apt-get install httperf)")
    return args


def _resolve(text):
    """--resolve's addresses as a list, each checked to be an IP address; None without it."""
    if not text:
        return None
    out = [ip.strip() for ip in text.split(",")]
    for ip in out:
        try:
            socket.inet_pton(socket.AF_INET6 if ":" in ip else socket.AF_INET, ip)
        except OSError:
            raise Usage("--resolve wants IP addresses separated by commas, got %r" % ip)
    return out


def web_netns(host):
    """The netns lab's web namespace when `host` is its address, else None (this namespace)."""
    conf = os.path.join(REPO, "var", "netns", "netns.conf")
    try:
        with open(conf) as f:
            kv = dict(line.strip().split("=", 1) for line in f if "=" in line)
    except OSError:
        return None
    if kv.get("PREFIX") and kv.get("NET") and host == "%s.1.2" % kv["NET"]:
        return "%s-web" % kv["PREFIX"]
    return None


class Tiers:
    """The tiers sampled over the spray for report.html (tiers.Sampler): the lab's, or the
    --TIER-pid given, and httperf's processes as the load tier, from the moment they run."""

    def __init__(self, args):
        self.roots = {} if args.no_report else panels.tier_roots(args)
        self.sampler, self.timeline = None, None
        self.enabled = not args.no_report  # steps' httperf runs are sampled by steps

    def start(self, pids):
        if self.enabled:
            self.sampler = tiers.Sampler(dict(self.roots, load=pids)).start()

    def stop(self):
        if self.sampler is not None:
            self.timeline = self.sampler.stop()[1]["timeline"]
            self.sampler = None

    def unsampled(self):
        """What the page says of the server tiers it could not sample."""
        if self.roots.get("web"):
            return []
        return ["no server tier sampled: no lab runs (infra/lab up) and no --web-pid was given; the load "
                "tier (httperf) only"]


def attack(args, sampled):
    log = open(args.log, "w") if args.log else None
    try:
        return spray.run(args.host, args.port, args.path, args.rate, args.duration, args.timeout, log=log,
                         show_progress=True, on_start=sampled.start, attacker=args.attacker, given=args.given)
    finally:
        sampled.stop()
        if log is not None:
            log.close()


def spray_table(s):
    """The summary as one Markdown table row: what report.html shows first."""
    def ms(v):
        return "n/a" if v is None else "%.1f" % v
    codes = " ".join("%s:%d" % kv for kv in sorted(s["codes"].items(), key=lambda kv: str(kv[0])))
    errors = " ".join("%s:%d" % kv for kv in sorted(s["errors"].items())) or "none"
    return "\n".join(["| requests | rate /s | throughput /s | success % | mean ms | p50 ms | p95 ms | p99 ms | max ms "
                      "| codes | errors |", "|" + "---|" * 11,
                      "| %d | %.2f | %.2f | %.2f | %s | %s | %s | %s | %s | %s | %s |" % (
                          s["requests"], s["rate"] or 0, s["throughput"], 100 * s["success"], ms(s["mean"]),
                          ms(s["p50"]), ms(s["p95"]), ms(s["p99"]), ms(s["max"]), codes, errors)])


def write_page(args, page, s, gate_lines, sampled, window):
    """OUT/report.txt (vegeta's report) and OUT/report.html, with the shared panels (panels.py):
    the run's Prometheus series over `window` (time.time() around the attack), CPU per tier over
    time."""
    out = args.out or os.path.join(REPO, "var", "spray", time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    text = spray.text(s, args.duration)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(text + "\n")
    page.add_markdown("The run", spray_table(s))
    page.add_text("vegeta's report", text)
    if gate_lines:
        page.add_markdown("Thresholds", "\n".join("- " + ln for ln in gate_lines))
    page.set_verdict("success %.2f%% of %d requests" % (100 * s["success"], s["requests"]), s["success"] >= 0.99)
    load = "spray: GET %s%s, %g arrivals a second (open model)" % (args.url, args.path, args.rate)
    panels.prometheus_panel(page, out, args.prometheus, args.lab_var, *window, load=load)
    panels.cpu_panel(page, out, [("spray", sampled.timeline)] if sampled.timeline else [], what="the spray",
                     unsampled=sampled.unsampled(), load=load)
    print("report: %s" % page.write(out), file=sys.stderr)


def main(argv):
    try:
        args = arguments(argv)
    except Usage as e:
        print("loadscripts/spray: %s" % e, file=sys.stderr)
        return 2
    # a SIGTERM unwinds like Ctrl-C, so the sysctl is restored on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    page = htmlreport.Report("spray", "spray: %s%s at %g req/s for %d s" % (args.url, args.path, args.rate,
                                                                           args.duration), url=args.url)
    if not args.no_report:
        page.note_flags()
    n = spray.processes_for(args.rate, args.timeout)
    who = ("%d httperf process%s" % (n, "" if n == 1 else "es") if args.attacker == "httperf" else
           "spray's attacker%s" % (", %s as %s" % (args.host, " then ".join(args.given)) if args.given else ""))
    print("spray: %s%s at %g req/s for %d s, timeout %d s (%s)"
          % (args.url, args.path, args.rate, args.duration, args.timeout, who), flush=True)
    sampled, started = Tiers(args), time.time()
    try:
        if args.abort_on_overflow:
            ns = web_netns(args.host)
            with spray.AbortOnOverflow(ns):
                print("spray: %s=1 in %s for the run" % (spray.ABORT_SYSCTL, "namespace " + ns if ns else
                                                           "this network namespace"), flush=True)
                report = attack(args, sampled)
        else:
            report = attack(args, sampled)
    except RunError as e:
        print("loadscripts/spray: %s" % e, file=sys.stderr)
        return 1
    s = spray.summary(report, args.rate, args.duration, args.timeout)
    print(spray.text(s, args.duration))
    lines = []
    gate = thresholds.judge(args.fail_if, {thresholds.RUN: spray.figures(s)}, say=lambda ln: (print(ln), lines.append(ln)))
    if not args.no_report:
        write_page(args, page, s, lines, sampled, (started, time.time()))
    if args.json:
        print(spray.json_line(s))
    return gate
