"""Where the time went, per route, over a stage: from two scrapes of sutlab's /metrics (before and
after), each route's requests, its share of the server's time (http_request_duration_seconds_sum)
and of the database's time (http_request_db_seconds_total: what requests waited on PostgreSQL,
Server-Timing's db), as an APM's transaction list reads it (the blog write-up's New Relic, seeds
000 L172-L173: "articles.index" took nearly all).

    table = shares(before_text, after_text)     # texts or parsed Metrics
    print(markdown(table))                       # markdown_levels([(level, table), ...]): steps'


A request's database time sums the waits of its queries, and a request that runs two at once
(the index page's list and its count with --count-pagination) can wait longer on the database
than it lasted: "db ms / request" above "mean ms" says so. The scrapes go through
metrics.parse_metrics, the project's one /metrics parser. The lab's own
requests (/metrics, and the unmatched route) are left out.
"""

import csv
import os

from .services import metrics
from .report import fmt, table

SERVER = "http_request_duration_seconds_sum"
COUNT = "http_request_duration_seconds_count"
DB = "http_request_db_seconds_total"
LEFT_OUT = ("/metrics", "unmatched")


def _parsed(scrape):
    return scrape if isinstance(scrape, metrics.Metrics) else metrics.parse_metrics(scrape)


def _by_route(m, name):
    return {labels["route"]: v for labels, v in m.samples(name) if "route" in labels}


def _delta(before, after, name):
    """{route: after - before}; a series absent before counts from 0 (sutlab leaves a route out
    until it has a request). A counter that went back (a restart) is an error, not a share."""
    b, a = _by_route(before, name), _by_route(after, name)
    out = {}
    for route, v in a.items():
        d = v - b.get(route, 0.0)
        if d < 0:
            raise ValueError("%s{route=%r} went down between the scrapes (%g -> %g): the server restarted"
                             % (name, route, b.get(route, 0.0), v))
        out[route] = d
    return out


def shares(before, after):
    """[{route, requests, server_s, server_share, db_s, db_share, mean_ms, db_ms}] over the stage,
    the routes with requests in it, the largest server time first. Shares are fractions (0-1) of
    the routes' totals; db_share is None when no route waited on the database."""
    before, after = _parsed(before), _parsed(after)
    count, server, db = (_delta(before, after, n) for n in (COUNT, SERVER, DB))
    routes = [r for r, n in count.items() if n > 0 and r not in LEFT_OUT]
    total_server = sum(server.get(r, 0.0) for r in routes)
    total_db = sum(db.get(r, 0.0) for r in routes)
    rows = []
    for r in routes:
        n, s, d = count[r], server.get(r, 0.0), db.get(r, 0.0)
        rows.append({"route": r, "requests": int(n), "server_s": s, "db_s": d,
                     "server_share": s / total_server if total_server > 0 else None,
                     "db_share": d / total_db if total_db > 0 else None,
                     "mean_ms": 1000.0 * s / n, "db_ms": 1000.0 * d / n})
    rows.sort(key=lambda row: (-row["server_s"], row["route"]))
    return rows


HEADER = ["route", "requests", "server time %", "db time %", "mean ms", "db ms / request"]


def _cells(r):
    pct = lambda v: fmt(None if v is None else 100.0 * v, 1)  # noqa: E731
    return [r["route"], r["requests"], pct(r["server_share"]), pct(r["db_share"]), fmt(r["mean_ms"], 2),
            fmt(r["db_ms"], 2)]


def markdown(rows):
    """One stage's table."""
    return table(HEADER, [_cells(r) for r in rows], left=1, framed=True)


def markdown_levels(levels):
    """[(level, rows)] as one table with a level column, as steps prints it."""
    lines = [[str(level)] + _cells(r) for level, rows in levels for r in rows]
    return table(["level"] + HEADER, lines, left=2, framed=True)


CSV_FIELDS = ["level", "route", "requests", "server_share", "db_share", "mean_ms", "db_ms"]


def write_csv(levels, path):
    """[(level, rows)] into a CSV file (routes.csv of a steps run), shares as fractions."""
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, CSV_FIELDS, extrasaction="ignore")
        out.writeheader()
        for level, rows in levels:
            for r in rows:
                out.writerow(dict(r, level=level, db_share="" if r["db_share"] is None else r["db_share"]))


def read_csv(path):
    """write_csv's file back: {level: [(route, server share)]}, the largest first ({} when absent)."""
    out = {}
    if os.path.exists(path):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                out.setdefault(float(r["level"]), []).append((r["route"], float(r["server_share"])))
    return out


def is_sutlab(m):
    """A scrape of sutlab (its build info), not of another server."""
    return m is not None and bool(_parsed(m).samples("sutlab_build_info"))
