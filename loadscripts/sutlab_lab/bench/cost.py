"""bench's cost suite: what one request of each kind costs sutlab, in instructions (callgrind) split
by object, and in system calls (strace), on one keep-alive connection with one worker.

Per kind, two runs of a fresh `sutlab serve --workers 1` beside the private PostgreSQL and Redis:
  1. under `valgrind --tool=callgrind`: WARMUP requests, `callgrind_control --zero`, N requests,
     `callgrind_control --dump`; the dump is read by sutlab_lab/callgrind.py, its self cost per object
     divided by N;
  2. without valgrind: WARMUP requests, `strace -f -c -p PID` attached (every thread), N
     requests, strace detached; its calls divided by N.
The client is one http.client connection, sequential, the same URL every time, every answer
checked (status 200, the body length of the first answer), so that the figures repeat.
"""

import glob
import http.client
import json
import os
import re
import signal
import subprocess
import time

from .. import callgrind, report
from ..services import metrics
from ..services import procs
from ..errors import RunError
from ..services.server import ServerProcess
from .common import log, print_head

DEFAULT_REQUESTS = 2000  # --cost-requests
WARMUP = 100          # requests before the counters are zeroed (and before strace attaches)
START_TIMEOUT = 120   # seconds for sutlab to answer /readyz under valgrind
LISTING = "/stores?categoryId=1"
KINDS = {  # name -> (what, path; None: read from the database)
    "health_check": ("GET /health_check", "/health_check"),
    "status.txt": ("GET /status.txt (static file)", "/status.txt"),
    "listing": ("GET %s, uncached: PostgreSQL" % LISTING, LISTING),
    "listing-cached": ("GET %s, --redis-cache --cache-local: the worker's copy" % LISTING, LISTING),
    "article": ("GET /api/articles/<slug>, the first article", None),
}
KIND_ALIASES = {"health_check": "health_check", "/health_check": "health_check", "health": "health_check",
                "status.txt": "status.txt", "/status.txt": "status.txt", "static": "status.txt",
                "listing": "listing", "stores": "listing", "listing-cached": "listing-cached",
                "cached": "listing-cached", "cache-local": "listing-cached", "article": "article"}
# object columns: (label, file name pattern); the executable is "sutlab", anything else "other"
GROUPS = (("libh2o", r"^libh2o"), ("libpq", r"^libpq\.so"), ("hiredis", r"^libhiredis\.so"),
          ("libc", r"^libc\.so"), ("libssl/crypto", r"^lib(ssl|crypto)\.so"),
          ("libjansson", r"^libjansson\.so"), ("libz", r"^libz\.so"), ("ld.so", r"^ld-linux"))
ALWAYS = ("sutlab", "libh2o", "libpq", "hiredis", "libc")  # shown even when zero
COLUMNS = ("sutlab",) + tuple(g for g, _ in GROUPS) + ("other",)
TOOLS = {"valgrind": "valgrind", "callgrind_control": "valgrind", "strace": "strace"}  # -> package


def group_of(obj, exe):
    """The column of a callgrind object path: sutlab for the executable `exe`, else GROUPS by
    file name, else other (valgrind's preloads, ???, the rest)."""
    if obj == exe or (obj and os.path.basename(obj) == os.path.basename(exe)):
        return "sutlab"
    name = os.path.basename(obj or "")
    for label, pattern in GROUPS:
        if re.search(pattern, name):
            return label
    return "other"


def split(profile, exe, n):
    """{column: Ir per request} of a callgrind Profile covering n requests."""
    out = dict.fromkeys(COLUMNS, 0.0)
    for obj, cost in profile.objects.items():
        out[group_of(obj, exe)] += cost / n
    return out


def kinds_arg(text):
    out = []
    for item in (x.strip() for x in text.split(",")):
        if item == "all":
            out += [k for k in KINDS if k not in out]
        elif item in KIND_ALIASES:
            if KIND_ALIASES[item] not in out:
                out.append(KIND_ALIASES[item])
        elif item:
            raise ValueError("unknown kind %r (accepts %s, all)" % (item, ", ".join(KINDS)))
    if not out:
        raise ValueError("no kind given")
    return [k for k in KINDS if k in out]


# ---------------------------------------------------------------------------------------------
# One kind, one server

def sutlab_argv(ctx, kind, port):
    svc = ctx.svc
    argv = [ctx.sutlab_bin, "serve", "--listen", "127.0.0.1:%d" % port, "--workers", "1",
            "--docroot", ctx.docroot, "--db-url", svc.db_url, "--redis-url", svc.redis_url]
    if kind == "listing-cached":
        argv += ["--redis-cache", "--cache-local", "--cache-ttl", "3600"]
    return argv + ctx.args.sutlab_arg


def start(ctx, name, argv, port):
    server = ServerProcess(argv, port, os.path.join(ctx.tmpdir, name + ".out"), name=name,
                           env=procs.clean_env(), ready_path="/readyz", start_timeout=START_TIMEOUT,
                           die_with_parent=True)
    return server.start()


class Client:
    """One keep-alive connection; every answer must be 200 with the first answer's body length."""

    def __init__(self, port, path):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.path, self.length = path, None

    def get(self):
        try:
            self.conn.request("GET", self.path)
            r = self.conn.getresponse()
            body = r.read()
        except (OSError, http.client.HTTPException) as e:
            raise RunError("GET %s: %s" % (self.path, e))
        if r.status != 200 or (self.length is not None and len(body) != self.length):
            raise RunError("GET %s answered %d with %d bytes, expected 200 with %s"
                           % (self.path, r.status, len(body), self.length))
        self.length = len(body)
        return r, body

    def run(self, n):
        for _ in range(n):
            self.get()

    def close(self):
        self.conn.close()


def check_first(ctx, kind, client):
    """The first answer of a kind is the right one: {"x_cache", "bytes"}."""
    r, body = client.get()
    xc = r.getheader("X-Cache")
    if kind == "status.txt":
        with open(os.path.join(ctx.docroot, "status.txt"), "rb") as f:
            if body != f.read():
                raise RunError("GET /status.txt is not the docroot's status.txt")
    elif kind in ("listing", "listing-cached"):
        doc = json.loads(body)
        if not isinstance(doc, list) or len(doc) != ctx.svc.cat1_rows:
            raise RunError("GET %s: expected a list of %d stores" % (LISTING, ctx.svc.cat1_rows))
        if kind == "listing" and xc != "BYPASS":
            raise RunError("GET %s without the cache answered X-Cache %r, expected BYPASS" % (LISTING, xc))
    elif kind == "article":
        slug = client.path.rsplit("/", 1)[1]
        if json.loads(body).get("article", {}).get("slug") != slug:
            raise RunError("GET %s is not the article %s" % (client.path, slug))
    return {"bytes": len(body), "x_cache": xc}


def local_hits(port):
    return metrics.scrape("http://127.0.0.1:%d" % port, timeout=60).value("cache_local_hits_total") or 0


def warm(ctx, kind, client, port):
    """The first answer checked, then WARMUP requests; for the cached listing the last half of
    them and every request after must be answered from the worker's copy: returns a function
    that checks it after the run."""
    first = check_first(ctx, kind, client)
    client.run(WARMUP // 2)
    if kind != "listing-cached":
        client.run(WARMUP - WARMUP // 2)
        return first, lambda n: None
    r, _ = client.get()
    if r.getheader("X-Cache") != "HIT":
        raise RunError("GET %s with --redis-cache answers X-Cache %r after warming, expected HIT"
                       % (LISTING, r.getheader("X-Cache")))
    before = local_hits(port)
    client.run(WARMUP - WARMUP // 2 - 1)

    def check(n):
        got = local_hits(port) - before
        if got != WARMUP - WARMUP // 2 - 1 + n:
            raise RunError("cache_local_hits_total grew by %d over %d requests: not every request "
                           "was a local hit" % (got, WARMUP - WARMUP // 2 - 1 + n))
    return first, check


def tool(argv, what):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=120)
    if p.returncode != 0:
        raise RunError("%s failed (status %d): %s\n%s" % (what, p.returncode, " ".join(argv),
                                                          p.stdout.decode("utf-8", "replace").strip()))


def measure_callgrind(ctx, kind, path, n):
    """{"split": {column: Ir/req}, "total", "top": [(Ir/req, object, function)], "file"}."""
    port = ctx.port()
    out = os.path.join(ctx.tmpdir, "%s.%%p.callgrind" % kind.replace("/", "_"))
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + sutlab_argv(ctx, kind, port)
    server = start(ctx, "callgrind-" + kind, argv, port)
    client = Client(port, path)
    try:
        first, check = warm(ctx, kind, client, port)
        tool(["callgrind_control", "--zero", str(server.pid)], "callgrind_control --zero")
        t0 = time.monotonic()
        client.run(n)
        window = time.monotonic() - t0
        tool(["callgrind_control", "--dump=" + kind, str(server.pid)], "callgrind_control --dump")
        check(n)
    finally:
        client.close()
        server.stop(timeout=60)
    dumps = sorted(glob.glob(out.replace("%p", str(server.pid)) + ".*"))
    if len(dumps) != 1:
        raise RunError("expected one callgrind dump of %s, found %s" % (kind, dumps or "none"))
    profile = callgrind.read(dumps[0])
    if profile.totals is not None and profile.totals != profile.total:
        raise RunError("%s: the costs in %s add up to %d, its totals line says %d"
                       % (kind, dumps[0], profile.total, profile.totals))
    return dict(first, split=split(profile, ctx.sutlab_bin, n), total=profile.total / n,
                top=[(c / n, group_of(ob, ctx.sutlab_bin), fn) for c, ob, fn in profile.top_functions(10)],
                file=dumps[0], window=window)


def wait_attached(pid, tracer, timeout=10):
    """Until every thread of pid is traced by tracer (/proc/PID/task/*/status TracerPid)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        tids = glob.glob("/proc/%d/task/*/status" % pid)
        got = []
        for s in tids:
            try:
                with open(s) as f:
                    got.append(re.search(r"^TracerPid:\s*(\d+)", f.read(), re.M).group(1))
            except (OSError, AttributeError):
                pass
        if tids and got == [str(tracer)] * len(tids):
            return
        time.sleep(0.01)
    raise RunError("strace did not attach to every thread of %d within %d s" % (pid, timeout))


def measure_strace(ctx, kind, path, n):
    """{"syscalls": {name: calls per request}} from strace -c -f attached for the N requests."""
    port = ctx.port()
    server = start(ctx, "strace-" + kind, sutlab_argv(ctx, kind, port), port)
    client = Client(port, path)
    out = os.path.join(ctx.tmpdir, "%s.strace" % kind)
    st = None
    try:
        warm(ctx, kind, client, port)
        st = subprocess.Popen(["strace", "-f", "-c", "-o", out, "-p", str(server.pid)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_attached(server.pid, st.pid)
        time.sleep(0.2)  # the attach's own interruption settled
        client.run(n)
        time.sleep(0.2)  # the last answer's syscalls returned
        st.send_signal(signal.SIGINT)
        _, err = st.communicate(timeout=30)
    finally:
        if st is not None and st.poll() is None:
            st.kill()
            st.wait()
        client.close()
        server.stop()
    try:
        with open(out) as f:
            calls = parse_strace_summary(f.read())
    except (OSError, ValueError) as e:
        raise RunError("strace -c summary of %s: %s\n%s" % (kind, e, err.decode("utf-8", "replace")))
    return {"syscalls": {k: v / n for k, v in calls.items()}, "strace_file": out}


def parse_strace_summary(text):
    """{syscall: calls} from the table `strace -c` prints (its total row left out)."""
    calls, seen = {}, False
    for line in text.splitlines():
        m = re.match(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
        if m:
            seen = True
            if m.group(2) != "total":
                calls[m.group(2)] = calls.get(m.group(2), 0) + int(m.group(1))
        elif re.match(r"^\s*% time\s+seconds", line):
            seen = True
    if not seen:
        raise ValueError("no strace -c table")
    return calls


# ---------------------------------------------------------------------------------------------
# The suite

def first_slug(ctx):
    slug = ctx.svc.sql("SELECT slug FROM articles ORDER BY id LIMIT 1")
    if not slug:
        raise RunError("the seeded database has no article")
    return slug


def keep_files(out_dir, kind, r):
    """The raw callgrind dump and strace summary of a kind copied into out_dir."""
    for src, suffix in ((r["file"], "callgrind.out"), (r["strace_file"], "strace.txt")):
        dst = os.path.join(out_dir, "%s.%s" % (kind, suffix))
        with open(src, "rb") as f, open(dst, "wb") as g:
            g.write(f.read())


def run(ctx):
    """{"results": {kind: measures}, "load_before", "load_after"}."""
    args = ctx.args
    if args.cost_out:
        try:
            os.makedirs(args.cost_out, exist_ok=True)
        except OSError as e:
            raise RunError("--cost-out %s: %s" % (args.cost_out, e))
    ctx.svc.seed(args.db_size)
    paths = {k: KINDS[k][1] or "/api/articles/" + first_slug(ctx) for k in args.cost_kinds}
    load_before = procs.loadavg()
    results = {}
    n = args.cost_requests
    for kind in args.cost_kinds:
        log("bench: cost: %-14s %d requests under callgrind" % (kind, n))
        t0 = time.monotonic()
        r = measure_callgrind(ctx, kind, paths[kind], n)
        log("bench: cost: %-14s %.0f Ir/req (%.1f s, %.2f s of requests); %d requests under strace"
            % (kind, r["total"], time.monotonic() - t0, r["window"], n))
        r.update(measure_strace(ctx, kind, paths[kind], n))
        r.update(path=paths[kind], requests=n)
        if args.cost_out:
            keep_files(args.cost_out, kind, r)
        results[kind] = r
    return {"results": results, "load_before": load_before, "load_after": procs.loadavg()}


def columns(results):
    """The object columns to print: ALWAYS, and the others where some kind has a cost."""
    return [c for c in COLUMNS if c in ALWAYS or any(r["split"][c] >= 0.5 for r in results.values())]


def syscall_line(calls, top=6):
    ranked = sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ["%s %.2f" % kv for kv in ranked[:top]]
    rest = sum(v for _, v in ranked[top:])
    if rest:
        shown.append("others %.2f" % rest)
    return "%.2f = %s" % (sum(calls.values()), ", ".join(shown) or "none")


def print_report(ctx, res):
    args, results = ctx.args, res["results"]
    print_head("cost: instructions and system calls per request", ctx, res["load_before"],
               res["load_after"], skews=False)
    print("run: per kind, a fresh sutlab serve --workers 1 (--db-url, --redis-url; listing-cached adds "
          "--redis-cache --cache-local --cache-ttl 3600), one keep-alive connection, %d warm-up requests, "
          "then %d requests: under valgrind --tool=callgrind between callgrind_control --zero and --dump; "
          "then again without valgrind under strace -f -c -p PID" % (WARMUP, args.cost_requests))
    print("database: --size %s; listing = %d stores%s" % (args.db_size, ctx.svc.cat1_rows, "".join(
        "; %s = GET %s" % (k, r["path"]) for k, r in results.items() if k == "article")))
    print()
    cols = columns(results)
    rows = [[k, str(r["requests"]), str(r["bytes"]), "%.2f" % r["window"], "%.0f" % r["total"]]
            + ["%.0f" % r["split"][c] for c in cols] + ["%.2f" % sum(r["syscalls"].values())]
            for k, r in results.items()]
    print(report.table(["kind", "requests", "body B", "window s", "Ir/req"] + cols + ["syscalls/req"], rows))
    print()
    print("Ir/req: instructions per request (callgrind Ir, self cost) = the sum of the object columns "
          "(each rounded); other = every object not named; window s: wall seconds of the requests under "
          "valgrind (time-driven work, about 10,000 Ir a second, is in the figures in proportion)")
    print("syscalls per request (strace -c -f, every thread):")
    for k, r in results.items():
        print("  %-14s %s" % (k, syscall_line(r["syscalls"])))
    print()
    print("top 10 functions by self cost, Ir per request (share of the kind's Ir/req):")
    for k, r in results.items():
        print("  %s (%s)" % (k, KINDS[k][0]))
        for c, group, fn in r["top"]:
            print("    %9.1f %5.1f %%  %-13s %s" % (c, 100.0 * c / r["total"], group, fn))
    if args.cost_out:
        print()
        print("raw files in %s: KIND.callgrind.out (callgrind_annotate FILE), KIND.strace.txt" % args.cost_out)
