"""flip's report: the before/after table (medians over the rounds, the on/off ratios), the flags
each run reported, and the PNG."""

from .. import plots, report
from ..report import fmt

KEYS = ("rps", "p50", "p95", "p99", "kb_req", "cpu_pct", "cpu_us_req", "pg_pct", "pg_us_req",
        "probe_p50", "probe_p99", "success")
HEADER = ["run", "change", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors", "KB/resp",
          "sutlab CPU %", "sutlab us/req", "pg CPU %", "pg us/req", "limits"]
PROBE_HEADER = ["probe p50 ms", "probe p99 ms", "probe errors"]
# (key, decimals) of the columns after errors, in the header's order
COLUMNS = (("kb_req", 2), ("cpu_pct", 0), ("cpu_us_req", 1), ("pg_pct", 0), ("pg_us_req", 1))


def verdicts(runs):
    """The verdicts of a run's rounds (loadscripts/steps' rules, sutlab_lab/verdict.py), the most
    frequent first."""
    seen = [r.get("verdict") for r in runs if r.get("verdict")]
    return ", ".join(sorted(set(seen), key=lambda v: -seen.count(v))) or report.MISSING


def run_row(label, change, m, runs, probe, ok):
    row = [label, change, fmt(m["rps"], 0), fmt(m["p50"], 3), fmt(m["p95"], 3), fmt(m["p99"], 3),
           str(m["errors"])] + ([fmt(None if m["success"] is None else 100 * m["success"], 1)] if ok else []) + \
        [fmt(m[k], nd) for k, nd in COLUMNS] + [verdicts(runs)]
    if probe:
        perr = [r.get("probe_errors") for r in runs]
        row += [fmt(m["probe_p50"], 3), fmt(m["probe_p99"], 3),
                report.MISSING if None in perr else str(sum(perr))]
    return row


def ratio_row(on, off, probe, ok):
    def x(k):
        return fmt(report.ratio(on[k], off[k]), 2, "x{}")
    row = ["on/off", "", x("rps"), x("p50"), x("p95"), x("p99"), ""] + ([x("success")] if ok else []) + \
        [x(k) for k, _ in COLUMNS] + [""]
    return row + ([x("probe_p50"), x("probe_p99"), ""] if probe else [])


def table_text(plan, results, probe, ok=False, framed=False):
    """The table and the medians of each run ({label: medians}); ok: the success ratio column
    (an open-model load's, vegeta's figure); framed: as a Markdown table (report.html)."""
    rows, meds = [], {}
    for label, _, _ in plan.runs:
        meds[label] = report.medians(results[label], KEYS)
        rows.append(run_row(label, plan.change[label], meds[label], results[label], probe, ok))
    rows.append(ratio_row(meds["on"], meds["off"], probe, ok))
    header = HEADER[:7] + (["ok %"] if ok else []) + HEADER[7:]
    return report.table(header + (PROBE_HEADER if probe else []), rows, framed=framed), meds


def text(args, plan, target, title, load_desc, results):
    """The whole report, as flip prints it and writes to OUT/table.txt; and the medians."""
    lines = [title,
             "load:   %s" % load_desc,
             "target: %s; %d round(s)%s, warm-up %g s before each run"
             % (target.describe(), args.rounds, " alternated (off on, on off, ...), medians" if args.rounds > 1
                else "", args.warmup),
             "base flags: %s" % (" ".join(plan.base) or "(none)"), ""]
    table, meds = table_text(plan, results, bool(args.probe), ok=args.tool == "spray")
    lines += [table, ""]
    labels = [label for label, _, _ in plan.runs]
    if args.rounds > 1:
        lines += ["req/s per round, %s: %s" % (label, ", ".join("%.0f" % r["rps"] for r in results[label]))
                  for label in labels]
    lines.append("flags in force (sutlab_build_info of each run):")
    lines += ["  %-4s %s" % (label + ":", results[label][-1]["build_flags"]) for label in labels]
    if args.flag == "log" and any(r.get("log_bytes") for r in results["on"]):
        lines.append("verbose log written during the on run(s): %.1f MB (deleted)"
                     % (max(r.get("log_bytes", 0) for r in results["on"]) / 1e6))
    if any(m["errors"] for m in meds.values()):
        lines.append("note: errors = socket errors + responses >= 400 (wrk), failures (Locust), requests "
                     "without a 2xx/3xx (spray)")
    if args.tool == "spray":
        for label in labels:
            last = results[label][-1]
            lines.append("spray %s: codes %s; errors %s" % (
                label, " ".join("%s:%d" % kv for kv in sorted(last["codes"].items(), key=lambda kv: str(kv[0]))),
                " ".join("%s:%d" % kv for kv in sorted(last["error_kinds"].items())) or "none"))
    lines.append("CPU %: of one core, over the measured run; us/req: CPU microseconds per request; "
                 "pg: PostgreSQL's processes; limits: the tier loadscripts/steps' rules name for the run "
                 "(loadscripts/README.md, steps)")
    return "\n".join(lines), meds


def png(args, plan, results, meds, path, title, load_desc):
    """OUT/flip.png: the medians of each run and the latency curve of its middle round."""
    rows = []
    for label, _, _ in plan.runs:
        m = meds[label]
        middle = results[label][len(results[label]) // 2]
        rows.append({"label": "%s: %s" % (label, plan.change[label]), "rps": m["rps"] or 0.0,
                     "p50": m["p50"], "p95": m["p95"], "p99": m["p99"], "errors": m["errors"],
                     "cpu_us_req": m["cpu_us_req"], "pg_us_req": m["pg_us_req"],
                     "percentiles": middle.get("percentiles")})
    flags = report.flags_diff([(label, results[label][-1]["build_flags"]) for label, _, _ in plan.runs])
    return plots.plot_flip(rows, path, args.size, title, ["load: " + load_desc] + flags)
