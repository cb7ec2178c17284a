"""bench's static suite: sutlab next to an equivalently configured nginx on /status.txt and
/health_check, both servers on the server CPU, wrk on the other."""

import os
import subprocess

from .. import engine, report
from ..services import client, procs
from ..errors import RunError
from ..report import fmt
from ..services.server import ServerProcess
from .common import BENCH_D, NGINX, NOISE_NOTE, log, metered, print_head, run_wrk, sutlab_server

ENDPOINTS = {  # name -> path
    "status.txt": "/status.txt",
    "health_check": "/health_check",
}
SERVERS = ("sutlab", "nginx")
H2O_ENDPOINTS = ("status.txt",)  # h2o 2.2.5 answers inline only through mruby

H2O_CONF = """\
# written by loadscripts/bench: equivalent of 'sutlab serve --workers 1' (under root, h2o runs as
# nobody, as nginx's worker does; its log goes to its stderr, kept in the temp dir)
listen:
  host: 127.0.0.1
  port: {port}
num-threads: 1
hosts:
  default:
    paths:
      /:
        file.dir: {docroot}
"""

NGINX_CONF = """\
# written by loadscripts/bench: equivalent of 'sutlab serve --workers 1'
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;

events {{
    worker_connections 4096;
}}

http {{
    access_log off;
    sendfile {sendfile};
    keepalive_timeout 10s;
    keepalive_requests 100000;
    server_tokens off;

    types {{
        text/plain txt;
        text/html html htm;
        text/css css;
        application/javascript js;
        application/json json;
    }}
    default_type application/octet-stream;

    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;

    server {{
        listen 127.0.0.1:{port} backlog=1024;
        root {docroot};

        location = /health_check {{
            default_type text/plain;
            return 200 "ok";
        }}
    }}
}}
"""


PIPELINE_SCRIPT = os.path.join(BENCH_D, "pipeline.lua")

# wrk's share of its core above which a run measures wrk rather than the server
WRK_SATURATED = 95


def contenders(ctx, endpoint=None):
    """The servers measured (on one endpoint, or on any)."""
    h2o = ctx.args.h2o_bin and (endpoint is None or endpoint in H2O_ENDPOINTS)
    return SERVERS + (("h2o",) if h2o else ())


def pick_ports(ctx):
    ports = {}
    for name, wanted in (("sutlab", ctx.args.sutlab_port), ("nginx", ctx.args.nginx_port)):
        if wanted:
            if not procs.port_is_free(wanted):
                raise RunError("port %d for %s is in use on 127.0.0.1" % (wanted, name))
            ctx.taken.add(wanted)
            ports[name] = wanted
    for name in contenders(ctx):
        ports.setdefault(name, ctx.port())
    return ports


def nginx_server(ctx, port):
    """nginx with a config of its own in the temp dir, checked by nginx -t first."""
    ngx_dir = os.path.join(ctx.tmpdir, "nginx")
    os.makedirs(ngx_dir)
    conf = os.path.join(ngx_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(tmp=ngx_dir, port=port, docroot=ctx.docroot, sendfile=ctx.args.nginx_sendfile))
    # -e: the error log nginx uses before it has read the config (else /var/log/nginx/error.log)
    base = [NGINX, "-p", ngx_dir, "-c", conf, "-e", os.path.join(ngx_dir, "error.log"), "-g", "daemon off;"]
    check = subprocess.run(base + ["-t", "-q"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check.returncode != 0:
        raise RunError("nginx rejects the generated config %s:\n%s" % (conf, check.stdout.decode("utf-8", "replace")))
    return ServerProcess(["taskset", "-c", str(ctx.args.server_cpu)] + base, port,
                         os.path.join(ctx.tmpdir, "nginx.out"), name="nginx", die_with_parent=True)


def h2o_server(ctx, port):
    """The standalone h2o with a config of its own, checked by h2o -t first."""
    h2o_dir = os.path.join(ctx.tmpdir, "h2o")
    os.makedirs(h2o_dir)
    conf = os.path.join(h2o_dir, "h2o.conf")
    with open(conf, "w") as f:
        f.write(H2O_CONF.format(port=port, docroot=ctx.docroot))
    check = subprocess.run([ctx.args.h2o_bin, "-t", "-c", conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check.returncode != 0:
        raise RunError("h2o rejects the generated config %s:\n%s" % (conf, check.stdout.decode("utf-8", "replace")))
    return ServerProcess(["taskset", "-c", str(ctx.args.server_cpu), ctx.args.h2o_bin, "-c", conf], port,
                         os.path.join(ctx.tmpdir, "h2o.out"), name="h2o", ready_path="/status.txt",
                         die_with_parent=True)


def preflight(ctx, servers):
    """Both servers must answer 200 with the same body on every endpoint measured; the response
    sizes, for the report."""
    with open(os.path.join(ctx.docroot, "status.txt"), "rb") as f:
        expected = {"status.txt": f.read(), "health_check": b"ok"}
    sizes = []
    for ep in ctx.args.endpoints:
        for name in contenders(ctx, ep):
            r = client.request("http://127.0.0.1:%d%s" % (servers[name].port, ENDPOINTS[ep]), timeout=3)
            if r.status != 200:
                hint = ""
                if name == "nginx" and r.status == 403:
                    hint = " (nginx's worker runs as 'nobody' under root: is the docroot readable by it?)"
                raise RunError("%s: GET %s returned %s, expected 200%s"
                               % (name, ENDPOINTS[ep], r.status or "no valid response", hint))
            if r.body.strip() != expected[ep].strip():
                raise RunError("%s: GET %s returned body %r, expected %r"
                               % (name, ENDPOINTS[ep], r.body[:80], expected[ep][:80]))
            sizes.append("%s %s %d+%d" % (name, ENDPOINTS[ep], r.header_bytes, len(r.body)))
    return sizes


def measure_endpoint(ctx, servers, ep):
    """The contenders alternated in rounds on one endpoint: {server: [result per round]}."""
    path = ENDPOINTS[ep]
    args = ctx.args
    pipelined = {} if args.pipeline <= 1 else {"script": PIPELINE_SCRIPT, "script_args": [args.pipeline, path]}

    def contender(name):
        server = servers[name]

        def measure(seconds):
            return metered(lambda: run_wrk(args, server.port, path, seconds, **pipelined),
                           {"cpu_us_per_req": server}, [server], names={"cpu_us_per_req": name})
        return engine.Arm(name, measure)

    def progress(rnd, name, r):
        log("bench: %-13s round %d/%d %-6s %9.0f req/s  p50 %s ms  p99 %s ms  CPU %s us/req  wrk %s us/req%s"
            % (path, rnd, args.rounds, name, r["rps"], fmt(r["p50"], 3), fmt(r["p99"], 3),
               fmt(r["cpu_us_per_req"], 2), fmt(r["loadgen"], 2), "  errors %d" % r["errors"] if r["errors"] else ""))

    return engine.run_rounds([contender(n) for n in contenders(ctx, ep)], args.rounds, args.duration, args.warmup,
                             log=lambda m: log("bench: static: %s %s" % (m, path)), on_result=progress)


def run(ctx):
    """{"results": {endpoint: {server: [runs]}}, "sizes", "load_before", "load_after"}."""
    ports = pick_ports(ctx)
    servers = {"sutlab": sutlab_server(ctx, "sutlab", ports["sutlab"],
                                       ["--workers", "1", "--docroot", ctx.docroot])}
    try:
        servers["nginx"] = nginx_server(ctx, ports["nginx"])
        if "h2o" in ports:
            servers["h2o"] = h2o_server(ctx, ports["h2o"])
        for name in servers:
            log("bench: static: starting %s on 127.0.0.1:%d (CPU %d)" % (name, ports[name], ctx.args.server_cpu))
            servers[name].start()
        sizes = preflight(ctx, servers)
        load_before = procs.loadavg()
        results = {ep: measure_endpoint(ctx, servers, ep) for ep in ctx.args.endpoints}
    finally:
        for s in servers.values():
            s.stop()
    return {"results": results, "sizes": sizes, "load_before": load_before, "load_after": procs.loadavg()}


def print_report(ctx, res):
    args = ctx.args
    title = "static: sutlab vs nginx" + (" and h2o" if args.h2o_bin else "")
    print_head(title, ctx, res["load_before"], res["load_after"])
    print("run: wrk -t%d -c%d -d%ds --latency%s, %d round(s) alternated (%s, then the reverse), "
          "warmup %ds; servers on CPU %d, wrk on CPU %d; nginx sendfile %s; medians over rounds"
          % (args.threads, args.connections, args.duration,
             " -s pipeline.lua (%d requests per write)" % args.pipeline if args.pipeline > 1 else "",
             args.rounds, " ".join(contenders(ctx)), args.warmup, args.server_cpu, args.wrk_cpu, args.nginx_sendfile))
    print("response bytes (headers+body): " + ", ".join(res["sizes"]))
    print(NOISE_NOTE)
    print()
    rows, errors, saturated = [], 0, False
    for ep in args.endpoints:
        for name in contenders(ctx, ep):
            m = report.medians(res["results"][ep][name], ("rps", "p50", "p99", "cpu_us_per_req", "loadgen"))
            errors += m["errors"]
            wrk_busy = report.busy_percent(m["rps"], m["loadgen"])
            mark = " *" if wrk_busy is not None and wrk_busy >= WRK_SATURATED else ""
            saturated = saturated or bool(mark)
            rows.append((ENDPOINTS[ep], name, fmt(m["rps"], 0), fmt(m["p50"], 3), fmt(m["p99"], 3),
                         fmt(m["cpu_us_per_req"], 2), fmt(report.busy_percent(m["rps"], m["cpu_us_per_req"]), 0),
                         fmt(m["loadgen"], 2), fmt(wrk_busy, 0) + mark, str(m["errors"])))
    print(report.table(("endpoint", "server", "req/s", "p50 ms", "p99 ms", "CPU us/req", "server CPU %",
                        "wrk CPU us/req", "wrk CPU %", "errors"), rows))
    print("(CPU % = req/s x CPU us/req: the share of its core the server, or wrk, used during the run)")
    if saturated:
        print("* wrk used %d %% or more of its core: those req/s are the load generator's limit, not the "
              "server's; their ratios say little, compare CPU us/req" % WRK_SATURATED)
    print()
    print("ratios sutlab/nginx: ratio of the medians above; then the median of the per-round "
          "ratios, each round's sutlab/nginx pair in brackets (the pairs are the least "
          "disturbed by drift)")
    for ep in args.endpoints:
        s, n = res["results"][ep]["sutlab"], res["results"][ep]["nginx"]
        print("  %-14s req/s %s   CPU/req %s" % (ENDPOINTS[ep], report.round_ratios(s, n, "rps")[1],
                                                report.round_ratios(s, n, "cpu_us_per_req")[1]))
    for ep in args.endpoints:
        if "h2o" in contenders(ctx, ep):
            s, h = res["results"][ep]["sutlab"], res["results"][ep]["h2o"]
            print("  %-14s req/s %s   CPU/req %s   (sutlab/h2o)" % (
                ENDPOINTS[ep], report.round_ratios(s, h, "rps")[1], report.round_ratios(s, h, "cpu_us_per_req")[1]))
    if errors:
        print("warning: some wrk runs saw socket errors or non-2xx/3xx responses (errors column)")


def figures(ctx, res):
    """What bench --fail-if reads: sutlab's medians on each endpoint as the subject
    static.ENDPOINT (rps, p50, p99, errors as a share of its requests, ratio: its req/s over
    nginx's, the ratio of the medians)."""
    out = {}
    for ep in ctx.args.endpoints:
        s, n = res["results"][ep]["sutlab"], res["results"][ep]["nginx"]
        m = report.medians(s, ("rps", "p50", "p99"))
        requests = (m["rps"] or 0.0) * ctx.args.duration * len(s)
        out["static." + ep] = {"rps": m["rps"], "p50": m["p50"], "p99": m["p99"],
                               "errors": m["errors"] / requests if requests else None,
                               "ratio": report.round_ratios(s, n, "rps")[0]}
    return out
