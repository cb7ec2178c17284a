"""flip: the same load with a server flag off, then on; a before/after table and a PNG.

  loadscripts/flip FLAG [VALUE] [--scenario S] [--duration D] [--rounds N] ...

FLAG is a sutlab serve flag, or `indexes` (sutlab db indexes off|on):

  flip                      off run                      on run                      default load
  --count-pagination [on]   --count-pagination off       --count-pagination on       articles
  --count-pagination estimate  --count-pagination off    --count-pagination estimate articles
  --redis-cache             --no-redis-cache             --redis-cache               stores
  --cache-local             --redis-cache --no-cache-local  --redis-cache --cache-local  stores
  --gzip                    --no-gzip                    --gzip                      stores-gzip
  --keepalive-timeout 0     --keepalive-timeout 10       --keepalive-timeout 0       health
  --log verbose             --log off                    --log verbose               echo, else article
  --db-mode sync            --db-mode async              --db-mode sync              store
  --db-mode async           --db-mode sync               --db-mode async             store
  --workers N               --workers 1                  --workers N (default: CPUs) store
  --handler-mode inline     --handler-mode offload       --handler-mode inline       block (spray, 30 s) + probe
  --tls-resumption off      (server default: on)         --tls-resumption off        handshake (s_time, TLS 1.2)
  indexes                   sutlab db indexes off        sutlab db indexes on        articles
  any other flag            (removed: server default)    the flag [VALUE]            health
                            or --off VALUE

Loads (--scenario), with wrk (default; loadscripts/wrk/*.lua), Locust (--tool locust,
loadscripts/locust/locustfile.py --tags TAG) or, for the paths that need no script, spray (--tool
spray: --rate R arrivals a second for --duration seconds, the open model; the default of
--handler-mode, at the spray write-up's 100/s for 30 s against its 2 s block):
  health       GET /health_check                                   plain.lua           health_check
  static       GET /status.txt                                     plain.lua           static
  articles     GET /api/articles?limit=20&offset=0 (the index)     articles_index.lua  list_articles
  articles-by-author  GET /api/articles?limit=20&author=user1      articles_index.lua  -
  article      GET /api/articles/<random slug>                     article_by_slug.lua show_articles
  stores       GET /stores?categoryId=<random>                     stores_by_category  stores
  stores-gzip  the same with Accept-Encoding: gzip                 stores_by_category  stores
  store        GET /stores/<random id> (with menus)                store_by_id.lua     store_detail
  echo         POST /rpc/echo, payload of --echo-bytes (100)       rpc_echo.lua        rpc_echo
  cpu          GET /work/cpu?ms=N (--cpu-ms, 5)                    plain.lua           work_cpu
  sleep        GET /work/sleep?ms=N (--sleep-ms, 100)              plain.lua           -
  block        GET /work/sleep?ms=2000 (the spray write-up's)      plain.lua           -
  handshake    a TLS connection per request (--tool s_time, --tls-url, --tls-version)
  post         POST /api/articles/<slug>/comments (fixture token)  auth_post.lua       comment
  like         POST+DELETE /api/articles/<slug>/favorite (token)   auth_post.lua       like

--probe PATH runs a second, light wrk (-t1 -c1) on PATH during each measured run and adds its
p50/p99 and errors to the table: the latency a cheap request sees beside the load (the blocking
handler case: /health_check stalls behind inline /work/cpu).

Target server (one of):
  (default)            the lab: `infra/lab restart -- FLAGS` (keeps the data), pid from
                       var/sutlab.pid, http://127.0.0.1:$SUTLAB_LAB_PORT (8080), PostgreSQL CPU
                       from the lab's postmaster; the lab's saved flags (var/sutlab.flags), minus
                       FLAG, are in force in both runs and are restored at the end.
                       Honours SUTLAB_LAB_VAR, SUTLAB_LAB_PORT, SUTLAB_LAB_PG_PORT,
                       SUTLAB_LAB_DB_URL and SUTLAB_LAB_BIN as infra/lab does; with a scaled lab
                       (--instances N) the CPU column sums every instance.
  --spawn "CMD ARGS"   flip starts `CMD ARGS FLAGS...` itself, in the foreground, and stops it
                       (SIGTERM) after each run; needs --url. SUTLAB_* variables are removed
                       from its environment so that only the flags shown are in force.
  --restart-cmd "CMD"  `CMD FLAGS...` restarts the server and returns; needs --url; the pid is
                       read from --pid-file, else found listening on the URL's port. At the end
                       `CMD RESTORE-FLAGS...` (--restore-flags, default: the base flags).

Output: the table on stdout (and OUT/table.txt), OUT/flip.png (req/s, p50/p95/p99, CPU per
request, latency curves side by side), the load generator's raw output, the server logs, the
flags each run reported in sutlab_build_info, and OUT/report.html with CPU per tier over time
(OUT/cpu.csv, cpu.png: the server and PostgreSQL, every measured run marked) and, when a
Prometheus is reachable (--prometheus auto: the lab's with `infra/lab up --monitoring`), the
run's series (OUT/prometheus.csv, .png). OUT is --out, default var/flip/<time>-<flag>.
Server CPU = utime+stime of the server process (all threads) during the measured run, from
/proc/PID/stat: "% of one core" and microseconds per request; PostgreSQL's likewise (the
postmaster and every process under it) when its pid is known.

--live: one load throughout, the flag changed at its half through sutlab's admin listener
(docs/admin-api.md) instead of a restart: one curve with the change marked (OUT/flip.png), and
the table from the two halves, the new state's first --warmup seconds left out; the figures come
from sutlab's /metrics, scraped every 0.5 s. With --spawn, flip gives the server an admin
listener of its own; the lab's is found in the flags `infra/lab up --admin` saved; with
--restart-cmd, or a lab started otherwise, give --admin-url and --admin-token-file (or
$SUTLAB_ADMIN_TOKEN). Only the live flags (GET /admin) can; one round.

--fail-if EXPR (repeatable; sutlab_lab/thresholds.py) gates on the figures: `ratio>=1.5` (req/s on /
off, the medians), or p50/p95/p99/mean/rps/errors/success of both arms, or of one with @on or
@off (`p99<20ms@on`, `errors<0.1%`); each violated one prints a line and the exit status is 1.

Exit status: 0 both runs measured and every --fail-if met (whatever the numbers otherwise), 1
something failed (server did not start, load generator failed, endpoint missing) or a threshold
was violated, 2 bad usage (one line), 130 interrupted. The original flags (and index state) are
restored on every exit.
"""

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import time

from .. import REPO, engine, entry, htmlreport, panels, plots, thresholds
from ..cli import Parser, guarded
from ..engine import targets
from ..errors import RunError
from ..flip import live, load, log, plan, report

VAR = os.path.join(REPO, "var")


# ---------------------------------------------------------------------------------------------
# Arguments

def split_flag(argv):
    """The flag under test and its value from the head of argv; returns (name, value, rest)."""
    if not argv or argv[0] in ("-h", "--help"):
        return None, None, argv
    head = argv[0]
    if head in ("indexes", "--indexes"):
        return "indexes", None, argv[1:]
    if not head.startswith("--") or len(head) < 3:
        raise SystemExit("flip: the first argument must be the flag to flip (e.g. --gzip, --workers 4, "
                         "indexes), got %r; see flip --help" % head)
    name, _, value = head[2:].partition("=")
    rest = argv[1:]
    if not _:
        value = None
        if rest and not rest[0].startswith("-"):
            value, rest = rest[0], rest[1:]
    return name, value, rest


def add_target_args(p):
    """Which server the runs flip, and how it is restarted (default: the lab)."""
    g = p.add_argument_group("target (default: the lab of this checkout, infra/lab)")
    g.add_argument("--spawn", metavar="CMD", help="start `CMD FLAGS...` as the server for each run")
    g.add_argument("--restart-cmd", metavar="CMD", help="`CMD FLAGS...` restarts the server")
    g.add_argument("--url", metavar="URL", help="the server's base URL (required with --spawn/--restart-cmd)")
    g.add_argument("--pid-file", metavar="FILE", help="the server's pid (--restart-cmd)")
    g.add_argument("--pg-pid-file", metavar="FILE",
                   help="PostgreSQL's postmaster.pid, for its CPU column (the lab's is found)")
    g.add_argument("--db-url", metavar="URL", help="PostgreSQL URL for `indexes` (the lab's is known)")
    g.add_argument("--sutlab-bin", metavar="PATH",
                   help="sutlab binary for `db indexes` and `serve --help` (default $SUTLAB_BIN, "
                        "else build/sutlab)")
    g.add_argument("--restore-flags", metavar="FLAGS",
                   help="--restart-cmd: flags to restart with at the end (default: the base flags)")
    panels.add_arguments(g, lab_var=False)  # auto: the Prometheus of the lab in $SUTLAB_LAB_VAR, else var/
    g.add_argument("--start-timeout", type=float, default=20.0, metavar="SECONDS",
                   help="how long a (re)started server may take to answer /health_check (default %(default)s)")


def add_load_args(p):
    """The load of each run: the tool, its scenario, duration, rounds and clients."""
    p.add_argument("--scenario", choices=sorted(load.SCENARIOS), help="the load (default: per flag, above)")
    p.add_argument("--tool", choices=("wrk", "locust", "spray", "s_time"),
                   help="load generator (default wrk; spray for --handler-mode): wrk and Locust hold "
                        "--connections clients (closed model; Locust, a Python client, saturates near "
                        "5,000 req/s per core); spray sends --rate requests a second whatever the "
                        "answers (open model, httperf, vegeta's report); s_time opens a TLS connection per "
                        "request, one at a time (openssl s_time -reuse; the default for --tls-resumption)")
    p.add_argument("--duration", type=float, metavar="SECONDS",
                   help="each measured run (default 10; 30 with spray for --handler-mode, the write-up's)")
    p.add_argument("--rate", type=float, default=100.0, metavar="R",
                   help="spray: arrivals a second (default %(default)g, the spray write-up's)")
    p.add_argument("--tls-url", metavar="URL",
                   default="https://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_TLS_PORT", "8443"),
                   help="s_time: the server's HTTPS listener (default %(default)s, infra/lab up --tls)")
    p.add_argument("--tls-version", choices=("1.2", "1.3"), default="1.2",
                   help="s_time: the TLS version (default %(default)s: its resumption skips every public-key "
                        "operation; 1.3's keeps a key exchange)")
    p.add_argument("--timeout", type=int, default=30, metavar="SECONDS",
                   help="spray: a request unanswered this long is a timeout (default %(default)s, vegeta's)")
    p.add_argument("--warmup", type=float, default=2.0, metavar="SECONDS",
                   help="unmeasured run before each measured one, 0 = none (default %(default)s)")
    p.add_argument("--rounds", type=int, default=1, metavar="N",
                   help="off/on pairs, alternated (off on, on off, ...); medians are shown (default %(default)s)")
    p.add_argument("--connections", "-c", type=int, default=32, metavar="N",
                   help="wrk -c, or Locust users (default %(default)s)")
    p.add_argument("--threads", "-t", type=int, default=1, metavar="N", help="wrk -t (default %(default)s)")
    p.add_argument("--load-workers", type=int, default=1, metavar="N",
                   help="the load tool's workers: Locust as a master and N workers, wrk -t N (default 1)")
    p.add_argument("--load-cpus", metavar="LIST", help="the load tool on these cores (taskset -c LIST)")


def parse_args(argv):
    name, value, rest = split_flag(argv)
    p = Parser(prog="flip", usage="flip FLAG [VALUE] [options]",
                                description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_load_args(p)
    p.add_argument("--off", metavar="VALUE", help="the flag's value in the off run (default: per flag)")
    p.add_argument("--live", action="store_true",
                   help="one load throughout; the flag changes at its half through the admin listener")
    p.add_argument("--admin-url", metavar="URL", help="--live: sutlab's admin listener (not for --spawn)")
    p.add_argument("--admin-token-file", metavar="FILE",
                   help="--live: the admin token's file (default $SUTLAB_ADMIN_TOKEN)")
    p.add_argument("--probe", metavar="PATH",
                   help="measure PATH with a second wrk -c1 during each run (default: /health_check for "
                        "--handler-mode, else none; 'none' turns it off)")
    p.add_argument("--cpu-ms", type=int, default=5, metavar="MS", help="scenario cpu: ?ms= (default %(default)s)")
    p.add_argument("--sleep-ms", type=int, default=100, metavar="MS",
                   help="scenario sleep: ?ms= (default %(default)s)")
    p.add_argument("--echo-bytes", type=int, default=100, metavar="N",
                   help="scenario echo: payload size (default %(default)s)")
    p.add_argument("--base-flags", metavar="FLAGS",
                   help="server flags in force in both runs (default: the lab's saved flags, without "
                        "FLAG; empty for --spawn/--restart-cmd)")
    p.add_argument("--out", metavar="DIR", help="output directory (default var/flip/<time>-<flag>)")
    p.add_argument("--size", default="1400x1000", metavar="WxH", help="PNG size (default %(default)s)")
    p.add_argument("--no-png", action="store_true", help="table only")
    p.add_argument("--fail-if", action="append", default=[], type=thresholds.argument(), metavar="EXPR",
                   help="exit 1 unless the run meets it (repeatable): ratio>=1.5, p99<20ms@on, errors<0.1%%")
    p.add_argument("--pin-db", metavar="SERVER_CPU:DB_CPU",
                   help="pin sutlab and PostgreSQL (all threads) to these CPUs after each restart; the "
                        "php-fpm case only shows when PostgreSQL does not share the server's core "
                        "(default 0:1 for --db-mode and --workers on a machine with 2+ CPUs, else off; "
                        "'none' turns it off)")
    add_target_args(p)
    if name is None:
        p.print_help()
        raise SystemExit(0 if argv and argv[0] in ("-h", "--help") else 2)
    args = p.parse_args(rest)
    args.flag, args.value = name, value
    check_args(p, args)
    return args


def check_args(p, args):
    """The defaults that depend on other options, and the combinations argparse cannot refuse
    (p.error: a usage line, exit 2)."""
    plan.tool_setting(args)
    if args.spawn and args.restart_cmd:
        p.error("--spawn and --restart-cmd exclude each other")
    if (args.spawn or args.restart_cmd) and not args.url:
        p.error("--spawn and --restart-cmd need --url")
    if args.tool == "spray" and (args.rate <= 0 or args.timeout < 1):
        p.error("--rate and --timeout must be positive")
    if args.duration <= 0 or args.rounds < 1 or args.connections < 1 or args.threads < 1:
        p.error("--duration, --rounds, --connections and --threads must be positive")
    if args.live and (args.rounds != 1 or args.flag == "indexes" or args.tool == "s_time"):
        p.error("--live runs one round of wrk, Locust or spray on a live flag (not --rounds, indexes or s_time)")
    if args.live and not args.spawn and not args.admin_url and not args.restart_cmd:
        args.admin_url, token_file = lab_admin()
        args.admin_token_file = args.admin_token_file or token_file
    if args.live and not args.spawn and not args.admin_url:
        p.error("--live needs --admin-url (and a token) unless flip spawns the server or the lab "
                "has an admin listener (infra/lab up --admin)")
    if args.load_workers < 1:
        p.error("--load-workers wants 1 or more")
    if args.load_workers > 1 and args.tool not in ("wrk", "locust"):
        p.error("--load-workers is for --tool wrk or locust (%s has no workers to add)" % args.tool)
    if args.tool == "wrk" and args.load_workers > 1:
        args.threads = args.load_workers
    if args.threads > args.connections:
        args.threads = args.connections
    try:
        args.size = plots.parse_size(args.size)
    except ValueError as e:
        p.error(str(e))


# ---------------------------------------------------------------------------------------------
# The phases

def sutlab_binary(args, target):
    """The sutlab of `db indexes` and `serve --help`: --sutlab-bin, $SUTLAB_BIN, the lab's, the
    --spawn command's when it is a sutlab, else build/sutlab."""
    if args.sutlab_bin or os.environ.get("SUTLAB_BIN"):
        return args.sutlab_bin or os.environ["SUTLAB_BIN"]
    if args.spawn and os.path.basename(shlex.split(args.spawn)[0]) == "sutlab":
        return shlex.split(args.spawn)[0]
    return target.bin or os.path.join(REPO, "build", "sutlab")


def run_rounds(args, p, target, scenario):
    """off and on in alternated rounds on the engine: each run restarted with its flags (and its
    indexes state: the arm's setup), pinned, checked to answer, then measured. {label: [result
    per round]}."""
    def measure(arm, rnd, _seconds):
        load.pin(target, args.pin_db)
        token = load.login_token(target.url) if scenario in load.TOKEN_SCENARIOS else None
        ok, why = load.probe(target.url, scenario)
        if not ok:
            raise RunError("%s run: the endpoint does not answer 2xx: %s" % (arm.name, why))
        r = load.measure(args, target, scenario, arm.name, rnd, token)
        verbose = os.path.join(target.out, "verbose.log")
        if args.flag == "log" and os.path.exists(verbose):
            r["log_bytes"] = os.path.getsize(verbose)
            os.unlink(verbose)
        return r

    return engine.run_on(target, p.arms(), measure, args.rounds, args.duration)


def lab_admin():
    """(URL, token file) of the lab's admin listener, from the flags `infra/lab up` saved
    (var/sutlab.flags: --admin-listen, --admin-token-file, as up --admin sets them); (None, None)
    when the lab has none."""
    path = os.path.join(os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var"), "sutlab.flags")
    try:
        with open(path) as f:
            words = [w.strip() for w in f.read().splitlines()]
    except OSError:
        return None, None
    found = {}
    for i, w in enumerate(words):
        for name in ("--admin-listen", "--admin-token-file"):
            if w.startswith(name + "="):
                found[name] = w[len(name) + 1:]
            elif w == name and i + 1 < len(words):
                found[name] = words[i + 1]
    listen = found.get("--admin-listen")
    if not listen:
        return None, None
    host, _, port = listen.rpartition(":")
    return "http://%s:%s" % (host or "127.0.0.1", port), found.get("--admin-token-file")


def live_admin(args):
    """--live: the admin flags a spawned server gets, and the admin listener to talk to."""
    if not args.live:
        return [], None
    if args.spawn:
        return engine.live.spawn_admin_flags()
    token = os.environ.get("SUTLAB_ADMIN_TOKEN")
    if args.admin_token_file:
        try:
            with open(args.admin_token_file) as f:
                token = f.readline().strip()
        except OSError as e:
            raise RunError("--admin-token-file: %s" % e)
    if not token:
        raise RunError("--live: no admin token (--admin-token-file FILE or $SUTLAB_ADMIN_TOKEN)")
    return [], engine.live.Admin(args.admin_url, token)


def run_live(args, p, target, scenario):
    """The live run's halves as flip's results ({label: [r]}), and its curve."""
    token = load.login_token(target.url) if scenario in load.TOKEN_SCENARIOS else None
    ok, why = load.probe(target.url, scenario)
    if not ok:
        raise RunError("the endpoint does not answer 2xx: %s" % why)
    results, rows, t_change, whole = live.run(args, target, scenario, p, token)
    return results, {"rows": rows, "t_change": t_change, "load": whole}


def write_report(args, p, target, scenario, results, page, curve=None):
    what, load_desc = load.load_description(args, scenario)
    flipped = "indexes" if args.flag == "indexes" else "--%s%s" % (
        args.flag, "" if p.boolean else " " + (args.value or plan.spec_of(args.flag).get("on") or ""))
    title = "flip %s: %s" % (flipped, scenario)
    text, meds = report.text(args, p, target, title, load_desc, results)
    if curve is not None:
        text += "\nlive: %s" % live.describe(args, curve["t_change"])
        if curve["load"] is not None and curve["load"].get("errors"):
            text += "\nthe load tool's own errors over the whole run: %s" % curve["load"]["errors"]
    print(text, flush=True)
    with open(os.path.join(target.out, "table.txt"), "w") as f:
        f.write(text + "\n")
    if not args.no_png:
        try:
            png_path = os.path.join(target.out, "flip.png")
            if curve is not None:
                print("PNG: %s" % live.png(curve["rows"], curve["t_change"], png_path, args.size,
                                           title + " — " + what, args.flag, results["on"][-1]["build_flags"]))
            else:
                print("PNG: %s" % report.png(args, p, results, meds, png_path, title + " — " + what, load_desc))
        except ImportError as e:
            log("warning: no PNG (%s): apt-get install python3-matplotlib" % e)
    page.title = title
    page.flags = "; ".join("%s: %s" % (label, results[label][-1]["build_flags"]) for label, _, _ in p.runs)
    table, _ = report.table_text(p, results, bool(args.probe), ok=args.tool == "spray", framed=True)
    page.add_markdown("Before and after (medians over the rounds)", table)
    page.add_text("The run", text)
    page.add_image("req/s, latency and CPU per request, off and on", os.path.join(target.out, "flip.png"))
    print("output: %s" % target.out)
    return meds


def write_page(args, page, out, results, window, ratio, gate_lines, gate, load_desc):
    """OUT/report.html, once the thresholds are judged: the headline is the on/off ratio of
    req/s, marked failed when a threshold was violated; then the shared panels (panels.py) of
    the window (time.time() before the first run, after the last): the run's Prometheus series,
    CPU per tier over time of every measured run, off and on as they alternated, each titled
    with the load (load_desc, flip/load.py's load_description)."""
    if gate_lines:
        page.add_markdown("Thresholds (--fail-if)", "\n".join("- " + ln for ln in gate_lines))
    page.set_verdict("req/s on / off: %s" % ("n/a" if ratio is None else "%.2fx" % ratio), gate == 0)
    panels.prometheus_panel(page, out, args.prometheus, targets.LAB_VAR, *window, load=load_desc)
    panels.cpu_panel(page, out, panels.segments_in(results), mark="run",
                     what="the off and on %s" % ("halves of the load" if args.live else "runs, as alternated"),
                     load=load_desc)
    log("report: %s" % page.write(out))


def subjects(meds, seconds):
    """What --fail-if reads: each arm's medians, its errors (summed over the rounds) as a share of
    its requests (median req/s x the measured seconds of all rounds), and the run's on/off ratio
    of req/s."""
    out = {}
    for label, m in meds.items():
        requests = (m.get("rps") or 0.0) * seconds
        errors = m.get("errors") or 0
        out[label] = {"rps": m.get("rps"), "p50": m.get("p50"), "p95": m.get("p95"), "p99": m.get("p99"),
                      "success": m.get("success"),
                      "errors": min(1.0, errors / requests) if requests else (1.0 if errors else None)}
    on, off = out.get("on", {}).get("rps"), out.get("off", {}).get("rps")
    out[thresholds.RUN] = {"ratio": on / off if on is not None and off else None}
    return out


def restore(args, target, sutlab_bin, idx_original):
    """The indexes and the flags as they were, the CPUs given back: on every exit."""
    if idx_original in ("on", "off", "mixed"):
        want = "off" if idx_original == "off" else "on"
        try:
            log("restoring the indexes: sutlab db indexes %s" % want)
            plan.indexes(sutlab_bin, args.db_url or target.db_url, want)
        except (RunError, OSError, subprocess.TimeoutExpired) as e:
            log("warning: could not restore the indexes: %s" % e)
    try:
        target.restore()
        load.pin(target, args.pin_db, undo=True)
    except (RunError, OSError, subprocess.TimeoutExpired) as e:
        log("warning: restore failed: %s" % e)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    args = parse_args(argv)
    out = args.out or os.path.join(VAR, "flip", "%s-%s" % (time.strftime("%Y%m%d-%H%M%S"), args.flag))
    os.makedirs(out, exist_ok=True)
    out = os.path.realpath(out)
    for tool, program in (("wrk", "wrk"), ("spray", "httperf"), ("s_time", "openssl")):
        if args.tool == tool and not shutil.which(program):
            log("error: " + entry.missing_program(program))
            return 1
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    made = {}  # what cleanup restores: the target, the binary, the indexes as they were

    def run():
        made["target"] = target = targets.make_target(args, out, log)
        made["bin"] = sutlab_bin = sutlab_binary(args, target)
        db_url = args.db_url or target.db_url
        p = plan.make_plan(args, target, sutlab_bin, out)
        if args.flag == "indexes":
            made["indexes"] = plan.indexes_state(sutlab_bin, db_url)
        args.pin_db = plan.pin_setting(args)
        args.probe = plan.probe_setting(args)
        admin_flags, target.admin = live_admin(args)
        target.apply(p.runs[0][1] + admin_flags, "off")
        scenario = load.choose_scenario(args, target.url, plan.spec_of(args.flag))
        page = htmlreport.Report("flip", "flip --%s%s" % (args.flag, " --live" if args.live else ""), url=target.url)
        started = time.time()
        if args.live:
            results, curve = run_live(args, p, target, scenario)
        else:
            results, curve = run_rounds(args, p, target, scenario), None
        window = (started, time.time())
        meds = write_report(args, p, target, scenario, results, page, curve)
        gate_lines, figures = [], subjects(meds, args.duration * args.rounds)
        gate = thresholds.judge(args.fail_if, figures, say=lambda ln: (print(ln), gate_lines.append(ln)))
        write_page(args, page, target.out, results, window, figures[thresholds.RUN]["ratio"], gate_lines, gate,
                   load.load_description(args, scenario)[1])
        return gate

    def cleanup():
        if "target" in made:
            restore(args, made["target"], made.get("bin"), made.get("indexes"))
    return guarded(run, log, "interrupted", cleanup)
