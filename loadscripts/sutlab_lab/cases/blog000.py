"""The Laravel blog write-up's machines and its scale model (000), shared by the cases that replay
its steps (count-pagination, missing-index, blog-scenario, php-fpm): the topology with its lines,
the scale factor, and the fits.

The write-up's stack spent, per request, CPU that sutlab and PostgreSQL do not: PHP's on the web
server, and its database's (Eloquent's queries on an engine it does not name). A fit takes the
row's per-request cost, CPU share x vCPU / rps, less what sutlab spends itself (calibrate.py), and
gives it to --app-cpu-us (the web tier) or --db-work (the database, per statement).

The scenario's cases share one model (FITS): fitted on the scenario's row at 8 users without the
count (000 L180: the think time, the web's and the database's costs) and the data size on the row
at 8 users with it (L168: what the count added a request); every other row of the scenario is a
prediction. The anchors ran before the users' name index (L183), so the model's calibration does
too (prepare), and each case says whether its runs have the index.
"""

import math

from .. import dbindex
from . import calibrate
from .common import load
from .scale import Fit, Machine, Topology

VCPU = 2  # the m5.large (000 L22) and, by the "two levels" of L229, a db.m5.large
WEB = Machine("web", "m5.large: nginx + php-fpm (Laravel, OPcache); pm.max_children 8 for the scenario", VCPU,
              "000 L22, L152")
DB = Machine("db", "the database server (RDS by its db. names, engine not stated); db.m5.large before the two "
             "steps up to db.m5.2xlarge (inference)", VCPU, "000 L229")
LOAD = Machine("load", "the attack server (ab, Locust), type not stated", None, "000 L9")
S, WHY_S = 0.35, "1.4 of this machine's 2 cores for the web's and the database's 4 vCPU; 0.6 core left to Locust " \
                 "and the sampler, which ran on a machine of their own"
UNSTATED = ["the database engine and its data size", "the scenario's requests, weights and think time",
            "the page size", "how CPU was sampled (the ranges such as 8-30 %)"]


def topology(load):
    return Topology([WEB, DB, LOAD], load, UNSTATED)


def per_request_us(rps, pct, vcpu=VCPU):
    """CPU µs a request of a row: its share of the tier's vCPUs over its rate. A range (8, 30) is
    read at its middle."""
    pct = sum(pct) / 2.0 if isinstance(pct, tuple) else pct
    return pct / 100.0 * vcpu / rps * 1e6


def think_fit(cite, users, rps, ms):
    """The think time of a closed-loop row: users / rps - latency (000 D-L), in the write-up's clock."""
    def compute(f, model):
        z = f["users"] / f["rps"] - f["ms"] / 1000.0
        return z, "%d / %d - %.3f s = %.3f s a request (000 D-L); here %.3f s (/ s)" % (
            f["users"], f["rps"], f["ms"] / 1000.0, z, model.think(z))
    return Fit("think time", cite, dict(users=users, rps=rps, ms=ms), compute, " s")


def app_cpu_fit(cite, rps, web, knob="--app-cpu-us"):
    """--app-cpu-us: PHP's CPU a request on the row, less sutlab's own (calibrate.own)."""
    def compute(f, model):
        php, own = per_request_us(f["rps"], f["web"]), model.measured["own"].web_us
        return max(0, int(round(php - own))), "%s %% x %d vCPU / %d req/s = %.0f us; less sutlab's own %.0f us" % (
            _pct(f["web"]), VCPU, f["rps"], php, own)
    return Fit(knob, cite, dict(rps=rps, web=web), compute, " us")


def db_work_fit(cite, rps, db):
    """--db-work: the database's CPU a request on the row, less PostgreSQL's own, per statement,
    in units of the work loop (calibrate.work_speed, then calibrate.on_anchor)."""
    def compute(f, model):
        theirs, own, work = per_request_us(f["rps"], f["db"]), model.measured["own"], model.measured["work_us"]
        units = max(0, int(round((theirs - (own.db_us or 0)) / max(own.statements, 1e-9) / work)))
        return units, "%g %% x %d vCPU / %d req/s = %.0f us; less PostgreSQL's own %s; over %.2f statements " \
                      "a request; %.1f us a unit of --db-work here, %s" % (
                          f["db"], VCPU, f["rps"], theirs, "(not read: not the lab's database)" if own.db_us is None
                          else "%.0f us" % own.db_us, own.statements, work,
                          model.measured.get("work_from", "the fastest of five on the idle database"))
    return Fit("--db-work", cite, dict(rps=rps, db=db), compute)


def _pct(v):
    return "%g-%g" % v if isinstance(v, tuple) else "%g" % v


# the anchors: the scenario at 8 users with the count (000 L168) and without it (L180)
L168, L180 = dict(rps=17, ms=98, web=(8, 30), db=47), dict(rps=19, ms=63, web=(8, 30), db=25)
SIZES = (("small", 10000), ("medium", 100000), ("large", 1000000))
INDEX_ROUTE = "/api/articles"
SCENARIO = ["--scenario", "blog-writeup", "--locust-arg=--fixture-users=1000"]
LOAD_WORDS = ("Locust `scenario.py` straight to the web server (000 L165); its mix, think time and durations not "
        "published: the lab's `blog-writeup` scenario (a third of its requests the index page), the think "
        "time fitted")


def _size(f, model):
    """The fixture size whose count(*) costs, per index page, nearest (by ratio) what the count added
    to a request's database CPU on the anchor row over the count-off one (L180's, beside it)."""
    base = per_request_us(L180["rps"], L180["db"])
    added = per_request_us(f["rps"], f["db"]) - base
    small = model.measured.get("own_small", model.measured["own"])  # the calibration the size came from
    share, per_row = small.routes.get(INDEX_ROUTE, 0.0), model.measured["count_us_per_row"]
    rows = added / share / per_row if share and added > 0 else 1.0
    size = min(SIZES, key=lambda s: abs(math.log(s[1] / rows)))[0]
    return size, "%.0f us - %.0f us (L180) = %.0f us a request; %.0f %% of the requests are the index: %.0f us a " \
                 "count; %.3f us a row here: %.0f rows; nearest: %s" % (
                     added + base, base, added, 100 * share, added / share if share else 0, per_row, rows, size)


THINK = think_fit("000 L180", 8, L180["rps"], L180["ms"])
FITS = [THINK, app_cpu_fit("000 L180", L180["rps"], L180["web"]), db_work_fit("000 L180", L180["rps"], L180["db"]),
        Fit("size", "000 L168", dict(rps=L168["rps"], db=L168["db"]), _size)]
BASE = ["--db-mode", "sync", "--workers", "8"]  # php-fpm's 8 children for the scenario (000 L152)


def think_args(model):
    """Locust's think time for the scenario: the fitted one, in the model's clock."""
    return ["--locust-arg=--think-time=%.3f" % model.think(THINK.value(model))]


def prepare(ctx, model, flags, seconds, warmup):
    """The lab up at `small` with BASE + flags; at full speed that is all ([]). Otherwise the model's
    calibration, as its anchors ran: the count off, the name index dropped, 8 users, full speed and
    the write-up's think time; then the fitted size seeded (small for a quick look) and, at another
    size, a second calibration there: PostgreSQL's own cost a request grows with the data (without
    the name index, a profile scans every user), and the cost fits take what sutlab and PostgreSQL
    spend at the size the runs use (the size itself stays the first calibration's); last, the
    --db-work unit read on the anchor L180 itself, under its budget (calibrate.on_anchor). Returns
    the knobs, [--app-cpu-us N, --db-work K], for the runs' flags."""
    ctx.up("small", BASE + flags)
    ctx.lab("seed", "small")
    if model.full:
        return []
    ctx.lab("restart", "--", *(BASE + ["--no-count-pagination"]))
    args = load("locust", [8], seconds, warmup) + SCENARIO + ["--locust-arg=--think-time=%.3f" % THINK.value(model)]
    with dbindex.dropped(ctx.run, dbindex.USERS_BY_NAME):
        calibrate.measure(ctx, model, args)
    size = model.knob("size")
    if not ctx.quick and size != "small":
        ctx.lab("seed", size)  # the seed builds every index: the name index is dropped again after it
        model.measured["own_small"] = model.measured["own"]
        with dbindex.dropped(ctx.run, dbindex.USERS_BY_NAME):
            calibrate.measure(ctx, model, args, database=False, label="calibrate-" + size)
    anchor = load("locust", [8], seconds, warmup) + SCENARIO + think_args(model)
    with dbindex.dropped(ctx.run, dbindex.USERS_BY_NAME):
        calibrate.on_anchor(ctx, model, "anchor-L180", lambda: ctx.lab(
            "restart", "--", *(BASE + ["--no-count-pagination"] + _knobs(model))), anchor)
    return _knobs(model)


def _knobs(model):
    return ["--app-cpu-us", str(model.knob("--app-cpu-us")), "--db-work", str(model.knob("--db-work"))]
