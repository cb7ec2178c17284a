"""The PNGs of plot and flip (matplotlib with the Agg backend, imported when a PNG is drawn: the
rest of the library needs no matplotlib). Every PNG has exactly the size asked for, and a title
that carries the flags in force."""

import re
import textwrap

DPI = 100
COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]


def png_size(path):
    """(width, height) from a PNG's IHDR; raises ValueError if it is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError("%s is not a PNG" % path)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not m or int(m.group(1)) < 200 or int(m.group(2)) < 150:
        raise ValueError("size must be WIDTHxHEIGHT in pixels, at least 200x150 (e.g. 1200x900)")
    return int(m.group(1)), int(m.group(2))


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _figure(plt, size, **kw):
    w, h = size
    return plt.subplots(figsize=(w / DPI, h / DPI), dpi=DPI, **kw)


def _save(fig, plt, path, size):
    fig.savefig(path, dpi=DPI)  # no bbox_inches: the PNG keeps exactly the size asked for
    plt.close(fig)
    got = png_size(path)
    if got != tuple(size):
        raise RuntimeError("%s came out %dx%d, not %dx%d" % (path, got[0], got[1], size[0], size[1]))
    return path


def _title(fig, size, title, lines, most):
    """The title, then `lines`, each wrapped to the width, `most` lines in all, and a top margin
    that leaves them room."""
    chars = max(40, int(size[0] / 7.5))
    text = textwrap.wrap(title, chars) or [title]
    for line in lines:
        text += textwrap.wrap(line, chars)
    text = "\n".join(text[:most])
    fig.suptitle(text, fontsize="medium")
    px = 17 * (text.count("\n") + 1) + 34
    fig.subplots_adjust(top=max(0.5, 1.0 - px / float(size[1])), bottom=min(0.2, 60.0 / size[1]))


def plot_time(series, out, size, title, flags, marks=()):
    """TPS (+ users), p50/p95/p99 and error rate over time: three panels, one PNG; marks: (t,
    label) of changes made during the run, a vertical line on each panel."""
    plt = _pyplot()
    fig, (a1, a2, a3) = _figure(plt, size, nrows=3, sharex=True,
                                gridspec_kw={"height_ratios": [3, 3, 2]})
    t = series.col("t")
    a1.plot(t, series.col("rps"), color="tab:blue", marker=".", label="throughput (req/s)")
    a1.set_ylabel("requests/s")
    a1.set_ylim(bottom=0)
    a1.grid(True, alpha=0.3)
    handles, labels = a1.get_legend_handles_labels()
    users = series.col("users")
    if any(users):
        a1b = a1.twinx()
        a1b.step(t, users, where="post", color="tab:gray", linestyle="--", label="users")
        a1b.set_ylabel("users")
        a1b.set_ylim(bottom=0, top=max(users) * 1.15 + 1)
        h2, l2 = a1b.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    a1.legend(handles, labels, loc="upper left", fontsize="small")
    for key, color in (("p50", "tab:green"), ("p95", "tab:orange"), ("p99", "tab:red")):
        pts = [(x, y) for x, y in zip(t, series.col(key)) if y is not None]
        if pts:
            a2.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker=".", label=key)
    a2.set_ylabel("response time (ms)")
    a2.set_ylim(bottom=0)
    a2.grid(True, alpha=0.3)
    a2.legend(loc="upper left", fontsize="small", title=series.pct_note, title_fontsize="x-small")
    a3.plot(t, series.col("error_pct"), color="tab:red", marker=".", label="errors (% of requests)")
    a3.set_ylabel("error rate (%)")
    a3.set_xlabel("time since start (s)")
    a3.set_ylim(bottom=0, top=max([1.0] + series.col("error_pct")) * 1.1)
    a3.grid(True, alpha=0.3)
    a3.legend(loc="upper left", fontsize="small")
    for t_mark, label in marks:
        for ax in (a1, a2, a3):
            ax.axvline(t_mark, color="black", linestyle="--", linewidth=1)
        a1.annotate(label, (t_mark, 0), xytext=(4, 4), textcoords="offset points", fontsize="small")
    _title(fig, size, title, ["flags: " + (flags or "unknown")], 4)
    return _save(fig, plt, out, size)


def plot_users(series, out, size, title, flags):
    """TPS and response time against users, one point per user level (a step run)."""
    plt = _pyplot()
    fig, (a1, a2) = _figure(plt, size, nrows=2, sharex=True)
    st = series.steps
    users = [s[0] for s in st]
    rps = [s[1] for s in st]
    a1.plot(users, rps, color="tab:blue", marker="o", label="throughput (req/s)")
    if users and users[0] > 0 and rps[0] > 0:
        per_user = rps[0] / users[0]
        a1.plot(users, [u * per_user for u in users], color="tab:gray", linestyle=":",
                label="linear from the first step (no bottleneck)")
    best = max(range(len(rps)), key=lambda i: rps[i]) if rps else None
    if best is not None:
        a1.annotate("max %.0f req/s at %d users" % (rps[best], users[best]), (users[best], rps[best]),
                    textcoords="offset points", xytext=(0, 8), ha="center", fontsize="small")
    a1.set_ylabel("requests/s")
    a1.set_ylim(bottom=0)
    a1.grid(True, alpha=0.3)
    a1.legend(loc="lower right", fontsize="small")
    for idx, key, color in ((2, "p50", "tab:green"), (3, "p95", "tab:orange"), (4, "p99", "tab:red")):
        pts = [(s[0], s[idx]) for s in st if s[idx] is not None]
        if pts:
            a2.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker="o", label=key,
                    linewidth=2.5 if key == "p95" else 1.0)
    errs = [s[5] for s in st]
    if any(e > 0 for e in errs):
        a2b = a2.twinx()
        a2b.bar(users, errs, width=max(1.0, (users[-1] - users[0]) / (len(users) * 4.0) if len(users) > 1 else 1.0),
                color="tab:red", alpha=0.25, label="errors (%)")
        a2b.set_ylabel("error rate (%)")
        a2b.set_ylim(bottom=0)
    a2.set_ylabel("response time (ms)")
    a2.set_xlabel("users")
    a2.set_ylim(bottom=0)
    a2.grid(True, alpha=0.3)
    a2.legend(loc="upper left", fontsize="small", title=series.steps_note, title_fontsize="x-small")
    _title(fig, size, title, ["flags: " + (flags or "unknown")], 4)
    return _save(fig, plt, out, size)


def _pct_axis(ax):
    """x axis for latency percentile curves: 1/(1-p) on a log scale, labelled in %."""
    ax.set_xscale("log")
    ticks = [50, 90, 99, 99.9, 99.99]
    ax.set_xticks([1.0 / (1.0 - p / 100.0) for p in ticks])
    ax.set_xticklabels(["%g%%" % p for p in ticks])
    ax.set_xlabel("percentile")


def _pct_xy(percentiles):
    pts = [(1.0 / (1.0 - p / 100.0), v) for p, v in percentiles if 0 < p < 100 and v is not None]
    return [p[0] for p in pts], [p[1] for p in pts]


def plot_latency(results, out, size, title, flags):
    """Latency percentile curves of one or more runs: [(label, result)], wrk, hey or ab's."""
    plt = _pyplot()
    fig, ax = _figure(plt, size)
    for label, r in results:
        xs, ys = _pct_xy(r.get("percentiles") or [])
        if xs:
            ax.plot(xs, ys, marker=".", label="%s: %.0f req/s, %d errors" % (label, r["rps"], r.get("errors", 0)))
    _pct_axis(ax)
    ax.set_ylabel("response time (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(loc="upper left", fontsize="small")
    _title(fig, size, title, ["flags: " + (flags or "unknown")], 4)
    return _save(fig, plt, out, size)


def plot_flip(rows, out, size, title, flag_lines):
    """Side by side: req/s, p50/p95/p99, CPU per request, latency curves of the flip's runs.
    rows: dicts with label, rps, p50, p95, p99, errors, cpu_us_req, pg_us_req, percentiles."""
    plt = _pyplot()
    fig, axes = _figure(plt, size, nrows=2, ncols=2)
    (a1, a2), (a3, a4) = axes
    labels = [r["label"] for r in rows]
    xs = list(range(len(rows)))
    bars = a1.bar(xs, [r["rps"] for r in rows], color=COLORS[:len(rows)])
    for b, r in zip(bars, rows):
        a1.annotate("%.0f" % r["rps"], (b.get_x() + b.get_width() / 2, b.get_height()),
                    textcoords="offset points", xytext=(0, 3), ha="center", fontsize="small")
    a1.set_xticks(xs)
    a1.set_xticklabels(labels)
    a1.set_ylabel("requests/s")
    a1.set_title("throughput", fontsize="small")
    a1.grid(True, axis="y", alpha=0.3)
    width = 0.8 / max(1, len(rows))
    for i, r in enumerate(rows):
        vals = [r.get(k) or 0.0 for k in ("p50", "p95", "p99")]
        a2.bar([j + (i - (len(rows) - 1) / 2.0) * width for j in range(3)], vals, width=width,
               color=COLORS[i % len(COLORS)], label=r["label"])
    a2.set_xticks(range(3))
    a2.set_xticklabels(["p50", "p95", "p99"])
    a2.set_ylabel("response time (ms)")
    a2.set_title("latency", fontsize="small")
    a2.grid(True, axis="y", alpha=0.3)
    a2.legend(fontsize="small")
    cpu = [r.get("cpu_us_req") or 0.0 for r in rows]
    pg = [r.get("pg_us_req") or 0.0 for r in rows]
    a3.bar(xs, cpu, color=COLORS[:len(rows)], label="sutlab")
    if any(pg):
        a3.bar(xs, pg, bottom=cpu, color="lightgray", hatch="//", label="PostgreSQL")
        a3.legend(fontsize="small")
    a3.set_xticks(xs)
    a3.set_xticklabels(labels)
    a3.set_ylabel("server CPU per request (µs)")
    a3.set_title("CPU time (user+system) / requests", fontsize="small")
    a3.grid(True, axis="y", alpha=0.3)
    for i, r in enumerate(rows):
        px, py = _pct_xy(r.get("percentiles") or [])
        if px:
            a4.plot(px, py, marker=".", color=COLORS[i % len(COLORS)], label=r["label"])
    _pct_axis(a4)
    a4.set_ylabel("response time (ms)")
    a4.set_title("latency distribution", fontsize="small")
    a4.grid(True, alpha=0.3, which="both")
    if a4.get_legend_handles_labels()[0]:
        a4.legend(fontsize="small")
    _title(fig, size, title, flag_lines, 6)
    fig.subplots_adjust(hspace=0.35, wspace=0.3)
    return _save(fig, plt, out, size)

