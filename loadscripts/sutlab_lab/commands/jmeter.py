"""run: loadscripts/jmeter/rpc_echo.jmx, non-GUI, against a URL; the results and a summary.

  loadscripts/jmeter/run [--url http://127.0.0.1:8080] [--threads 100] [--rampup 100]
                         [--duration 120] [--payload 100] [--print] [--out DIR] [-- JMETER ARGS]

Each option is the plan's JMeter property of the same name (-Jthreads=... -Jprint=true); what
follows `--` goes to JMeter as it is (-Jname=value, -L...). JMeter is `jmeter` on PATH, or --jmeter
PATH. A JMeter 5 runs the plan as it is. Debian's JMeter 2.13 (apt-get install jmeter jmeter-http
groovy) cannot load any plan (XStream allow-list): it is started through jmeter2-xstream.bsh, with
Debian's Groovy (the plan's post-processor is JSR223/groovy) on its class path.

DIR (default var/jmeter/TIME) gets results.jtl (CSV, a header line, one row per sample),
jmeter.log, and jmeter.out: JMeter's stdout (its `summary` lines every 5 s and, with --print,
one `rpc_echo STATUS BODY` line per response). Printed at the end: samples, errors by response
code, req/s over the run and after the ramp-up, mean/p50/p95/p99 ms (nearest rank), printed
lines, and where the files are.
Exit status: 0 run with samples, 1 JMeter ran no sample or failed, 2 bad usage or no JMeter.
"""

import argparse
import collections
import csv
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import zipfile

from ..cli import Parser
from .. import LOADSCRIPTS, REPO, stats

HERE = os.path.join(LOADSCRIPTS, "jmeter")
PLAN = os.path.join(HERE, "rpc_echo.jmx")
LAUNCHER = os.path.join(HERE, "jmeter2-xstream.bsh")
DEBIAN_JARS = ("/usr/share/java/bsh.jar", "/usr/share/java/groovy-all.jar")
PRINT_PREFIX = "rpc_echo "  # the plan's post-processor prints "rpc_echo STATUS BODY"


class Usage(Exception):
    pass


def parse_args(argv):
    p = Parser(prog="loadscripts/jmeter/run", description=__doc__.split("\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:8080", help="http://HOST:PORT of sutlab")
    p.add_argument("--threads", type=int, default=100)
    p.add_argument("--rampup", type=int, default=100, help="seconds to start every thread")
    p.add_argument("--duration", type=int, default=120, help="seconds of the run, ramp-up included")
    p.add_argument("--payload", type=int, default=100, help="characters of the payload string")
    p.add_argument("--print", action="store_true", help="print every response (-Jprint=true)")
    p.add_argument("--out", help="directory for the results (default var/jmeter/TIME)")
    p.add_argument("--plan", default=PLAN)
    p.add_argument("--jmeter", help="the jmeter command (default: jmeter on PATH)")
    p.add_argument("extra", nargs="*", help="after --: more JMeter arguments")
    a = p.parse_args(argv)
    if a.threads < 1 or a.rampup < 0 or a.duration < 1 or a.payload < 0:
        p.error("--threads and --duration must be 1 or more, --rampup and --payload 0 or more")
    u = urllib.parse.urlsplit(a.url)
    if u.scheme != "http" or not u.hostname:
        p.error("--url must be http://HOST[:PORT] (the plan speaks plain HTTP)")
    a.host, a.port = u.hostname, u.port or 80
    return a


def jmeter_home_and_version(cmd):
    """(home, version) of a jmeter command: its bin/ApacheJMeter.jar's manifest, the home found
    next to the script (a JMeter 5 tarball) or in Debian's wrapper (-Djmeter.home=...)."""
    path = shutil.which(cmd)
    if not path:
        raise Usage("no JMeter: `%s` is not on PATH (apt-get install jmeter jmeter-http groovy, "
                    "or --jmeter PATH of a JMeter 5)" % cmd)
    real = os.path.realpath(path)
    home = None
    if os.path.exists(os.path.join(os.path.dirname(real), "ApacheJMeter.jar")):
        home = os.path.dirname(os.path.dirname(real))
    else:
        try:
            with open(real, errors="replace") as f:
                m = re.search(r"-Djmeter\.home=(\S+)", f.read(65536))
            home = m.group(1) if m else None
        except OSError:
            pass
    if not home:
        raise Usage("cannot tell where %s keeps ApacheJMeter.jar" % real)
    jar = os.path.join(home, "bin", "ApacheJMeter.jar")
    try:
        with zipfile.ZipFile(jar) as z:
            manifest = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        raise Usage("cannot read %s: %s" % (jar, e))
    m = re.search(r"^Implementation-Version:\s*(\S+)", manifest, re.M)
    return path, home, (m.group(1) if m else "?")


def jmeter_argv(a, out):
    path, home, version = jmeter_home_and_version(a.jmeter or "jmeter")
    args = ["-n", "-t", a.plan, "-l", os.path.join(out, "results.jtl"),
            "-j", os.path.join(out, "jmeter.log"),
            "-Jthreads=%d" % a.threads, "-Jrampup=%d" % a.rampup, "-Jduration=%d" % a.duration,
            "-Jhost=%s" % a.host, "-Jport=%d" % a.port, "-Jpayload=%d" % a.payload,
            "-Jprint=%s" % ("true" if a.print else "false"),
            "-Jjmeter.save.saveservice.output_format=csv",
            "-Jjmeter.save.saveservice.print_field_names=true",
            "-Jsummariser.interval=5"] + a.extra
    if not version.startswith("2."):
        return [path] + args, version
    missing = [j for j in DEBIAN_JARS if not os.path.exists(j)]
    if missing:
        raise Usage("JMeter %s needs %s (apt-get install groovy)" % (version, ", ".join(missing)))
    java = shutil.which("java")
    if not java:
        raise Usage("no java on PATH")
    cp = ":".join((os.path.join(home, "bin", "ApacheJMeter.jar"),) + DEBIAN_JARS)
    return [java, "-Djmeter.home=" + home, "-cp", cp, "bsh.Interpreter", LAUNCHER] + args, version


def read_jtl(path):
    """The samples of a CSV JTL with its header: (start ms, elapsed ms, code, success) each."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                rows.append((int(r["timeStamp"]), int(r["elapsed"]), r["responseCode"],
                             r["success"] == "true"))
            except (KeyError, TypeError, ValueError):
                continue
    return rows


def summarize(rows, rampup):
    """Figures of a run's samples (timestamps as JMeter's default writes them, at the start)."""
    first = min(t for t, _, _, _ in rows)
    last = max(t + e for t, e, _, _ in rows)
    span = max(last - first, 1) / 1000.0
    steady = [r for r in rows if r[0] >= first + rampup * 1000]
    steady_span = (last - (first + rampup * 1000)) / 1000.0
    elapsed = sorted(e for _, e, _, _ in rows)
    errors = collections.Counter(c for _, _, c, ok in rows if not ok)
    return {
        "samples": len(rows), "errors": sum(errors.values()), "by_code": dict(errors),
        "rps": len(rows) / span, "span": span,
        "steady_rps": len(steady) / steady_span if rampup and steady and steady_span >= 1 else None,
        "mean": sum(elapsed) / len(elapsed),
        "p50": stats.percentile(elapsed, 50), "p95": stats.percentile(elapsed, 95),
        "p99": stats.percentile(elapsed, 99),
    }


def count_printed(path):
    n = 0
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(PRINT_PREFIX.encode()):
                n += 1
    return n


def main(argv):
    a = parse_args(argv)
    out = a.out or os.path.join(REPO, "var", "jmeter", time.strftime("%Y%m%d-%H%M%S"))
    try:
        os.makedirs(out, exist_ok=True)
        cmd, version = jmeter_argv(a, out)
    except (Usage, OSError) as e:
        print("jmeter/run: %s" % e, file=sys.stderr)
        return 2
    jtl = os.path.join(out, "results.jtl")
    for name in ("results.jtl", "jmeter.log"):  # JMeter appends to an existing JTL
        if os.path.exists(os.path.join(out, name)):
            os.unlink(os.path.join(out, name))
    print("JMeter %s: %d threads, ramp-up %d s, %d s, payload %d, print %s, %s:%d"
          % (version, a.threads, a.rampup, a.duration, a.payload,
             "on" if a.print else "off", a.host, a.port), flush=True)
    with open(os.path.join(out, "jmeter.out"), "wb") as stdout:
        try:
            rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=subprocess.STDOUT, timeout=a.duration + 120).returncode
        except subprocess.TimeoutExpired:
            print("jmeter/run: JMeter still running %d s after the run's end; killed"
                  % 120, file=sys.stderr)
            return 1
    rows = read_jtl(jtl) if os.path.exists(jtl) else []
    if not rows:
        # JMeter 2.13 exits 0 even when the plan does not load: its log says why
        why = []
        for name in ("jmeter.log", "jmeter.out"):
            p = os.path.join(out, name)
            if os.path.exists(p):
                with open(p, errors="replace") as f:
                    why += [l.rstrip() for l in f if "ERROR" in l or "Error" in l][:5]
        print("jmeter/run: no sample in %s (JMeter exit %d)%s"
              % (jtl, rc, "".join("\n  " + w for w in why)), file=sys.stderr)
        return 1
    s = summarize(rows, a.rampup)
    print("samples %d, errors %d%s" % (s["samples"], s["errors"],
          "".join(" %s:%d" % kv for kv in sorted(s["by_code"].items()))))
    print("req/s %.1f over %.1f s%s" % (s["rps"], s["span"], "" if s["steady_rps"] is None
          else ", %.1f after the ramp-up" % s["steady_rps"]))
    print("ms mean %.1f p50 %d p95 %d p99 %d" % (s["mean"], s["p50"], s["p95"], s["p99"]))
    print("printed lines %d" % count_printed(os.path.join(out, "jmeter.out")))
    print("results: %s\nstdout: %s\nlog: %s" % (jtl, os.path.join(out, "jmeter.out"),
                                               os.path.join(out, "jmeter.log")))
    return 0 if rc == 0 else 1
