"""report.html's panels over a run's time, one piece of code for steps, flip, spray, bench and case:

- CPU per tier over time. tiers.Sampler records, at each look, each sampled tier's CPU seconds so
  far (its `timeline`); a command keeps one per measured run (a level of steps, an arm and round
  of flip, a run of bench, the spray) and hands them here as segments. They are put end to end on
  one clock (the gaps between runs, warm-ups and restarts, left out), each run's start marked with
  its label: OUT/cpu.csv (t, the run's mark, cpu_TIER_pct, % of one core; blank where a tier was
  not sampled in that run) and OUT/cpu.png. A run that sampled no tier is said on the page, not
  drawn as zeros.
- The run's Prometheus series (promseries.py) over the run's window: --prometheus auto (the lab's,
  when `infra/lab up --monitoring` runs it; the default), URL, or none. OUT/prometheus.csv and
  prometheus.png; a Prometheus that does not answer is said, not fatal.

On the page the panels are marked (data-panel="cpu", "prometheus"): the report test counts them.
"""

import csv
import math
import os
import time

from . import REPO, promseries, tiers
from .services import lab

CPU_TITLE = "CPU per tier over time"
PROMETHEUS_TITLE = "The run in Prometheus, each tier's series (prometheus.csv)"


# -- options -------------------------------------------------------------------------------------

def add_arguments(p, lab_var=True, pids=False):
    """--prometheus (and --lab-var; --web-pid, --lb-pid, --db-pid, --redis-pid with pids=True), as
    every command with a report takes them."""
    p.add_argument("--prometheus", default="auto", metavar="URL|auto|none",
                   help="Prometheus to read the run's series from for report.html (prometheus.csv, .png): auto, the "
                        "lab's when `infra/lab up --monitoring` runs it (default), a URL, or none")
    if lab_var:
        p.add_argument("--lab-var", default=default_lab_var(),
                       help="the lab's state directory (default $SUTLAB_LAB_VAR, else var/, as infra/lab)")
    if pids:
        for tier in ("web", "lb", "db", "redis"):
            p.add_argument("--%s-pid" % tier, type=int, action="append", default=[],
                           help="a %s process (repeatable; default: the lab's)" % tier)


def default_lab_var():
    return os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var")


def tier_roots(args):
    """{tier: [pid, ...]}: the --TIER-pid given, else the lab's (services/lab.py); {} when neither."""
    given = {t: getattr(args, "%s_pid" % t) for t in ("web", "lb", "db", "redis")}
    if any(given.values()):
        return {t: pids for t, pids in given.items() if pids}
    return lab.roots(args.lab_var)


# -- Prometheus ------------------------------------------------------------------------------------

def prometheus_url(setting, lab_var):
    if setting == "none":
        return None
    return promseries.lab_prometheus(lab_var) if setting == "auto" else setting


def prometheus_panel(page, out_dir, setting, lab_var, start, end, load=None):
    """The series of [start, end] (time.time()) into prometheus.csv and .png, and onto the page;
    load: what ran (the request the load tool sent), under the PNG's title. True when they are there."""
    url = prometheus_url(setting, lab_var)
    if not url:
        return False
    time.sleep(max(0.0, end + 2.0 - time.time()))  # the last second's scrape
    try:
        series = promseries.fetch(url, start - 1, end + 1)
    except (OSError, ValueError) as e:
        print("(no Prometheus series: %s: %s)" % (url, e))
        page.add_text(PROMETHEUS_TITLE, "no series: %s did not answer as it should: %s" % (url, e), panel="prometheus")
        return False
    promseries.write_csv(series, os.path.join(out_dir, "prometheus.csv"))
    print("Prometheus (%s): %d series over the run in prometheus.csv" % (url, len(series)))
    png = os.path.join(out_dir, "prometheus.png")
    if series:
        try:
            promseries.plot(series, png, "the run in Prometheus (%s)" % url, [load] if load else [])
        except ImportError:
            pass
    if os.path.exists(png):
        page.add_image(PROMETHEUS_TITLE, png, panel="prometheus")
        return True
    page.add_text(PROMETHEUS_TITLE, "%d series from %s over the run (prometheus.csv)%s" % (
        len(series), url, "" if series else ": none had a point in the run's window"), panel="prometheus")
    return False


# -- CPU per tier over time --------------------------------------------------------------------------

def segments_in(results, path=()):
    """[(label, timeline)] of every run's result (a dict with "cpu_timeline") within `results`, a
    command's results as it keeps them (dicts, lists, tuples nested), each labelled by where it
    sits: {"off": [r1, r2]} gives "off r1" and "off r2" (the words "results" and "runs", which
    name containers, are left out)."""
    out = []
    if isinstance(results, dict):
        if "cpu_timeline" in results:
            return [(" ".join(path) or "run", results["cpu_timeline"])]
        for k, v in results.items():
            name = " ".join(map(str, k)) if isinstance(k, tuple) else str(k)
            out += segments_in(v, path if name in ("results", "runs") else path + (name,))
    elif isinstance(results, (list, tuple)):
        for i, v in enumerate(results):
            out += segments_in(v, path + ("r%d" % (i + 1),))
    return out


def tier_order(segments):
    """The tiers the segments sampled: tiers.TIERS' order first, then the others as they come."""
    seen = []
    for _, timeline in segments:
        for _, cpu in timeline:
            seen += [t for t in cpu if t not in seen]
    return [t for t in tiers.TIERS if t in seen] + [t for t in seen if t not in tiers.TIERS]


def thinned(points, shortest):
    """The looks less those that came within `shortest` seconds of the one kept before (the
    sampler's last look, at its stop, may follow its previous one by a millisecond: a rate over
    it is noise); the last look is kept, in place of the one before it when it came too soon."""
    kept = list(points[:1])
    for i, p in enumerate(points[1:], 1):
        if p[0] - kept[-1][0] >= shortest or len(kept) == 1:
            kept.append(p)
        elif i == len(points) - 1:
            kept[-1] = p
    return kept


def curve(segments):
    """(tier names, [(t, label, {tier: cores used over the interval before, None if not sampled})]):
    the segments in the order they ran (their first look), end to end on one clock."""
    segments = sorted((s for s in segments if s[1] and len(s[1]) >= 2), key=lambda s: s[1][0][0])
    names = tier_order(segments)
    out, offset = [], 0.0
    for label, points in segments:
        points = thinned(points, tiers.SAMPLE_EVERY / 2)
        for (t0, a), (t1, b) in zip(points, points[1:]):
            if t1 > t0:
                out.append((offset + t1 - points[0][0], label,
                            {n: max(0.0, b[n] - a[n]) / (t1 - t0) if n in a and n in b else None for n in names}))
        offset += points[-1][0] - points[0][0]
    return names, out


def write_csv(points, names, mark, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t", mark] + ["cpu_%s_pct" % n for n in names])
        for t, label, cores in points:
            w.writerow([round(t, 2), label] + ["" if cores[n] is None else round(100 * cores[n], 1) for n in names])


def plot(points, names, path, title, xlabel, lines=()):
    """Each tier's CPU (% of one core) over the run, each run's start marked by its label; lines:
    more of the title (the load)."""
    from . import plots
    plt = plots._pyplot()
    size = (1000, 450)
    fig, ax = plots._figure(plt, size)
    xs = [p[0] for p in points]
    for n in names:
        ax.plot(xs, [math.nan if p[2][n] is None else 100 * p[2][n] for p in points], ".-", markersize=3, label=n)
    starts = []
    for t, label, _ in points:
        if not starts or starts[-1][1] != label:
            starts.append((t, label))
    for t, label in starts:
        ax.axvline(t, color="gray", linestyle=":", linewidth=1)
        ax.annotate(str(label), (t, 0), xytext=(2, 2), textcoords="offset points", fontsize="x-small",
                    rotation=90 if len(starts) > 4 else 0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CPU, % of one core")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")
    plots._title(fig, size, title, list(lines), 3)
    return plots._save(fig, plt, path, size)


def cpu_panel(page, out_dir, segments, mark="run", what="runs", unsampled=(), load=None):
    """cpu.csv and cpu.png of the segments, onto the page; `unsampled`: lines saying what ran
    without a sampler (a bench suite that counts instructions), put on the page as they are; load:
    what ran (the request the load tool sent), under the PNG's title. The tier names, [] when
    nothing was sampled."""
    names, points = curve(segments)
    notes = list(unsampled)
    title = "%s (sampled every %g s; %s one after the other)" % (CPU_TITLE, tiers.SAMPLE_EVERY, what)
    if points:
        write_csv(points, names, mark, os.path.join(out_dir, "cpu.csv"))
        png = os.path.join(out_dir, "cpu.png")
        try:
            plot(points, names, png, "CPU per tier over the run",
                 "measured seconds: %s one after the other, each marked at its start" % what, [load] if load else [])
            page.add_image(title, png, panel="cpu")
        except ImportError:
            notes.append("no cpu.png: python3-matplotlib is not installed (the figures are in cpu.csv)")
    else:
        notes.append("no tier was sampled over time in this run")
    if notes:
        page.add_text(CPU_TITLE if points else title, "\n".join(notes), panel="cpu-note")
    return names
