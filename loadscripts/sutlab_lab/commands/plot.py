"""plot: turn a load run's output into PNGs (matplotlib, Agg).

  loadscripts/plot RUN_stats_history.csv      Locust (--csv RUN): RUN_time.png (req/s and users,
                                              p50/p95/p99, error rate over time) and, for a step
                                              run (two user levels or more), RUN_users.png (req/s
                                              and p50/p95/p99 against users)
  loadscripts/plot hey.csv                    `hey -o csv` output: hey_time.png (same three panels)
  loadscripts/plot a.wrk.txt [b.txt ...]      wrk, hey or ab reports (their stdout saved to a file):
                                              one latency percentile chart with every run,
                                              a_latency.png

The title carries the flags in force: --url URL reads sutlab_build_info from URL/metrics,
--flags TEXT gives them, else a flags text stored next to the input is used (RUN_flags.txt,
written by loadscripts/locust; FILE.flags; DIR/flags.txt). Prints the PNGs it wrote, one a line.
Exit status: 0 written, 1 an input could not be read or plotted, 2 bad usage.
"""

import argparse
import os
import sys

from ..cli import Parser
from .. import plots, series
from ..services import metrics

SERIES_KINDS = ("locust-history", "locust-seconds", "hey-csv")


def parse_args(argv):
    p = Parser(prog="plot", description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="FILE",
                   help="Locust PREFIX_stats_history.csv (or PREFIX_seconds.csv), hey -o csv output, "
                        "or a wrk, hey or ab report")
    p.add_argument("-o", "--out", metavar="PREFIX",
                   help="write PREFIX_time.png, PREFIX_users.png, PREFIX_latency.png "
                        "(default: the input's run prefix)")
    p.add_argument("--size", default="1200x900", metavar="WxH",
                   help="PNG size in pixels (default %(default)s)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--url", metavar="URL", help="read the flags in force from URL/metrics (sutlab_build_info)")
    g.add_argument("--flags", metavar="TEXT", help="the flags in force, for the title")
    p.add_argument("--title", metavar="TEXT", help="first title line (default: from the input's name)")
    p.add_argument("--settle", type=float, default=2.0, metavar="SECONDS",
                   help="for a step run without PREFIX_steps.csv: seconds left out at the start of "
                        "each user level (default %(default)s)")
    args = p.parse_args(argv)
    try:
        args.size = plots.parse_size(args.size)
    except ValueError as e:
        p.error(str(e))
    return args


def flags_for(args, path):
    if args.flags is not None:
        return args.flags
    if args.url:
        f = metrics.fetch_flags(args.url)
        return f if f is not None else "(no sutlab_build_info at %s/metrics)" % args.url
    return series.flags_next_to(path)


def input_kinds(paths):
    kinds = []
    for path in paths:
        if not os.path.exists(path):
            raise ValueError("%s: no such file" % path)
        kind = series.sniff(path)
        if kind is None:
            raise ValueError("%s: not a Locust stats history, hey -o csv, or a wrk, hey or ab report" % path)
        kinds.append((path, kind))
    return kinds


def plot_series(args, path, kind, several):
    """The time PNG of a Locust or hey -o csv run, and for a step run the users PNG."""
    if kind.startswith("locust"):
        s = series.read_locust(path, settle=args.settle)
        prefix, what = series.locust_prefix(path), "Locust"
    else:
        s = series.read_hey_csv(path)
        prefix, what = os.path.splitext(path)[0], "hey"
    if not s.rows:
        raise ValueError("%s: no rows to plot" % path)
    if args.out:
        prefix = "%s_%s" % (args.out, os.path.basename(prefix)) if several else args.out
    name = os.path.basename(prefix)
    flags = flags_for(args, path)
    title = args.title or "%s run %s: throughput, response time and errors over time" % (what, name)
    written = [plots.plot_time(s, prefix + "_time.png", args.size, title, flags)]
    if s.steps and len(s.steps) >= 2:
        t2 = (args.title or "%s run %s" % (what, name)) + ": throughput and response time against users"
        written.append(plots.plot_users(s, prefix + "_users.png", args.size, t2, flags))
    return written


def pngs_of(path):
    """plot's PNGs of one Locust or hey run with its defaults, as `loadscripts/plot PATH` draws
    them (the tps-trend case's ramps); their paths."""
    return plot_series(parse_args([path]), path, series.sniff(path), False)


def plot_reports(args, reports):
    """One latency chart of every wrk, hey and ab report given."""
    results = [(os.path.basename(path), series.read_report(path, kind)) for path, kind in reports]
    first = reports[0][0]
    prefix = args.out or os.path.splitext(first)[0]
    tools = sorted({kind for _, kind in reports})
    title = args.title or "%s: latency distribution (%s)" % (
        "/".join(tools), ", ".join(os.path.basename(p) for p, _ in reports))
    return plots.plot_latency(results, prefix + "_latency.png", args.size, title, flags_for(args, first))


def main(argv):
    args = parse_args(argv)
    written = []
    try:
        kinds = input_kinds(args.inputs)
        runs = [(p, k) for p, k in kinds if k in SERIES_KINDS]
        for path, kind in runs:
            written += plot_series(args, path, kind, len(runs) > 1)
        reports = [(p, k) for p, k in kinds if k not in SERIES_KINDS]
        if reports:
            written.append(plot_reports(args, reports))
    except (ValueError, KeyError, OSError, RuntimeError) as e:
        print("plot: error: %s" % e, file=sys.stderr)
        return 1
    except ImportError as e:
        print("plot: error: %s (install python3-matplotlib and run with /usr/bin/python3)" % e, file=sys.stderr)
        return 1
    for w in written:
        print(w)
    return 0
