"""The Laravel blog write-up's machines and its scale model (000), shared by the cases that replay
its steps (count-pagination, missing-index, blog-scenario, php-fpm): the topology with its lines,
the scale factor, and the fits every one of them makes the same way, each on a row its case names.

The write-up's stack spent, per request, CPU that sutlab and PostgreSQL do not: PHP's on the web
server, and its database's (Eloquent's queries on an engine it does not name). A fit takes the
row's per-request cost, CPU share x vCPU / rps, less what sutlab spends itself (calibrate.py), and
gives it to --app-cpu-us (the web tier) or --db-work (the database, per statement).
"""

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


def app_cpu_fit(cite, rps, web):
    """--app-cpu-us: PHP's CPU a request on the row, less sutlab's own (calibrate.own)."""
    def compute(f, model):
        php, own = per_request_us(f["rps"], f["web"]), model.measured["own"].web_us
        return max(0, int(round(php - own))), "%s %% x %d vCPU / %d req/s = %.0f us; less sutlab's own %.0f us" % (
            _pct(f["web"]), VCPU, f["rps"], php, own)
    return Fit("--app-cpu-us", cite, dict(rps=rps, web=web), compute, " us")


def db_work_fit(cite, rps, db):
    """--db-work: the database's CPU a request on the row, less PostgreSQL's own, per statement,
    in units of the work loop (calibrate.work_speed)."""
    def compute(f, model):
        theirs, own, work = per_request_us(f["rps"], f["db"]), model.measured["own"], model.measured["work_us"]
        units = max(0, int(round((theirs - own.db_us) / own.statements / work)))
        return units, "%g %% x %d vCPU / %d req/s = %.0f us; less PostgreSQL's own %.0f us; over %.2f statements " \
                      "a request; %.1f us a unit of --db-work here" % (f["db"], VCPU, f["rps"], theirs, own.db_us,
                                                                      own.statements, work)
    return Fit("--db-work", cite, dict(rps=rps, db=db), compute)


def _pct(v):
    return "%g-%g" % v if isinstance(v, tuple) else "%g" % v
