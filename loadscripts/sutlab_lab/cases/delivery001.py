"""The make-delivery write-up's machines and its scale model (001), shared by the cases that replay
it (redis-cache: its first step; delivery-scaleout: all of them).

Every tier ran on a machine of its own, the load generator included, and the write-up named that
one the limit once (nGrinder at 95 %, 001 L65): so the load tool is in the model too, with its own
CPU budget. Spring's CPU a request and nGrinder's (a JVM, far heavier a request than Locust) are
what this stack spent and sutlab's does not: both are fitted on the one row that gives every
tier's CPU with the load tool out of the way (step 4, 001 L79: the WAS at 160 % each, nGrinder at
70 % of 8 vCPU, 6,500 TPS, L75), less what sutlab and Locust spend themselves (calibrate.py).
MySQL's machine is not stated, so PostgreSQL is not budgeted: it runs at this machine's speed.
"""

from .common import load
from .scale import Fit, Machine, Topology

WAS, NGINX, REDIS, TOOL = 2, 1, 1, 4  # vCPU: 001 L21, L79, L21, L65
MACHINES = [Machine("web", "the WAS: Java + Spring (embedded Tomcat, 200 threads), 2vCPU 4GB; a second one "
                    "behind nginx from step 3", WAS, "001 L21, L47"),
            Machine("redis", "Redis (lettuce), 1vCPU 2GB", REDIS, "001 L21"),
            Machine("db", "MySQL, its machine not stated", None, "001 L47"),
            Machine("lb", "nginx (gzip), 1vCPU 2GB, then 2vCPU", NGINX, "001 L79, L85"),
            Machine("load", "nGrinder, 4vCPU 4GB, then 8vCPU 8GB", TOOL, "001 L65, L69")]
LOAD = ("nGrinder's virtual users, closed loop: 1,000, then 3,000 (001 L47, L111); think time, ramp and durations not "
        "stated (Little's law at L75, 1,000 / 6,500 = 154 ms against 155 ms, says about none): Locust's users "
        "with no think time, on the store listing of a random category (GET /stores?categoryId=), gzip accepted")
UNSTATED = ["MySQL's machine", "the script's request (its category, its headers)", "think time, ramp, duration",
            "how nginx balanced and its workers", "the time-outs of nGrinder and Tomcat"]
TOPOLOGY = Topology(MACHINES, LOAD, UNSTATED)
# the largest stage: two WAS (4), Redis (1), nginx of 2 vCPU, nGrinder of 8: 15 vCPU
S, WHY_S = 1.8 / 15, "1.8 of this machine's 2 cores for the 15 vCPU of its largest stage, the load generator " \
                     "included; 0.2 core left to the sampler and PostgreSQL"
L79 = dict(tps=6500, was=160, tool=70)  # the anchor: each WAS's CPU (% of one vCPU), nGrinder's (% of 8)


def _was(f, model):
    own = model.measured["own"].web_us
    spring = f["was"] / 100.0 / (f["tps"] / 2.0) * 1e6
    return max(0, int(round(spring - own))), "%g %% of a vCPU / (%d / 2 servers) TPS = %.0f us a request; less " \
        "sutlab's own %.0f us" % (f["was"], f["tps"], spring, own)


def _tool(f, model):
    own = model.measured["own"].load_us
    ngrinder = f["tool"] / 100.0 * 8 / f["tps"] * 1e6
    return max(0, int(round(ngrinder - own))), "%g %% x 8 vCPU / %d TPS = %.0f us a request; less Locust's own " \
        "%.0f us" % (f["tool"], f["tps"], ngrinder, own)


FITS = [Fit("--app-cpu-us", "001 L79", dict(tps=L79["tps"], was=L79["was"]), _was, " us"),
        Fit("--client-cpu-us", "001 L79", dict(tps=L79["tps"], tool=L79["tool"]), _tool, " us")]
PATH = "/stores?categoryId="


def locust(model, users, seconds, warmup, client=True):
    """The load: Locust's store listing at `users`, with the fitted client cost (none at full speed,
    nor without client: the calibration's own)."""
    return load("locust", users, seconds, warmup) + ["--tags", "stores", "--locust-arg=--client-cpu-us=%d" % (
        model.knob("--client-cpu-us") if client else 0)]


def knobs(model):
    return ["--app-cpu-us", str(model.knob("--app-cpu-us"))]
