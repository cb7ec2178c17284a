"""The run's Prometheus series, for a report: when the lab's monitoring runs (`infra/lab up
--monitoring`), each tier's series over the run's window, read through Prometheus's HTTP API
(query_range at 1 s, the scrape interval), written to OUT/prometheus.csv and drawn in
OUT/prometheus.png, a panel per tier that had a target."""

import csv
import json
import os
import urllib.parse
import urllib.request

from .services import procs

# (panel, what a line is, unit, PromQL); a query with no series leaves its line out, a panel with
# none is not drawn (the exporters a lab runs depend on its shape)
QUERIES = (
    ("web", "sutlab req/s by instance", "req/s", 'sum by (instance) (rate(http_requests_total{job="sutlab"}[2s]))'),
    ("web", "sutlab 5xx/s", "req/s", 'sum(rate(http_requests_total{job="sutlab",code=~"5.."}[2s]))'),
    ("machine", "CPU by mode (node exporter)", "cores", 'sum by (mode) (rate(node_cpu_seconds_total{mode!="idle"}[2s]))'),
    ("db", "PostgreSQL commits/s", "1/s", "sum(rate(pg_stat_database_xact_commit[2s]))"),
    ("db", "PostgreSQL backends", "count", "sum(pg_stat_activity_count)"),
    ("cache", "Redis commands/s", "1/s", "sum(rate(redis_commands_processed_total[2s]))"),
    ("balancer", "HAProxy requests/s", "req/s", "sum(rate(haproxy_frontend_http_requests_total[2s]))"),
)


def lab_prometheus(var):
    """The lab's Prometheus URL when its monitoring runs (var/monitoring/prometheus.pid alive),
    else None."""
    pid = procs.read_pidfile(os.path.join(var, "monitoring", "prometheus.pid"))
    if not pid or not procs.pid_alive(pid):
        return None
    return "http://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_PROM_PORT", "9490")


def query_range(url, query, start, end, step=1.0):
    qs = urllib.parse.urlencode({"query": query, "start": "%.3f" % start, "end": "%.3f" % end, "step": step})
    with urllib.request.urlopen("%s/api/v1/query_range?%s" % (url.rstrip("/"), qs), timeout=10) as r:
        doc = json.loads(r.read())
    if doc.get("status") != "success":
        raise ValueError("Prometheus: %s" % doc.get("error", doc))
    return doc["data"]["result"]


def fetch(url, start, end):
    """[(panel, what, unit, label, [(t, value)])] of every series the run's window has; t in
    seconds from `start`. OSError or ValueError when Prometheus does not answer as it should."""
    out = []
    for panel, what, unit, query in QUERIES:
        for series in query_range(url, query, start, end):
            label = ",".join("%s=%s" % kv for kv in sorted(series["metric"].items())) or what
            points = [(float(t) - start, float(v)) for t, v in series["values"]]
            out.append((panel, what, unit, label, points))
    return out


def write_csv(series, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "series", "label", "unit", "t", "value"])
        for panel, what, unit, label, points in series:
            for t, v in points:
                w.writerow([panel, what, label, unit, round(t, 1), v])


def plot(series, path, title, lines=()):
    """Each panel's series over the run, one axis a panel; lines: more of the title (the load)."""
    from . import plots
    plt = plots._pyplot()
    panels = [p for p in ("web", "machine", "db", "cache", "balancer") if any(s[0] == p for s in series)]
    size = (1000, 220 * len(panels) + 120)
    fig, axes = plots._figure(plt, size, nrows=len(panels), sharex=True, squeeze=False)
    for ax, panel in zip([a[0] for a in axes], panels):
        for _, what, unit, label, points in (s for s in series if s[0] == panel):
            ax.plot([p[0] for p in points], [p[1] for p in points], ".-", markersize=3,
                    label=label if label != what else what)
        ax.set_ylabel("%s (%s)" % (panel, unit if len({s[2] for s in series if s[0] == panel}) == 1 else "mixed"))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize="x-small")
    axes[-1][0].set_xlabel("seconds since the run began")
    plots._title(fig, size, title, list(lines), 3)
    return plots._save(fig, plt, path, size)
