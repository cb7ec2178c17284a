"""Where the pressure is: load one endpoint at a few levels and print, per level, the tool's figures,
each tier's CPU and the server's signals, and the tier that limits the run.

  loadscripts/steps --tool ab --path /health_check --levels 2,4,8
  loadscripts/steps --tool locust --tags show_articles --levels 2,4,8
  loadscripts/steps --tool locust --scenario blog --levels 8,32
  loadscripts/steps --tool wrk --script loadscripts/wrk/stores_by_category.lua --levels 16,64,256
  loadscripts/steps --tool httperf --path '/work/sleep?ms=2000' --rate 50,100,200
  loadscripts/steps --tool hey --path '/work/sleep?ms=1500' --read-timeout 1 --levels 4,16

The tiers come from the lab (infra/lab up, --instances, --netns: var/ pid files) unless given with
--web-pid, --lb-pid, --db-pid, --redis-pid (a sutlab the lab did not start). Output: a Markdown table
(and when the target is sutlab and a level reached several routes, a second one: per level, each
route's share of the server's time and of the database's over the measured seconds, from /metrics
as they start and end), and in --out (default var/steps/TOOL-TIME) steps.csv, steps.png, cpu.csv
and cpu.png (CPU per tier over time), report.html (with the run's Prometheus series when
--prometheus finds one: prometheus.csv, .png) and each run's log. Exit 0; 1 if a
step's load tool failed (the rows measured are kept) or a --fail-if threshold was violated (one
line each: sutlab_lab/thresholds.py); 2 on bad usage, with nothing started.

  loadscripts/steps --tool wrk --levels 16,64 --fail-if 'p99<50ms' --fail-if 'errors<0.1%' --fail-if 'rps>=1000@64'
"""

import os
import shutil
import sys
import time

from .. import REPO, entry, htmlreport, loads, panels, progress, routeshare, stepped, thresholds, tiers, verdict
from ..services import metrics
from ..services import client
from ..cli import Parser, Usage
from ..errors import RunError

LOCUST = os.path.join(REPO, "loadscripts", "locust")
SCENARIOS = {"blog": "scenario.py", "blog-writeup": "blog_writeup.py", "stores": "stores.py"}
TOOL_PROGRAMS = {"ab": "ab", "hey": "hey", "wrk": "wrk", "locust": "/usr/bin/locust", "httperf": "httperf"}


def arguments(argv):
    p = Parser(prog="loadscripts/steps", description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True, help="ab, hey, wrk, locust or httperf")
    p.add_argument("--levels", help="comma-separated clients (Locust users, connections) per step")
    p.add_argument("--rate", help="httperf: comma-separated arrival rates (requests/s) per step")
    p.add_argument("--url", default=os.environ.get("SUTLAB_URL") or
                   "http://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_PORT", "8080"),
                   help="the target (default $SUTLAB_URL, set by infra/lab exec-client; else the lab's)")
    p.add_argument("--path", default="/health_check", help="what ab, hey, httperf and wrk request")
    p.add_argument("--duration", type=int, default=10, help="measured seconds per step (10)")
    p.add_argument("--warmup", type=int, default=3, help="seconds before each step is measured (3)")
    p.add_argument("--timeout", type=int, default=10, help="a request unanswered this long is a timeout (10)")
    p.add_argument("--read-timeout", type=int, metavar="S",
                   help="wrk and hey: the clients' read timeout, S seconds in place of --timeout; a request "
                        "whose response has not come S s after it was sent is counted as `read timeout` (hey "
                        "gives the request up and sends the next; wrk waits it out and counts it late)")
    p.add_argument("--script", help="wrk: a Lua script (loadscripts/wrk/)")
    p.add_argument("--tags", help="locust: comma-separated tags of loadscripts/locust/locustfile.py")
    p.add_argument("--scenario", choices=sorted(SCENARIOS), help="locust: blog, blog-writeup (the database-bound one, "
                   "loadscripts/locust/blog_writeup.py) or stores")
    p.add_argument("--locust-arg", action="append", default=[], help="passed to Locust (repeatable)")
    p.add_argument("--abort-on-overflow", action="store_true",
                   help="httperf: net.ipv4.tcp_abort_on_overflow=1 during each step (loadscripts/spray)")
    p.add_argument("--resolve", metavar="IP,IP...", help="httperf: spray's attacker dials these for the URL's host, "
                   "in this order (loadscripts/spray --resolve)")
    p.add_argument("--out", help="directory for steps.csv, steps.png and the logs")
    panels.add_arguments(p, pids=True)
    p.add_argument("--aside-pid", type=int, action="append", default=[],
                   help="a process of the lab's own beside the tiers, such as the console a load script prints "
                        "to (repeatable): its CPU is no tier's, and not work outside them either")
    p.add_argument("--load-workers", default="1", metavar="N|auto",
                   help="the load tool's workers: wrk -t N, hey -cpus N, Locust as a master and N workers "
                        "(auto: one per core the load may use); ab and httperf have none to add (default 1)")
    p.add_argument("--load-cpus", metavar="LIST",
                   help="the cores the load tool may use (taskset -c LIST, e.g. 1 or 0-1): a CPU budget "
                        "for the load tier, which the verdict's capacity follows")
    p.add_argument("--fail-if", action="append", default=[], type=thresholds.argument(without=("ratio",)), metavar="EXPR",
                   help="exit 1 unless every level meets it (repeatable): p99<50ms, errors<0.1%%, rps>=1000, "
                        "...; @LEVEL or @run for one level or the whole run (loadscripts/README.md)")
    return p.parse_args(argv)


def levels_of(args):
    raw = args.rate if args.tool in loads.OPEN_MODEL else args.levels
    what = "--rate" if args.tool in loads.OPEN_MODEL else "--levels"
    if not raw:
        raise Usage("%s is required for %s (e.g. %s 2,4,8)" % (what, args.tool, what))
    try:
        values = [int(v) for v in raw.split(",")]
    except ValueError:
        raise Usage("%s wants comma-separated whole numbers, got %r" % (what, raw))
    if not values or min(values) < 1:
        raise Usage("%s wants numbers of 1 or more, got %r" % (what, raw))
    return values


def check(args):
    """Everything that can be refused before anything starts."""
    if args.tool not in loads.TOOLS:
        raise Usage("unknown --tool %r (%s)" % (args.tool, ", ".join(loads.TOOLS)))
    if shutil.which(TOOL_PROGRAMS[args.tool]) is None:
        raise Usage(entry.missing_program(TOOL_PROGRAMS[args.tool]) or "%s is not installed" % args.tool)
    for name in ("duration", "timeout"):
        if getattr(args, name) < 1:
            raise Usage("--%s wants 1 or more seconds" % name)
    if args.warmup < 0:
        raise Usage("--warmup wants 0 or more seconds")
    if args.script and not os.path.isfile(args.script):
        raise Usage("--script: no such file %r" % args.script)
    if args.tool == "locust" and args.tags and args.scenario:
        raise Usage("--tags (locustfile.py) and --scenario are two different Locust files: give one")
    if args.tool != "locust" and (args.tags or args.scenario):
        raise Usage("--tags and --scenario are for --tool locust")
    if args.read_timeout is not None:
        read_timeout_of(args)
    if (args.abort_on_overflow or args.resolve) and args.tool != "httperf":
        raise Usage("--abort-on-overflow and --resolve are for --tool httperf")
    args.load_cpus = cpus_of(args.load_cpus)
    args.load_workers = workers_of(args)
    return levels_of(args)


READ_TIMEOUT_TOOLS = ("wrk", "hey")
NO_READ_TIMEOUT = {
    "ab": "ab's -s ends the whole run at the first timeout, it counts none",
    "locust": "Locust's FastHttpUser reports a connect and a read timeout alike ('timed out')",
    "httperf": "an open model's arrivals are not users waiting on a read: --timeout counts its timeouts"}


def read_timeout_of(args):
    """--read-timeout: for the tools whose timeout starts when the request is sent and whose
    output says so (parsers.py: the `read timeout` kind)."""
    if args.read_timeout < 1:
        raise Usage("--read-timeout wants 1 or more seconds")
    if args.tool not in READ_TIMEOUT_TOOLS:
        raise Usage("--read-timeout is for --tool %s: %s" % (" or ".join(READ_TIMEOUT_TOOLS),
                                                            NO_READ_TIMEOUT[args.tool]))


def cpus_of(text):
    """--load-cpus LIST as a sorted list of cores this machine has and we may use, or None."""
    if text is None:
        return None
    cores = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            cores.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise Usage("--load-cpus wants cores as taskset takes them (1, 0-1, 0,2), got %r" % text)
    usable = os.sched_getaffinity(0)
    if not cores or not cores <= usable:
        raise Usage("--load-cpus %s: cores %s are not among this machine's usable ones (%s)"
                    % (text, ",".join(map(str, sorted(cores - usable))) or "none", ",".join(map(str, sorted(usable)))))
    return sorted(cores)


def workers_of(args):
    if args.load_workers == "auto":
        n = len(args.load_cpus) if args.load_cpus else len(os.sched_getaffinity(0))
    else:
        try:
            n = int(args.load_workers)
        except ValueError:
            raise Usage("--load-workers wants a number of 1 or more, or auto, got %r" % args.load_workers)
        if n < 1:
            raise Usage("--load-workers wants a number of 1 or more, or auto, got %r" % args.load_workers)
    if n > 1 and args.tool not in loads.SCALABLE:
        raise Usage("--load-workers %d: %s" % (n, loads.SCALABLE_WHY[args.tool]))
    return n


def roots_of(args):
    roots = panels.tier_roots(args)
    if not roots.get("web"):
        raise Usage("no sutlab to measure: start the lab (infra/lab up) or give --web-pid")
    return dict(roots, aside=args.aside_pid) if args.aside_pid else roots


def make_load(args, out_dir):
    files = [os.path.join(LOCUST, SCENARIOS.get(args.scenario, "locustfile.py"))]
    timeout = args.timeout if args.read_timeout is None else args.read_timeout
    return loads.Load(args.tool, args.url, path=args.path, timeout=timeout, script=args.script,
                      locustfiles=files, tags=args.tags.split(",") if args.tags else None,
                      locust_args=args.locust_arg, out_dir=out_dir,
                      spray_args=(["--abort-on-overflow"] if args.abort_on_overflow else []) +
                      (["--resolve", args.resolve] if args.resolve else []),
                      workers=args.load_workers, cpus=args.load_cpus)


def main(argv):
    try:
        args, levels, roots = prepare(argv)
    except (Usage, RunError) as e:
        print("loadscripts/steps: %s" % e, file=sys.stderr)
        return 2
    return execute(args, levels, roots)


def prepare(argv):
    """steps' options parsed and checked, the levels, the tiers' process roots, the target seen
    to answer: (args, levels, roots). Usage or RunError before anything starts."""
    args = arguments(argv)
    levels = check(args)
    roots = roots_of(args)
    client.wait_until_ok(args.url + "/health_check", timeout=3)
    return args, levels, roots


def execute(args, levels, roots):
    """The stepped run of prepare's options, as the command runs it: the table and the rules on
    stdout; steps.csv, cpu.csv, the PNGs and report.html in the output directory. Its exit status:
    1 when a step failed or a --fail-if was violated, else 0."""
    out_dir = args.out or os.path.join(REPO, "var", "steps", "%s-%s" % (args.tool, time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(out_dir, exist_ok=True)
    load = make_load(args, out_dir)
    what, unit = load.describe(), loads.LEVEL_UNITS[args.tool]  # the request that ran, what a level counts
    page = htmlreport.Report("steps", "steps: %s; levels %s %s" % (what, ",".join(map(str, levels)), unit),
                             url=args.url)
    page.note_flags()
    print("load: %s; levels %s %s" % (what, ",".join(map(str, levels)), unit))
    print("tiers: %s" % ", ".join("%s %s" % (t, ",".join(map(str, p))) for t, p in sorted(roots.items())
                                  if t != "aside"))
    if roots.get("aside"):
        print("aside (the lab's own, no tier's): %s" % ",".join(map(str, roots["aside"])))
    started = time.time()
    net = stepped.link(args.lab_var)
    rows = stepped.run(load, levels, roots, args.duration, args.warmup, out_dir,
                       scrape=stepped.web_scraper(args.url), sample=progress.server_rate(args.url), net=net,
                       window=lambda: scrape_or_none(args.url))
    ended = time.time()
    levels_routes = route_levels(rows)
    routes = route_section(levels_routes)
    names = [t for t in tiers.TIERS if any(t in r.get("tiers", {}) for r in rows)]
    table, rules = stepped.markdown(rows, names), "\n".join(READING + ["  - " + rule for rule in verdict.RULES])
    print()
    print(table)
    if routes:
        print("\nWhere the time went, per route, over each level's measured seconds (sutlab's /metrics):\n")
        print(routes)
    print()
    print(rules)
    stepped.write_csv(rows, names, os.path.join(out_dir, "steps.csv"))
    if routes:  # the same table for a reader of files (case blog-scenario's routes check)
        routeshare.write_csv(levels_routes, os.path.join(out_dir, "routes.csv"))
    try:
        stepped.plot(rows, names, os.path.join(out_dir, "steps.png"), what, unit)
    except ImportError:
        print("(no PNG: python3-matplotlib is not installed)")
    gate_lines = []
    gate = thresholds.judge(args.fail_if, stepped.subjects(rows, args.duration),
                            say=lambda ln: (print(ln), gate_lines.append(ln)))
    write_page(page, rows, table, rules, gate_lines, gate == 0, out_dir, routes)
    panels.prometheus_panel(page, out_dir, args.prometheus, args.lab_var, started, ended, load=what)
    panels.cpu_panel(page, out_dir, [(r["level"], r.get("timeline")) for r in rows], mark="level",
                     what="levels (%s)" % unit, load=what)
    page.write(out_dir)
    print("\n%s: steps.csv, cpu.csv, steps.png, cpu.png, report.html, the runs' logs" % out_dir)
    return 1 if any(r.get("failed") for r in rows) else gate


READING = ["cpu TIER: % of one core used, of the capacity in cores (the load tool's: the threads it was told to",
           "run; lb's: its nginx workers or HAProxy threads, its CPU budget; another server tier's: the threads",
           "that ran; capped by the cpuset), then CPU per request. cpu outside:",
           "the machine's CPU outside the tiers, % of one core. Verdicts, first rule that holds:"]


def scrape_or_none(url):
    """sutlab's /metrics at url, parsed; None when it does not answer the format (another server).
    The time-out is long: in --db-mode sync every worker may hold a request for seconds (case
    blog-scenario's baseline at 32 users: 6.4 s a request), and the scrape waits in a worker's
    queue like any request; a 3 s time-out lost that level's routes, the check that reads them."""
    try:
        return metrics.scrape(url, timeout=30)
    except (OSError, ValueError, metrics.MetricsFormatError):
        return None


def route_levels(rows):
    """[(level, routeshare.shares)] of each level's measured seconds, from the scrapes in the rows'
    "window", for the levels whose target is sutlab."""
    levels = []
    for row in rows:
        before, after = row.get("window") or (None, None)
        if before is None or after is None or not routeshare.is_sutlab(after):
            continue
        try:
            levels.append((row["level"], routeshare.shares(before, after)))
        except ValueError as e:
            print("(no per-route table at %s: %s)" % (row["level"], e))
    return levels


def route_section(levels):
    """route_levels' table, when a level's requests went to more than one route; else None."""
    if not any(len(shares) > 1 for _, shares in levels):
        return None
    return routeshare.markdown_levels(levels)


def write_page(page, rows, table, rules, gate_lines, gate_ok, out_dir, routes=None):
    """report.html's own part: the table, its rules, the thresholds, steps.png; the headline is
    the tier that limits each level, marked failed when a level failed or a threshold was
    violated (the shared panels follow: panels.py)."""
    page.set_verdict("limiting tier by level: " + ", ".join("%s: %s" % (r["level"], r.get("verdict", "failed"))
                                                           for r in rows),
                     gate_ok and not any(r.get("failed") for r in rows))
    page.add_markdown("Per level, and the tier that limits", table)
    if routes:
        page.add_markdown("Where the time went, per route, over each level's measured seconds", routes)
    page.add_text("How to read it", rules)
    if gate_lines:
        page.add_markdown("Thresholds (--fail-if)", "\n".join("- " + ln for ln in gate_lines))
    page.add_image("req/s and p95 against level, CPU per tier", os.path.join(out_dir, "steps.png"))
