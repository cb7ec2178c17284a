"""The load tools of a stepped run (loadscripts/steps): for each, the command that holds one level
for a number of seconds, and what its output says of the step: requests/s, mean, p50 and p99 in
ms, and the errors by kind (parsers.py reads them). What each tool can tell:
  ab       non-2xx (no codes); failed connects and receives (run with -r, so a reset does not end
           the run)
  hey      every status code; refused / reset / read timeout / connect timeout from its error
           distribution (-t: it gives up on a request after it and sends the next)
  wrk      non-2xx (no codes); connect errors (refused), read errors (reset), read timeouts
           (--timeout: a response later than it, waited out on its connection and counted)
  locust   every status code and exception, from PREFIX_failures.csv
  httperf  every status code; timeouts, refused, reset/EOF, unsent (run through
           loadscripts/spray: as many httperf processes as the rate needs, vegeta's figures;
           to an IPv6 address or a name, spray's own attacker, whose kinds are finer:
           connect-timeout and reply-timeout, refused, reset, EOF, and late arrivals as unsent)
"""

import json
import os

from . import REPO, loadargv, parsers, report, spray, stats
from .flip import load as flip_load

TOOLS = ("ab", "hey", "wrk", "locust", "httperf")
OPEN_MODEL = ("httperf",)  # levels are arrival rates, not concurrent clients
LEVEL_UNITS = {"ab": "concurrent clients", "hey": "concurrent clients", "wrk": "connections", "locust": "users",
               "httperf": "requests/s (arrivals a second)"}


class Load:
    """One tool aimed at one target. `url` is the base (http://HOST:PORT), `path` what ab, hey,
    httperf and a script-less wrk request; `extra` the tool options the user added."""

    def __init__(self, tool, url, path="/", timeout=10, script=None, locustfiles=None, tags=None,
                 locust_args=(), out_dir=None, spray_args=(), workers=1, cpus=None):
        """workers: the load tool's processes or threads that make requests (wrk -t, hey -cpus,
        Locust: a master and that many workers when above 1); cpus: the cores it may use (a
        list for taskset), None for any."""
        if tool not in TOOLS:
            raise ValueError("unknown tool %r (%s)" % (tool, ", ".join(TOOLS)))
        if workers > 1 and tool not in SCALABLE:
            raise ValueError("%s has no workers to add (%s)" % (tool, SCALABLE_WHY[tool]))
        self.tool, self.url, self.path, self.timeout = tool, url.rstrip("/"), path, timeout
        self.script, self.locustfiles, self.tags = script, locustfiles, tags
        self.locust_args, self.out_dir, self.spray_args = list(locust_args), out_dir, list(spray_args)
        self.workers, self.cpus = workers, cpus

    def describe(self, env=None):
        """The tool and the request it sends, as flip names a load ("wrk -s loadscripts/wrk/
        articles_index.lua: GET /api/articles?limit=20&offset=0"): a script's or a Locust tag's
        request as flip's scenarios describe it (flip/load.py), else the path's GET; `env` the
        tool's environment (default os.environ: WRK_HEADERS changes a script's request)."""
        if self.tool == "locust":
            return _locust_description(self.locustfiles, self.tags, self.locust_args)
        env = (os.environ if env is None else env) if self.script else {}  # only a script reads WRK_*
        what = flip_load.script_request(self.script, self.path, env)
        if what is None and self.script and os.path.basename(self.script) != "plain.lua":
            what = "the requests the script makes (URL path %s)" % self.path
        elif what is None:  # one request, plain.lua's (its method WRK_METHOD) or the tool's GET
            what = "%s %s" % (env.get("WRK_METHOD") or "GET", self.path)
        tool = {"httperf": "spray (httperf)"}.get(self.tool, self.tool)
        return "%s%s: %s" % (tool, " -s " + _shown(self.script) if self.script else "", what)

    def command(self, level, seconds, tag):
        """The argv that holds `level` (clients, or arrivals a second for httperf) for `seconds`,
        on the cores given; `tag` names the files a run leaves in out_dir (Locust's CSVs)."""
        return loadargv.taskset(self.cpus, self._command(level, seconds, tag))

    def _command(self, level, seconds, tag):
        target = self.url + self.path
        if self.tool == "ab":
            return loadargv.ab(target, level, seconds, self.timeout)
        if self.tool == "hey":
            return loadargv.hey(target, level, seconds, self.timeout, self.workers)
        if self.tool == "wrk":
            # wrk wants at least one connection per thread
            return loadargv.wrk(target, level, seconds, min(self.workers, level), self.timeout, latency=True,
                                script=self.script, glued=False)
        if self.tool == "httperf":
            spray.target(self.url)  # spray's own rule: plain http, IPv6 in brackets (ValueError)
            return loadargv.spray(self.url, self.path, level, seconds, self.timeout, self.spray_args)
        argv = loadargv.locust(self.locustfiles, self.url, level, seconds, os.path.join(self.out_dir, tag),
                               tags=self.tags or (), extra=self.locust_args)
        if self.workers > 1:
            return loadargv.locust_distributed(argv, self.locustfiles, self.locust_args, self.workers)
        return argv

    def result(self, output, tag, level, skip_s=0):
        """{rps, mean, p50, p99, errors: {kind: n}} of a finished run; the first skip_s seconds
        (a warm-up inside the run: Locust's) are left out where the tool keeps per-second rows.
        ValueError if the output holds no result."""
        if self.tool == "locust":
            return _locust(os.path.join(self.out_dir, tag), skip_s)
        if self.tool == "httperf":
            return _spray(output)
        r = {"ab": parsers.parse_ab, "hey": parsers.parse_hey, "wrk": parsers.parse_wrk}[self.tool](output)
        return {"rps": r["rps"], "mean": r.get("mean"), "p50": r.get("p50"), "p95": r.get("p95"), "p99": r.get("p99"),
                "errors": r["error_kinds"]}


def _shown(path):
    """A file of the repository as its path from the top (loadscripts/wrk/x.lua), another as given."""
    rel = os.path.relpath(os.path.abspath(path), REPO)
    return path if rel.startswith("..") else rel


def _locust_description(locustfiles, tags, args):
    """Locust's load: each tag's request (flip/load.py's tag_request, its placeholders from the
    locustfile's options in args), or the file's user scenario when no tag is given."""
    files = ",".join(_shown(f) for f in locustfiles or ())
    if not tags:
        return "Locust -f %s: the requests of its users' scenario" % files
    values = _option_values(args)
    return "Locust --tags %s: %s" % (",".join(tags), "; ".join(flip_load.tag_request(t, values) or "task %s" % t
                                                                for t in tags))


def _option_values(args):
    """{"echo_bytes": "512"} of the options on a command line (--echo-bytes=512 or --echo-bytes 512)."""
    out = {}
    for i, a in enumerate(args):
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            if not eq and i + 1 < len(args) and not args[i + 1].startswith("--"):
                value = args[i + 1]
            out[name.replace("-", "_")] = value
    return out


SCALABLE = ("wrk", "hey", "locust")
SCALABLE_WHY = {"ab": "ab is one thread: run steps with wrk, hey or locust", "httperf":
                "spray starts as many httperf processes as the rate needs"}


def _spray(output):
    """loadscripts/spray's JSON line: rps counts the replies of any status, as the other tools do;
    errors are the codes of 400 and up and the failures by kind; `success` is vegeta's ratio and
    `shortfall` the share of arrivals the generator could not send (its own limit)."""
    line = next((ln for ln in reversed(output.splitlines()) if ln.startswith("{")), None)
    if line is None:
        raise ValueError("loadscripts/spray printed no summary")
    s = json.loads(line)
    codes = {int(c) if c.isdigit() else c: n for c, n in s["codes"].items()}
    replies = sum(n for c, n in codes.items() if c != 0)
    errors = {str(c): n for c, n in codes.items() if c != 0 and (not isinstance(c, int) or c >= 400)}
    errors.update(s["errors"])
    return {"rps": replies / s["duration_s"] if s["duration_s"] else 0.0, "mean": s["mean"], "p50": s["p50"],
            "p95": s["p95"], "p99": s["p99"], "errors": errors, "success": s["success"],
            "shortfall": s["unsent"] / float(s["requests"]) if s["requests"] else 0.0}


def _locust(prefix, skip_s):
    """Locust's figures past its warm-up: rps from the per-second rows of the sutlab recorder
    (PREFIX_seconds.csv), p50/p95/p99 of every response of those seconds (their histograms
    merged; the medians of the per-second values only for a file without histograms, which
    understate the tail), the mean weighted by requests; errors by kind from
    PREFIX_failures.csv (its counts cover the whole run)."""
    rows = parsers.locust_seconds(prefix + "_seconds.csv")
    if rows:
        t0 = rows[0]["timestamp"]
        rows = [r for r in rows if r["timestamp"] - t0 >= skip_s] or rows
    n = sum(r["requests"] for r in rows)
    if not rows or n == 0:
        raise ValueError("Locust completed no request (%s_seconds.csv)" % prefix)
    out = {"rps": n / len(rows), "mean": sum((r["mean_ms"] or 0) * r["requests"] for r in rows) / n,
           "errors": parsers.locust_error_kinds(prefix + "_failures.csv")}
    out.update(_locust_percentiles(rows))
    return out


def _locust_percentiles(rows):
    """{p50, p95, p99} of the seconds' responses: nearest rank over their merged histograms of
    rounded times, never above the slowest response (as the recorder's own per-second ones)."""
    if any(r.get("histogram") is None for r in rows if r["requests"]):
        return {"p%d" % q: report.median(r["p%d_ms" % q] for r in rows if r["requests"]) for q in (50, 95, 99)}
    merged = {}
    for r in rows:
        for ms, count in r["histogram"].items():
            merged[ms] = merged.get(ms, 0) + count
    slowest = max(r["max_ms"] for r in rows if r["requests"])
    return {"p%d" % q: min(stats.counts_percentile(merged, q), slowest) for q in (50, 95, 99)}
