"""flip's load: the scenarios (a wrk script or a Locust tag each), the CPU pinning, and one
measured run with the server's and PostgreSQL's CPU time around it."""

import json
import os
import re
import shlex
import subprocess

from . import log
from .. import LOADSCRIPTS, loadargv, parsers, progress, spray, tiers, verdict
from ..services import metrics
from ..services import client, procs
from ..errors import RunError
from ..tools import run_tool

WRK_DIR = os.path.join(LOADSCRIPTS, "wrk")
LOCUSTFILE = os.path.join(LOADSCRIPTS, "locust", "locustfile.py")
LOCUST = loadargv.LOCUST

# name -> (wrk script, path, script args, extra env, Locust tag, description, probe (method, path, body)).
# A script's first scenario runs it as it runs without arguments, and a Locust tag's first one is
# its task's request: loadscripts/steps names its load by them (script_request, tag_request). Path
# "/": the script makes its own paths.
SCENARIOS = {
    "health": ("plain.lua", "/health_check", [], {}, "health_check", "GET /health_check",
               ("GET", "/health_check", None)),
    "static": ("plain.lua", "/status.txt", [], {}, "static", "GET /status.txt",
               ("GET", "/status.txt", None)),
    "articles": ("articles_index.lua", "/", ["20", "1"], {}, "list_articles",
                 "GET /api/articles?limit=20&offset=0", ("GET", "/api/articles?limit=20&offset=0", None)),
    "articles-by-author": ("articles_index.lua", "/", ["20", "1", "author=user1"], {}, None,
                           "GET /api/articles?limit=20&offset=0&author=user1",
                           ("GET", "/api/articles?limit=20&author=user1", None)),
    "article": ("article_by_slug.lua", "/", [], {}, "show_articles", "GET /api/articles/<random slug>",
                ("GET", "/api/articles?limit=1", None)),
    "stores": ("stores_by_category.lua", "/", [], {}, "stores", "GET /stores?categoryId=<random>",
               ("GET", "/stores/categories", None)),
    "stores-gzip": ("stores_by_category.lua", "/", [], {"WRK_HEADERS": "Accept-Encoding: gzip"}, "stores",
                    "GET /stores?categoryId=<random>, Accept-Encoding: gzip",
                    ("GET", "/stores/categories", None)),
    "store": ("store_by_id.lua", "/", [], {}, "store_detail", "GET /stores/<random id>",
              ("GET", "/stores/1", None)),
    "echo": ("rpc_echo.lua", "/rpc/echo", ["{echo_bytes}"], {}, "rpc_echo", "POST /rpc/echo ({echo_bytes}-byte payload)",
             ("POST", "/rpc/echo", b'{"id":1,"method":"echo","payload":"probe"}')),
    "cpu": ("plain.lua", "/work/cpu?ms={cpu_ms}", [], {}, "work_cpu", "GET /work/cpu?ms={cpu_ms}",
            ("GET", "/work/cpu?ms=1", None)),
    "sleep": ("plain.lua", "/work/sleep?ms={sleep_ms}", [], {}, None, "GET /work/sleep?ms={sleep_ms}",
              ("GET", "/work/sleep?ms=1", None)),
    "handshake": ("plain.lua", "/health_check", [], {}, None,
                  "a new TLS connection per request, resumed when the server allows (openssl s_time -reuse)",
                  ("GET", "/health_check", None)),
    "block": ("plain.lua", "/work/sleep?ms=2000", [], {}, None, "GET /work/sleep?ms=2000 (the spray write-up's 2 s block)",
              ("GET", "/work/sleep?ms=1", None)),
    "post": ("auth_post.lua", "/", ["comment"], {}, "comment",
             "POST /api/articles/<random slug>/comments as user1", ("GET", "/api/articles?limit=1", None)),
    "like": ("auth_post.lua", "/", ["favorite"], {}, "like",
             "POST then DELETE /api/articles/<random slug>/favorite as user1",
             ("GET", "/api/articles?limit=1", None)),
}
TOKEN_SCENARIOS = {"post", "like"}


def scenario_text(args, text):
    return text.format(cpu_ms=args.cpu_ms, sleep_ms=args.sleep_ms, echo_bytes=args.echo_bytes)


REQUEST_ENV = ("WRK_METHOD", "WRK_BODY", "WRK_HEADERS")  # the variables that change a script's request


def script_request(script, path, env=None):
    """What wrk requests with `script` (a file of loadscripts/wrk, given no arguments; None:
    plain.lua's one request, as ab, hey and httperf send it) on the URL path `path`, `env` its
    environment: the description of the first scenario that runs the script so (same
    REQUEST_ENV variables, same path unless the script makes its own). None when none does."""
    name = os.path.basename(script) if script else "plain.lua"
    env = {k: v for k, v in (env or {}).items() if k in REQUEST_ENV}
    for s_script, s_path, _, s_env, _, what, _ in SCENARIOS.values():
        if s_script == name and s_env == env and s_path in ("/", path):
            return _filled(what, {})
    return None


def tag_request(tag, values):
    """What the task of Locust's locustfile.py tagged `tag` requests: the description of the first
    scenario of that tag, its {placeholders} from `values` (the locustfile's options given, as
    {"echo_bytes": "512"}). None when no scenario has the tag or a placeholder has no value."""
    what = next((s[5] for s in SCENARIOS.values() if s[4] == tag), None)
    return None if what is None else _filled(what, values)


def _filled(text, values):
    try:
        return text.format(**values)
    except KeyError:
        return None


def login_token(url, user=1):
    body = json.dumps({"user": {"email": "user%d@example.com" % user, "password": "password"}}).encode()
    try:
        r = client.request(url.rstrip("/") + "/api/users/login", "POST", body, timeout=10)
        if r.status == 200:
            return json.loads(r.body)["user"]["token"]
    except (OSError, ValueError, KeyError) as e:
        raise RunError("login as user%d failed: %s" % (user, e))
    raise RunError("login as user%d: HTTP %d %r" % (user, r.status, r.body[:200]))


def probe(url, scenario):
    """(whether the scenario's endpoint answers 2xx, what it answered)."""
    method, path, body = SCENARIOS[scenario][6]
    try:
        r = client.request(url.rstrip("/") + path, method, body, timeout=10)
    except OSError as e:
        return False, str(e)
    return 200 <= r.status < 300, "%s %s -> HTTP %d %s" % (method, path, r.status,
                                                          r.body[:120].decode("utf-8", "replace"))


def choose_scenario(args, url, spec):
    """The first of --scenario or the flag's scenarios whose endpoint answers; its description."""
    reasons = []
    for cand in [args.scenario] if args.scenario else spec["scenarios"]:
        ok, why = probe(url, cand)
        if ok:
            if reasons:
                log("scenario %s (skipped %s)" % (cand, "; ".join(reasons)))
            return cand
        reasons.append("%s: %s" % (cand, why))
    raise RunError("no usable load: " + "; ".join(reasons) + " (pick one with --scenario)")


def load_description(args, scenario):
    script, _, _, _, tag, what, _ = SCENARIOS[scenario]
    what = scenario_text(args, what)
    if args.probe:
        what += "; probe: wrk -t1 -c1 GET %s" % args.probe
    if args.tool == "s_time":
        desc = "openssl s_time -connect %s -reuse -tls%s -time %g -www %s (one connection at a time): %s" % (
            _host_port(args.tls_url), args.tls_version.replace(".", "_"), args.duration,
            scenario_text(args, SCENARIOS[scenario][1]), what)
    elif args.tool == "spray":
        desc = "loadscripts/spray --rate %g --duration %g --timeout %d (httperf, open model): %s" % (
            args.rate, args.duration, args.timeout, what)
    elif args.tool == "wrk":
        desc = "wrk -t%d -c%d -d%gs -s loadscripts/wrk/%s: %s" % (args.threads, args.connections,
                                                                    args.duration, script, what)
    else:
        desc = "locust -f loadscripts/locust/locustfile.py --tags %s -u %d -t %gs: %s" % (
            tag, args.connections, args.duration, what)
    if args.pin_db:
        desc += "; sutlab pinned to CPU %s, PostgreSQL to CPU %s" % tuple(args.pin_db.split(":"))
    return what, desc


def wrk_argv(args, url, scenario, duration):
    script, path, sargs = SCENARIOS[scenario][:3]
    return loadargv.wrk(url.rstrip("/") + scenario_text(args, path), args.connections, max(1, round(duration)),
                        args.threads, timeout=10, script=os.path.join(WRK_DIR, script),
                        script_args=[scenario_text(args, a) for a in sargs] if sargs else None)


def run_wrk(args, url, scenario, duration, token, outfile):
    env = dict(os.environ, WRK_SEED="1", **SCENARIOS[scenario][3])
    if token:
        env["TOKEN"] = token
    argv = wrk_argv(args, url, scenario, duration)
    out = run_tool(budget(args, argv), duration + 60, "wrk", env=env).output
    if outfile:
        with open(outfile, "w") as f:
            f.write("$ %s\n%s" % (" ".join(shlex.quote(a) for a in argv), out))
    try:
        return parsers.parse_wrk(out)
    except ValueError as e:
        raise RunError("wrk: %s: %s" % (e, out.strip()[-500:]))


def run_spray(args, url, scenario, duration, outfile):
    """The open model: --rate arrivals a second for `duration` seconds (loadscripts/spray), as a
    flip result; `success` is vegeta's ratio, errors every request without a 2xx/3xx."""
    try:
        host, port = spray.target(url)
    except ValueError as e:
        raise RunError("--tool spray %s" % e)
    path = scenario_text(args, SCENARIOS[scenario][1])
    seconds = max(1, int(round(duration)))
    with open(outfile, "w") as log_file:
        merged = spray.run(host, port, path, args.rate, seconds, args.timeout, log=log_file,
                           attacker=spray.attacker_for(host))
    s = spray.summary(merged, args.rate, seconds, args.timeout)
    with open(outfile, "a") as f:
        f.write(spray.text(s, seconds) + "\n")
    replies = sum(n for c, n in s["codes"].items() if c != 0)
    return {"rps": replies / s["duration_s"] if s["duration_s"] else 0.0, "requests": s["requests"],
            "p50": s["p50"], "p95": s["p95"], "p99": s["p99"], "success": s["success"],
            "errors": s["requests"] - int(round(s["success"] * s["requests"])), "duration_s": s["duration_s"],
            "bytes": None, "percentiles": None, "codes": s["codes"], "error_kinds": s["errors"]}


def _host_port(url):
    m = re.match(r"^https://([^:/]+)(?::(\d+))?/?$", url or "")
    if m is None:
        raise RunError("--tls-url wants https://HOST[:PORT], got %s" % url)
    return "%s:%s" % (m.group(1), m.group(2) or "443")


def run_s_time(args, scenario, duration, outfile):
    """New TLS connections, one at a time, for `duration` seconds, each asking for the scenario's
    path; with -reuse every connection after the first offers the session back, so the server's
    --tls-resumption decides between a resumed and a full handshake. rps = connections a second."""
    seconds = max(1, int(round(duration)))
    argv = loadargv.s_time(_host_port(args.tls_url), seconds, scenario_text(args, SCENARIOS[scenario][1]),
                           args.tls_version)
    out = run_tool(argv, seconds + 60, "openssl s_time").output
    if outfile:
        with open(outfile, "w") as f:
            f.write("$ %s\n%s" % (" ".join(argv), out))
    found = re.findall(r"(\d+) connections in ([\d.]+)s", out)
    if not found:
        raise RunError("openssl s_time printed no count: %s" % out.strip()[-500:])
    n = int(found[-1][0])
    return {"rps": n / float(seconds), "requests": n, "p50": None, "p95": None, "p99": None, "errors": 0,
            "duration_s": seconds, "bytes": None, "percentiles": None}


def run_locust(args, url, scenario, duration, outprefix):
    """A headless Locust run of the scenario's tag; the percentiles of its users' level from
    PREFIX_steps.csv (exact), else Locust's own (whole ms)."""
    tag = SCENARIOS[scenario][4]
    if not tag:
        raise RunError("scenario %s has no Locust task; use --tool wrk" % scenario)
    if not os.access(LOCUST, os.X_OK):
        raise RunError("%s not found: apt-get install python3-locust" % LOCUST)
    u = args.connections
    argv = loadargv.locust([LOCUSTFILE], url, u, max(1, round(duration)), outprefix, tags=[tag],
                           extra=["--step-settle", "1"], tags_first=True)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if "gzip" in scenario:
        env["SUTLAB_ACCEPT_ENCODING"] = "gzip"
    if args.load_workers > 1:
        argv = loadargv.locust_distributed(argv, [LOCUSTFILE], ["--step-settle", "1"], args.load_workers)
    out = run_tool(budget(args, argv), duration + 90, "locust", env=env).output
    with open(outprefix + ".log", "w") as f:
        f.write("$ %s\n%s" % (" ".join(shlex.quote(a) for a in argv), out))
    r = parsers.locust_aggregate(outprefix + "_stats.csv")
    r["duration_s"] = duration
    steps = outprefix + "_steps.csv"
    level = [s for s in parsers.locust_steps(steps) if s["users"] == u] if os.path.exists(steps) else []
    if level:
        r.update(rps=level[0]["rps"], p50=level[0]["p50_ms"], p95=level[0]["p95_ms"], p99=level[0]["p99_ms"])
    return r


def budget(args, argv):
    """argv on the load tier's cores (--load-cpus: taskset), or as it is."""
    return loadargv.taskset(args.load_cpus, argv)


def pin(target, pin_db, undo=False):
    """sutlab's threads on SERVER_CPU and PostgreSQL's process tree on DB_CPU (backends inherit the
    postmaster's mask, so connections made later are covered); undo gives both every CPU back."""
    if not pin_db:
        return
    server_cpu, db_cpu = ({int(c)} for c in pin_db.split(":"))
    if undo:
        server_cpu = db_cpu = set(range(os.cpu_count() or 1))
    pg = target.pg_pid()
    for pid in target.pids():
        procs.pin_tree(pid, server_cpu)
    if pg:
        procs.pin_tree(pg, db_cpu)
    if not undo:
        log("pinned sutlab to CPU %s and PostgreSQL to CPU %s" % tuple(pin_db.split(":"))
            + ("" if pg else " (PostgreSQL's pid unknown: not pinned)"))


class Probe:
    """A light wrk (-t1 -c1) on --probe PATH beside the measured run: the latency a cheap
    request sees next to the load."""

    def __init__(self, args, url, path_prefix):
        self.argv = loadargv.wrk(url.rstrip("/") + args.probe, 1, max(1, round(args.duration)), timeout=10,
                                 script=os.path.join(WRK_DIR, "plain.lua"))
        self.timeout = args.duration + 30
        self.out = open(path_prefix + ".probe.txt", "w+")
        self.out.write("$ %s\n" % " ".join(self.argv))
        self.out.flush()
        self.proc = subprocess.Popen(self.argv, stdout=self.out, stderr=subprocess.STDOUT)

    def wait(self):
        try:
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def result(self):
        """probe_p50, probe_p99, probe_errors (None when its output cannot be read)."""
        self.out.seek(0)
        try:
            pr = parsers.parse_wrk(self.out.read())
            return {"probe_p50": pr.get("p50"), "probe_p99": pr.get("p99"), "probe_errors": pr["errors"]}
        except ValueError:
            return {"probe_p50": None, "probe_p99": None, "probe_errors": None}
        finally:
            self.out.close()


def warm_up(args, target, scenario, label, base, token):
    # an open-model warm-up would leave its queue behind in the measured run
    if args.warmup > 0 and args.tool != "spray":
        log("warm-up %s (%g s)" % (label, args.warmup))
        if args.tool == "s_time":
            run_s_time(args, scenario, args.warmup, None)
        elif args.tool == "wrk":
            run_wrk(args, target.url, scenario, args.warmup, token, None)
        else:
            run_locust(args, target.url, scenario, args.warmup, base + "-warmup")


def run_load(args, url, scenario, base, token):
    """The measured load with the chosen tool, as a flip result."""
    if args.tool == "s_time":
        return run_s_time(args, scenario, args.duration, base + ".s_time.txt")
    if args.tool == "spray":
        return run_spray(args, url, scenario, args.duration, base + ".spray.txt")
    if args.tool == "wrk":
        return run_wrk(args, url, scenario, args.duration, token, base + ".wrk.txt")
    return run_locust(args, url, scenario, args.duration, base)


def measure(args, target, scenario, label, rnd, token):
    """One measured run: warm-up, then the load with the tiers (sutlab, PostgreSQL, the load
    tool) sampled as loadscripts/steps samples them, and the verdict of its rules."""
    base = os.path.join(target.out, "run%d-%s" % (rnd, label))
    warm_up(args, target, scenario, label, base, token)
    pids, pg = target.pids(), target.pg_pid()
    sampler = tiers.Sampler({"web": pids, "db": [pg] if pg else []}, load_rusage=True).start()
    log("measuring %s (%g s, %s)" % (label, args.duration, args.tool))
    side = Probe(args, target.url, base) if args.probe else None
    try:
        with progress.Ticker("measuring %s" % label, args.duration, sample=progress.server_rate(target.url)):
            r = run_load(args, target.url, scenario, base, token)
    finally:
        if side is not None:
            side.wait()
    usage, signals = sampler.stop()
    r.update(cpu_shares(r, usage))
    r["cpu_timeline"] = signals["timeline"]  # report.html's CPU per tier over time (panels.py)
    r["verdict"] = verdict.verdict({"level": 0, "rps": r["rps"], "tiers": usage,
                                    "outside_cores": signals["outside_cores"]})[0]
    if side is not None:
        r.update(side.result())
    r["build_flags"] = metrics.fetch_flags(target.url) or "(no sutlab_build_info)"
    log("%s: %.0f req/s, p50 %.3f ms, p95 %.3f ms, p99 %.3f ms, %d errors"
        % (label, r["rps"], r.get("p50") or 0, r.get("p95") or 0, r.get("p99") or 0, r.get("errors", 0)))
    return r


def cpu_shares(r, usage):
    """cpu_pct / cpu_us_req of the server and pg_pct / pg_us_req of PostgreSQL from the sampled
    tiers (tiers.Sampler); kb_req from the bytes. None where a tier was not measured."""
    n = max(1, r.get("requests") or 0)
    out = {k: None for k in ("cpu_pct", "cpu_us_req", "pg_pct", "pg_us_req")}
    for tier, pct, us in (("web", "cpu_pct", "cpu_us_req"), ("db", "pg_pct", "pg_us_req")):
        if tier in usage:
            out[pct] = 100.0 * usage[tier]["cores_used"]
            out[us] = usage[tier]["cpu_s"] * 1e6 / n
    out["kb_req"] = (r["bytes"] / n / 1024.0) if r.get("bytes") else None
    return out
