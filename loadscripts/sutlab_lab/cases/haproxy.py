"""HAProxy's own sizing table (002): HAProxy on one core in front of sutlab (sutlab_lab/proxybench), each
measured ratio of its rates held once to the write-up's, its memory per connection and its
user/kernel split. The bottleneck part: the ratios its rules of thumb name (L61: keep-alive to
close, TLS keep-alive to resumed, resumed to full handshakes) and HAProxy's core, not wrk's or
sutlab's, the limit of every row; the profile: the other ratios, memory and CPU split. No scale
model: HAProxy is on one core as it was (L29), and a scale fitted on one row would turn each other
rate into its ratio to that row, which the ratios hold already."""

import os

from .. import proxybench as pb
from ..errors import RunError
from ..report import ratio
from . import checks as c, texts
from .common import loadavg

NAME = "haproxy"
TITLE = "HAProxy's sizing figures on one core"
WRITEUP, INVENTED = texts.load(__name__)  # haproxy.md

STEP_SECONDS, CONNECTIONS, BUSY = 5, 1000, 0.9
RATES = {"tcp": (83000, "002 L35"), "close": (82000, "002 L37"), "server-close": (97000, "002 L39"),
         "keep-alive": (243000, "002 L41"), "tls-keep-alive": (160000, "002 L45"),
         "tls-resumed": (13100, "002 L47"), "tls-full": (1300, "002 L49")}
PER_GB = {"plain": (20000, "002 L51"), "tls-client": (8000, "002 L53"), "tls-both": (5000, "002 L55")}
# each measured ratio once, at the table's figures (L35-L49); the three its rule of thumb states too (L61:
# its words beside them) are the bottleneck part
RATIOS = (("tcp", "close", None), ("close", "keep-alive", "1/3"), ("server-close", "keep-alive", None),
          ("tls-keep-alive", "keep-alive", None), ("tls-resumed", "tls-keep-alive", "1/10"),
          ("tls-full", "tls-resumed", "1/10"))
KERNEL = (("tcp", 85), ("close", 85), ("keep-alive", 70))  # 002 L3: TCP or close mode 85 %, keep-alive about 70 %


def run(ctx):
    sutlab = os.environ.get("SUTLAB_BIN") or os.path.join(ctx.repo, "build", "sutlab")
    if not os.access(sutlab, os.X_OK) or ctx.netns or ctx.load_cpus or ctx.load_workers:
        raise RunError("case haproxy places HAProxy, sutlab and wrk itself (no --netns, --load-*) and needs sutlab "
                       "at %s: meson setup build && ninja -C build, or set SUTLAB_BIN" % sutlab)
    before, seconds, n = loadavg(), ctx.seconds(STEP_SECONDS), 300 if ctx.quick else CONNECTIONS
    bench = pb.Bench(ctx.out, sutlab, log=ctx.note)
    try:
        bench.start()
        ctx.progress("case haproxy: rates, %d s a run" % seconds)
        m = {"rates": bench.rates(seconds)}
        ctx.progress("case haproxy: memory, %d idle connections a mode" % n)
        m["memory"] = {mode: bench.memory(mode, n) for mode in pb.MEMORY}
    finally:
        bench.stop()
    return ["Rates: each row twice (in order, then reversed), %d s a run; load average %s before, %s after. "
            "Absolute figures, not counted:" % (seconds, before, loadavg()),
            pb.rate_table(m["rates"], RATES), "Memory, %d idle connections per mode:" % n,
            pb.memory_table(m["memory"], PER_GB)], checks(m)


def checks(m):
    """The write-up's figures (002) against a measured {rates: {row: {rps, busy, kernel}},
    memory: {mode: {bytes}}}: its ratios (each once), memory ratios, CPU split, and the tier. No
    direction: the bands of the ratios that had one (keep-alive, TLS keep-alive, resumption, TLS's
    memory) lie wholly on the write-up's side of 1."""
    rps = {row: m["rates"].get(row, {}).get("rps") for row in RATES}
    mem = {mode: m["memory"].get(mode, {}).get("bytes") for mode in PER_GB}
    out = [c.ratio("%s / %s, per s" % (a, b), "%s, %s%s" % (RATES[a][1], RATES[b][1][4:], ", L61" if rule else ""),
                   RATES[a][0] / float(RATES[b][0]), ratio(rps[a], rps[b]),
                   writeup="{:,} / {:,}".format(RATES[a][0], RATES[b][0]) + (" (rule: %s)" % rule if rule else ""),
                   part="bottleneck" if rule else None) for a, b, rule in RATIOS]
    out += [c.ratio("memory per connection, %s / plain" % mode, "002 L51, %s" % PER_GB[mode][1][4:],
                    PER_GB["plain"][0] / float(PER_GB[mode][0]), ratio(mem[mode], mem["plain"]),
                    writeup="{:,} / {:,} per GB".format(PER_GB["plain"][0], PER_GB[mode][0]))
            for mode in ("tls-client", "tls-both")]
    out += [c.share("kernel share of HAProxy's CPU, %s" % row, "002 L3", fig, m["rates"].get(row, {}).get("kernel"))
            for row, fig in KERNEL]
    busy = {row: m["rates"].get(row, {}).get("busy") for row in RATES}
    return out + [
        c.Check("HAProxy's core busy in every row (the subject limits)", "its capacity on one core", "002 L27, L29",
                ", ".join("%s %s" % (r, "n/a" if b is None else "%.0f %%" % (100 * b)) for r, b in busy.items()),
                ">= %.0f %% each" % (100 * BUSY), all(b is not None and b >= BUSY for b in busy.values()), "tier"),
        c.set_by("HAProxy on one core", "002 L29", "1 process, 1 core", "taskset -c 0, nbthread 1"),
        c.set_by("object size", "002 L23", "small objects", "GET /health_check: 2 bytes")]
