"""What sutlab spends of itself, measured before a scale model's fits (scale.py) take it from the
write-up's costs: the fitted knobs are the difference between what the write-up's stack spent per
request and what sutlab and PostgreSQL spend here, so they are measured, not guessed.

  measure(ctx, model, args)     all of these, into model.measured (own: the stage `calibrate`, or label)
  own(ctx, label, steps_args)   one stage at full speed (no budget, no knob): sutlab's CPU, the
                                database's CPU and the app's statements per app request, and the
                                share of the requests on each route (Own)
  work_speed()                  µs of PostgreSQL's CPU per unit of --db-work on this machine, idle
  on_anchor(ctx, model, ...)    that unit read again on the fit's own row, under its budget
  count_us_per_row()            what count(*) over the articles costs a row here

Each is printed in the fits' arithmetic, so a reader sees what was measured and what was fitted.
"""

import os
import re
import subprocess

from ..engine import targets
from ..errors import RunError
from ..services import metrics
from .common import num

PSQL = "/usr/lib/postgresql/15/bin/psql"
ASIDE = ("/metrics", "/health_check", "/readyz", "static", "unmatched")


class Own:
    """sutlab's own costs per app request over one stage (µs of CPU), its statements per app
    request, each route's share of the app requests, and the load tool's own CPU a request."""

    def __init__(self, web_us, db_us, statements, routes, rps, load_us=0.0):
        self.web_us, self.db_us, self.statements, self.routes, self.rps = web_us, db_us, statements, routes, rps
        self.load_us = load_us

    def __repr__(self):
        return "Own(web %.0f us, db %s, load tool %.0f us, %.2f statements a request, %.0f req/s)" % (
            self.web_us, "not read" if self.db_us is None else "%.0f us" % self.db_us, self.load_us, self.statements,
            self.rps)


def _counts(url):
    m = metrics.scrape(url, check=False)
    routes = {}
    for labels, v in m.samples("http_requests_total"):
        if labels.get("route") not in ASIDE:
            routes[labels["route"]] = routes.get(labels["route"], 0.0) + v
    return routes, m.total("db_query_duration_seconds_count") - sum(
        v for labels, v in m.samples("db_query_duration_seconds_count") if labels.get("query") == "db_work")


def own(ctx, label, steps_args, url):
    """One stage of steps_args at full speed: its last level's costs per app request (Own)."""
    routes0, statements0 = _counts(url)
    rows = ctx.steps(label, steps_args, budgeted=False)
    routes1, statements1 = _counts(url)
    requests = sum(routes1.values()) - sum(routes0.values())
    r = rows[-1]
    rps, web, db, tool = (num(r, k) for k in ("rps", "cpu_web_pct", "cpu_db_pct", "cpu_load_pct"))
    if not rps or web is None or requests <= 0:
        raise RunError("calibration %s measured nothing (req/s %s, app requests %s)" % (label, rps, requests))
    shares = {k: (v - routes0.get(k, 0.0)) / requests for k, v in routes1.items()}
    # db None: a database the lab does not run (SUTLAB_LAB_DB_URL), whose CPU the sampler cannot read
    return Own(1e4 * web / rps, None if db is None else 1e4 * db / rps, (statements1 - statements0) / requests,
               shares, rps, 1e4 * (tool or 0.0) / rps)


def _psql_times(sql, times=5, db_url=None):
    """The shortest of `times` runs of sql in one psql session, in ms (psql's \\timing)."""
    argv = [PSQL, "-X", "-q", "-d", db_url or targets.lab_db_url(), "-c", "\\timing on"] + ["-c", sql] * times
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    ms = [float(x) for x in re.findall(r"^Time: ([\d.]+) ms", out.stdout, re.M)]
    if out.returncode != 0 or len(ms) != times:
        raise RunError("psql %r: %s" % (sql, out.stdout.strip()[-500:]))
    return min(ms)


def work_speed(units=200, db_url=None):
    """µs of the database's CPU per --db-work unit: sutlab_work(units) timed on the idle database
    (the shortest of five: wall time is CPU time on an idle core), divided by units."""
    return 1000.0 * _psql_times("SELECT sutlab_work(%d)" % units, db_url=db_url) / units


def anchor_unit(units, statements, own_db_us, db_pct, rps):
    """µs a --db-work unit cost on a run of the anchor row: the database's CPU a request there
    (db_pct % of a core over rps req/s), less PostgreSQL's own a request (own_db_us, at full
    speed), over the units a request carried (units a statement x statements). None when the run
    cannot say: no work carried, the database's CPU not read, or nothing beyond its own."""
    if not units or not rps or db_pct is None or own_db_us is None or statements <= 0:
        return None
    work = 1e4 * db_pct / rps - own_db_us
    return work / (units * statements) if work > 0 else None


def on_anchor(ctx, model, label, restart, steps_args, rounds=2):
    """model.measured["work_us"] read on the anchor row itself, under its budget, `rounds` times.
    work_speed's fastest of five on an idle database is a unit's best case; under the runs'
    budgets, with both cores busy, a unit cost 1.5-2x that (the quiet runs of 2026-12-07), so
    every request carried that much more database CPU than its row. Each round restarts the lab
    with the knob as fitted (restart()), runs the anchor (steps_args, budgeted), reads what a unit
    cost there (anchor_unit) and fits again: the anchor's database share becomes its row's, as a
    fit's row should, and every other row stays a prediction. A database whose CPU the lab cannot
    read (SUTLAB_LAB_DB_URL) keeps the idle unit, said in OUT/commands.log."""
    own = model.measured["own"]
    if own.db_us is None:
        ctx.note("# --db-work: the database's CPU is not read here; the unit stays the idle database's")
        return
    model.measured["work_from"] = "the fastest of five on the idle database"
    for i in range(rounds):
        units = model.knob("--db-work")
        restart()
        r = ctx.steps("%s-%d" % (label, i + 1), steps_args)[-1]
        db, rps = num(r, "cpu_db_pct"), num(r, "rps")
        unit = anchor_unit(units, own.statements, own.db_us, db, rps)
        ctx.note("# --db-work on the anchor, round %d: %s units a statement, db %s %% of a core at %s req/s: %s" % (
            i + 1, units, db, rps, "unit not read" if unit is None else "%.1f us a unit (was %.1f)" % (
                unit, model.measured["work_us"])))
        if unit is None:
            return
        model.measured["work_us"] = unit
        model.measured["work_from"] = "read on the anchor under its budget (%s, round %d: %s units, db %.1f %% of " \
                                      "a core at %.1f req/s)" % (label, i + 1, units, db, rps)


def count_us_per_row(db_url=None):
    """µs a row of `SELECT count(*) FROM articles` here (the shortest of five), and the rows."""
    rows = int(subprocess.run([PSQL, "-X", "-At", "-d", db_url or targets.lab_db_url(), "-c",
                               "SELECT count(*) FROM articles"], stdout=subprocess.PIPE, text=True,
                              timeout=600).stdout.strip() or 0)
    if rows <= 0:
        raise RunError("no articles to count: seed the lab first")
    return 1000.0 * _psql_times("SELECT count(*) FROM articles", db_url=db_url) / rows, rows


def measure(ctx, model, steps_args, database=True, label="calibrate"):
    """model.measured: own (a stage `label` of steps_args at full speed) and, with database,
    work_us (the database's work loop) and count_us_per_row, each said in OUT/commands.log."""
    model.measured["own"] = own(ctx, label, steps_args, ctx.url or _lab_url())
    said = ["%r" % model.measured["own"]]
    if database:
        model.measured["work_us"] = work_speed()
        model.measured["count_us_per_row"], rows = count_us_per_row()
        said += ["--db-work: %.2f us a unit" % model.measured["work_us"],
                 "count(*): %.4f us a row over %d" % (model.measured["count_us_per_row"], rows)]
    ctx.note("# calibrated: " + "; ".join(said))
    return model.measured


def _lab_url():
    return "http://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_PORT", "8080")
