"""bench's static suite: sutlab next to an equivalently configured nginx on /status.txt and
/health_check, both servers on the server CPU, wrk on the other."""

import os
import subprocess

from .. import client, driver, procs, report
from ..errors import RunError
from ..report import fmt
from ..server import ServerProcess
from .common import NGINX, NOISE_NOTE, log, metered, print_head, run_wrk, sutlab_server

ENDPOINTS = {  # name -> path
    "status.txt": "/status.txt",
    "health_check": "/health_check",
}
SERVERS = ("sutlab", "nginx")

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


def pick_ports(ctx):
    ports = {}
    for name, wanted in (("sutlab", ctx.args.sutlab_port), ("nginx", ctx.args.nginx_port)):
        if wanted:
            if not procs.port_is_free(wanted):
                raise RunError("port %d for %s is in use on 127.0.0.1" % (wanted, name))
            ctx.taken.add(wanted)
            ports[name] = wanted
    for name in SERVERS:
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


def preflight(ctx, servers):
    """Both servers must answer 200 with the same body on every endpoint measured; the response
    sizes, for the report."""
    with open(os.path.join(ctx.docroot, "status.txt"), "rb") as f:
        expected = {"status.txt": f.read(), "health_check": b"ok"}
    sizes = []
    for ep in ctx.args.endpoints:
        for name in SERVERS:
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


def measure_endpoint(ctx, servers, path):
    """sutlab and nginx alternated in rounds on one path: {server: [result per round]}."""
    args = ctx.args

    def contender(name):
        server = servers[name]

        def measure(seconds):
            return metered(lambda: run_wrk(args, server.port, path, seconds),
                           {"cpu_us_per_req": server}, [server])
        return driver.Contender(name, measure)

    def progress(rnd, name, r):
        log("bench: %-13s round %d/%d %-6s %9.0f req/s  p50 %s ms  p99 %s ms  CPU %s us/req%s"
            % (path, rnd, args.rounds, name, r["rps"], fmt(r["p50"], 3), fmt(r["p99"], 3),
               fmt(r["cpu_us_per_req"], 2), "  errors %d" % r["errors"] if r["errors"] else ""))

    return driver.run_rounds([contender(n) for n in SERVERS], args.rounds, args.duration, args.warmup,
                             log=lambda m: log("bench: static: %s %s" % (m, path)), on_result=progress)


def run(ctx):
    """{"results": {endpoint: {server: [runs]}}, "sizes", "load_before", "load_after"}."""
    ports = pick_ports(ctx)
    servers = {"sutlab": sutlab_server(ctx, "sutlab", ports["sutlab"],
                                       ["--workers", "1", "--docroot", ctx.docroot])}
    try:
        servers["nginx"] = nginx_server(ctx, ports["nginx"])
        for name in SERVERS:
            log("bench: static: starting %s on 127.0.0.1:%d (CPU %d)" % (name, ports[name], ctx.args.server_cpu))
            servers[name].start()
        sizes = preflight(ctx, servers)
        load_before = procs.loadavg()
        results = {ep: measure_endpoint(ctx, servers, ENDPOINTS[ep]) for ep in ctx.args.endpoints}
    finally:
        for s in servers.values():
            s.stop()
    return {"results": results, "sizes": sizes, "load_before": load_before, "load_after": procs.loadavg()}


def print_report(ctx, res):
    args = ctx.args
    print_head("static: sutlab vs nginx", ctx, res["load_before"], res["load_after"])
    print("run: wrk -t%d -c%d -d%ds --latency, %d round(s) alternated (sutlab nginx, then nginx sutlab), "
          "warmup %ds; servers on CPU %d, wrk on CPU %d; nginx sendfile %s; medians over rounds"
          % (args.threads, args.connections, args.duration, args.rounds, args.warmup,
             args.server_cpu, args.wrk_cpu, args.nginx_sendfile))
    print("response bytes (headers+body): " + ", ".join(res["sizes"]))
    print(NOISE_NOTE)
    print()
    rows, errors = [], 0
    for ep in args.endpoints:
        for name in SERVERS:
            m = report.medians(res["results"][ep][name], ("rps", "p50", "p99", "cpu_us_per_req"))
            errors += m["errors"]
            rows.append((ENDPOINTS[ep], name, fmt(m["rps"], 0), fmt(m["p50"], 3),
                         fmt(m["p99"], 3), fmt(m["cpu_us_per_req"], 2), str(m["errors"])))
    print(report.table(("endpoint", "server", "req/s", "p50 ms", "p99 ms", "CPU us/req", "errors"), rows))
    print()
    print("ratios sutlab/nginx: ratio of the medians above; then the median of the per-round "
          "ratios, each round's sutlab/nginx pair in brackets (the pairs are the least "
          "disturbed by drift)")
    for ep in args.endpoints:
        s, n = res["results"][ep]["sutlab"], res["results"][ep]["nginx"]
        print("  %-14s req/s %s   CPU/req %s" % (ENDPOINTS[ep], report.round_ratios(s, n, "rps")[1],
                                                report.round_ratios(s, n, "cpu_us_per_req")[1]))
    if errors:
        print("warning: some wrk runs saw socket errors or non-2xx/3xx responses (errors column)")
