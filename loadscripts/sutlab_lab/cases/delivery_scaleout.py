"""The make-delivery write-up's scale-out (001 L47-L111), each tier's CPU budget scaled down to 2 cores."""

import re

from ..errors import RunError
from ..report import fmt, ratio, table
from . import checks as c, texts
from .common import cpu_range, cpu_share, load, loadavg, num, row_at

NAME = "delivery-scaleout"
TITLE = "One cached server, then nginx and two: load tool, nginx, users"
WRITEUP, INVENTED = texts.load(__name__)  # delivery_scaleout.md

STEP_SECONDS, READ_TIMEOUT, READ, PATH, BASE = 5, 1, "read timeout", "/stores?categoryId=1", ["--workers", "2"]
LB, CACHE = ("--instances", "2", "--lb", "nginx", "--lb-cpus"), ["--redis-cache"]
# (label, lab up's options / None: as it is, sutlab's flags / None, hey's cores, threads, users; the write-up's)
STAGES = (("1 server, cache", (), CACHE, "0", 1, (1000, 2000, 3000), "1,800 range (L47)", "", "web (L53)"),
          ("1 server, no cache", None, ["--no-redis-cache"], "0", 1, (1000,), "1,000 range (L47)", "", ""),
          ("nginx + 2 servers", LB + ("1",), CACHE, "0", 1, (1000,), "4,152 (L59)", "55-60/63/95", "load (L65)"),
          ("load tool doubled", None, None, "0-1", 2, (1000,), "6,500 (L75)", "80/98/70", "nginx, retracted (L85)"),
          ("nginx doubled", LB + ("0-1",), CACHE, "0-1", 2, (1000,), "6,700 (L85)", "80/58/", ""),
          ("3,000 users", None, None, "0-1", 2, (3000,), "6,600 (L111)", "87//", "web (L111)"))


def run(ctx):
    if ctx.netns or ctx.load_cpus or ctx.load_workers:
        raise RunError("case %s gives each tier its cores itself (no --netns, --load-cpus, --load-workers)" % NAME)
    before, seconds, runs = loadavg(), ctx.seconds(STEP_SECONDS), {}
    try:
        for label, up, flags, cpus, threads, users, *_ in STAGES:
            if up is not None:
                ctx.up("small", BASE + flags, *up)
                if not runs:
                    ctx.lab("seed", "small")
            elif flags:
                ctx.lab("restart", "--", *(BASE + flags))
            runs[label] = ctx.steps(re.sub(r"\W+", "-", label), load("hey", users, seconds, path=PATH) + [
                "--read-timeout", str(READ_TIMEOUT), "--load-cpus", cpus, "--load-workers", str(threads)])
    finally:
        ctx.lab("down")
    return ["hey `GET %s`, %d s a step, read timeout %d s; load average %s before, %s after" % (
        PATH, seconds, READ_TIMEOUT, before, loadavg()), measured(runs)], checks(runs)


def measured(runs):
    pct = (lambda r, t: fmt(None if cpu_share(r, t) is None else 100 * cpu_share(r, t), 0))
    return table(["stage", "users", "TPS", "write-up", "mean ms", "errors", "web/lb/load CPU %", "write-up", "tier",
                  "write-up"],
                 [[s[0], "%d" % r["level"], fmt(r.get("rps"), 0), s[6], fmt(r.get("mean_ms"), 0), str(r.get("errors")),
                   "/".join(pct(r, t) for t in ("web", "lb", "load")), s[7], str(r.get("verdict")), s[8]]
                  for s in STAGES for r in runs.get(s[0], [])], framed=True)


def timeouts(row):
    """The row's `read timeout` errors (steps writes "kind:n kind:n", a kind may hold spaces)."""
    return sum(int(n) for k, n in re.findall(r"((?:\S+ )*?\S+):(\d+)", str(row.get("errors"))) if k == READ)


# (stage before, after, the write-up's ratio, its words, line); (stage, tier, its CPU: % of its vCPUs or a range, line)
RATIOS = ((0, 2, 4152 / 1800.0, "4,152 / 1,800 range", "001 L59"), (2, 3, 6500 / 4152.0, "6,500 / 4,152", "001 L75"),
          (3, 4, 6700 / 6500.0, "6,700 / 6,500", "001 L85"), (4, 5, 6600 / 6700.0, "6,600 / 6,700", "001 L111"))
SHARES = ((2, "load", 95, "001 L65"), (2, "lb", 63, "001 L65"), (2, "web", (55, 60), "001 L65"),
          (3, "web", 80, "001 L79"), (3, "lb", 98, "001 L79"), (3, "load", 70, "001 L79"), (4, "web", 80, "001 L85"),
          (4, "lb", 57.5, "001 L85"), (5, "web", (80, 94), "001 L111"))
TIERS = ((0, "web", "001 L53"), (2, "load", "001 L65"), (5, "web", "001 L111"))


def checks(runs):
    """The write-up's figures (001) against measured {stage: rows}: each stage at its most users (and 1,000)."""
    n, r = [s[0] for s in STAGES], [row_at(runs.get(s[0], []), s[5][-1]) for s in STAGES]
    tps = [num(x, "rps") for x in [row_at(runs.get(n[0], []), 1000)] + r[1:]]
    got, at, v = timeouts(r[0]), timeouts(row_at(runs.get(n[0], []), 1000)), [x.get("verdict") or "n/a" for x in r]
    outs = [c.ratio("cache / no cache, TPS", "001 L47", 1.8, ratio(tps[0], tps[1]), "1,800 range / 1,000 range",
                    1800 / 1999.0, 1899 / 1000.0),
            c.direction("the cache raises TPS", "001 L47", "1,000 range -> 1,800 range", tps[1], tps[0]),
            c.Check("read timeouts past 1,000 users", "surged", "001 L53", "%d at 1,000 -> %d at 3,000" % (at, got),
                    "> 0 and >= 10x", got > 0 and got >= 10 * at),
            c.direction("two servers behind nginx raise TPS", "001 L59", "1,800 range -> 4,152", tps[0], tps[2]),
            c.direction("the load tool doubled raises TPS", "001 L75", "4,152 -> 6,500", tps[2], tps[3]),
            c.Check("%s: not nginx the limit" % n[3], "nginx, retracted", "001 L79, L85", v[3], "not lb, not disturbed",
                    v[3] not in ("n/a", "lb", "disturbed"), "tier"),
            c.set_by("think time", "001 L75", "about 0 (Little's law)", "hey: closed users, no pause"),
            c.set_by("tier budgets", "001 L65-L79", "nGrinder 4->8, nginx 1->2 vCPU", "hey 0 -> 0-1, nginx 1 -> 0-1")]
    return outs + [c.ratio("%s / %s, TPS" % (n[b], n[a]), k, fig, ratio(tps[b], tps[a]), writeup=text)
                   for a, b, fig, text, k in RATIOS] + \
        [cpu_range("%s: %s CPU" % (n[i], t), cite, fig, cpu_share(r[i], t)) if isinstance(fig, tuple) else
         c.share("%s: %s CPU" % (n[i], t), cite, fig, cpu_share(r[i], t)) for i, t, fig, cite in SHARES] + \
        [c.tier("%s, %d users: the tier that limits" % (n[i], STAGES[i][5][-1]), k, t, [v[i]]) for i, t, k in TIERS]
