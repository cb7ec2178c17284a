"""What every case uses: the lab (infra/lab, the one command a case runs: it is a shell script),
stepped runs (steps' Python API: commands/steps.prepare and execute, in this process) and their
rows, the arms flipped on the engine, and the output directory (the checks and the verdict are
checks.py's)."""

import contextlib
import csv
import os
import re
import shlex
import subprocess
import time

from .. import LOADSCRIPTS, REPO, cpubudget, engine, loadargv, loads, stepped
from ..cli import Usage
from ..commands import plot, steps as steps_command
from ..errors import RunError
from ..report import MISSING, fmt, ratio, table
from ..services import lab, procs
from ..services.procs import loadavg  # noqa: F401 (the cases take it from here)
from . import checks

LAB = os.path.join(REPO, "infra", "lab")
STEPS = os.path.join(LOADSCRIPTS, "steps")


class Context:
    """A case's run: its options, its output directory, and a log of every command."""

    def __init__(self, name, out, duration=None, netns=False, progress=print, load_workers=None, load_cpus=None,
                 monitoring=False, prometheus="auto", full_speed=False):
        self.name, self.out, self.duration, self.netns = name, out, duration, netns
        # --full-speed: no scale model (cases/scale.py): no budget, no fitted knob, the bottleneck judged
        self.full_speed = full_speed
        self.model = None  # the case's scale model, once its run() made it (model())
        self.outside = []  # each step's CPU outside the tiers (cores): a busy machine, said in the verdict
        self.unbudgeted = set()  # tiers the model budgets and the lab did not run: said in the verdict
        # --monitoring: every `infra/lab up` with it; --prometheus: given to every stage's steps
        self.monitoring, self.prometheus = monitoring, prometheus
        # --load-workers/--load-cpus: given to every stage whose tool can take them (steps' options)
        self.load_workers, self.load_cpus = load_workers, load_cpus
        self.quick = duration is not None  # --duration: shortened steps, and the long extras left out
        self.repo, self.url = REPO, None
        self.progress = progress
        self.commands = []
        self.in_force = None  # the lab's flags, as the case last brought it up or restarted it
        # the lab's saved flags (infra/lab up/restart -- FLAGS keeps them for the next up): the
        # case's arms overwrite them, and restore_lab_flags() puts the user's back
        self._flags_file = os.path.join(os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var"), "sutlab.flags")
        try:
            with open(self._flags_file) as f:
                self._saved_flags = f.read()
        except OSError:
            self._saved_flags = None
        os.makedirs(out, exist_ok=True)

    def restore_lab_flags(self):
        """The lab's saved flags as they were before the case (none: none saved), so that the
        user's next `infra/lab up` does not bring the case's last arm back."""
        if self._saved_flags is None:
            if os.path.exists(self._flags_file):
                os.unlink(self._flags_file)
            return
        with open(self._flags_file, "w") as f:
            f.write(self._saved_flags)

    def seconds(self, full):
        """A step's seconds: the write-up's, or --duration when given (a quick look)."""
        return self.duration or full

    def warmup(self, full):
        """A step's warm-up: the case's, or at most --duration for a quick look."""
        return min(full, self.duration) if self.quick else full

    def scale(self, topology, s, fits=(), why_s=""):
        """The case's scale model (at --full-speed, none: scale.Model(full=True)), kept on the
        context: ctx.steps puts each server tier under its budget while it measures."""
        from .scale import Model
        self.model = Model(topology, s, fits, why_s, full=self.full_speed)
        if self.model.budgets() and not cpubudget.available():
            raise RunError("the scale model needs a writable cgroup cpu controller (cpubudget.py), which this "
                           "machine lacks: run the case with --full-speed (sutlab at its own speed, the "
                           "bottleneck part judged)")
        return self.model

    def record(self, argv, env=None):
        """argv (and the variables added for it) into the commands' list and OUT/commands.log."""
        self.note("$ " + " ".join(["%s=%s" % (k, shlex.quote(v)) for k, v in sorted((env or {}).items())] +
                                  [shlex.quote(a) for a in argv]))

    def run(self, argv, what, timeout=1800, env=None):
        """argv to completion, its output appended to OUT/commands.log; RunError on failure.
        env: variables added for it (a wrk script's WRK_HEADERS)."""
        self.record(argv, env)
        with open(os.path.join(self.out, "commands.log"), "a") as log:
            proc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=timeout,
                                  env=dict(lab_env(), **(env or {})), preexec_fn=procs.die_with_parent)
        if proc.returncode != 0:
            raise RunError("%s failed (exit %d): see %s" % (what, proc.returncode,
                                                           os.path.join(self.out, "commands.log")))

    def note(self, line):
        """A line into OUT/commands.log, from a case that runs its tools itself (a "$ " line is a
        command, kept in the report's list of them too)."""
        if line.startswith("$ "):
            self.commands.append(line[2:])
        with open(os.path.join(self.out, "commands.log"), "a") as log:
            log.write(line + "\n")

    def lab(self, *args):
        if args[:1] == ("up",) and self.monitoring:
            args = ("up", "--monitoring") + tuple(args[1:])
        self.run([LAB] + list(args), "infra/lab %s" % args[0])

    def up(self, size, flags, *opts):
        """The lab down, then up anew (the netns lab with --netns) at `size` with `flags`; opts:
        more of `infra/lab up`'s options (--instances 2 --lb haproxy, --rate 10mbit)."""
        self.lab("down")
        self.lab("up", *(["--netns"] if self.netns else []), *opts, "--size", size, "--", *flags)
        self.in_force = list(flags)

    def pin_web(self, cores):
        """Each sutlab of the lab (each instance of a scaled one) on a core of its own, taken in
        turn from `cores`: the write-up's web tier had its cores, not the machine's."""
        var = os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var")
        web = lab.roots(var).get("web") or []
        if not web:
            raise RunError("no sutlab of the lab to pin (%s)" % var)
        for i, pid in enumerate(web):
            procs.pin_tree(pid, {cores[i % len(cores)]})
        return web

    def load_args(self, args):
        """What --load-workers and --load-cpus add to a stage's steps arguments: the workers where
        its tool can have them (wrk, hey, Locust: sutlab_lab/loads.py), the cores always (they
        replace the cores a case chose for its load)."""
        out = []
        tool = args[args.index("--tool") + 1] if "--tool" in args[:-1] else None
        if self.load_workers not in (None, "1") and tool in loads.SCALABLE:
            out += ["--load-workers", str(self.load_workers)]
        if self.load_cpus:
            out += ["--load-cpus", self.load_cpus]
        return out

    def steps(self, label, args, in_client=None, env=None, cores=None, budgeted=True):
        """A stepped run into OUT/label; its rows (steps.csv as dicts, numbers as floats; its table
        is in OUT/commands.log, as steps printed it). in_client: in the netns lab's client namespace (default: --netns), which
        only a process of its own can enter (infra/lab exec-client), so there steps runs as its
        command; here it runs in this process. env: variables for its load tool; cores: the
        cores of the run and its load tool (unless --load-cpus chose them)."""
        out = os.path.join(self.out, label)
        argv = ["--out", out, "--prometheus", self.prometheus] + list(args) + self.load_args(list(args))
        cores = None if self.load_cpus else cores
        shown = (["taskset", "-c", ",".join(map(str, cores))] if cores else []) + ["/usr/bin/python3", STEPS] + argv
        self.progress("case %s: %s" % (self.name, label))
        with self.budgeted() if budgeted else contextlib.nullcontext():
            if self.netns if in_client is None else in_client:
                self.run([LAB, "exec-client", "--"] + shown, "steps (%s)" % label, env=env)
            else:
                self.record(shown, env)
                stage(argv, os.path.join(self.out, "commands.log"), "steps (%s)" % label, env, cores)
        with open(os.path.join(out, "steps.csv"), newline="") as f:
            # words stay words: an errors cell of "0" is a count of kinds, not a figure
            rows = [{k: v if k in ("errors", "verdict", "reason") else _number(v) for k, v in r.items()}
                    for r in csv.DictReader(f)]
        self.outside += [r["outside_cores"] for r in rows if isinstance(r.get("outside_cores"), float)]
        return rows

    @contextlib.contextmanager
    def budgeted(self):
        """The lab's server tiers under the scale model's CPU budgets for the block (none without a
        model or at full speed): applied after every restart, since a restarted server is a new
        process outside the budget's group."""
        budgets = self.model.budgets() if self.model is not None else {}
        if not budgets:
            yield
            return
        load = budgets.pop("load", None)
        roots = lab.roots(os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var"))
        # a tier the lab does not run (a database of SUTLAB_LAB_DB_URL's) cannot be budgeted:
        # the run goes on, and the verdict line says so
        self.unbudgeted |= {t for t in budgets if not roots.get(t)}
        budgets = {t: c for t, c in budgets.items() if roots.get(t)}
        with cpubudget.budget(roots, budgets) as groups, \
                (cpubudget.empty("load", load) if load else contextlib.nullcontext()) as load_group:
            self.note("# CPU budgets: %s" % ", ".join(["%s %.2f core (%s)" % (t, budgets[t], groups[t])
                                                      for t in sorted(groups)] + (["load %.2f core" % load] if load else [])))
            stepped.LOAD_GROUP = load_group
            try:
                yield
            finally:
                stepped.LOAD_GROUP = None

    def busy_machine(self, before):
        """What the verdict line warns of, or None: a load average over 1.0 before the run, or CPU
        outside the tiers of 0.25 core or more in a step (another process beside the run)."""
        said = []
        try:
            if float(before.split()[0]) > 1.0:
                said.append("the load average before the run was %s, over 1.0" % before.split()[0])
        except (ValueError, IndexError, AttributeError):
            pass
        if self.outside and max(self.outside) >= 0.25:
            said.append("work outside the tiers took up to %.2f core in a step" % max(self.outside))
        busy = "; ".join(said) + ": a busy machine, not a figure" if said else None
        if self.unbudgeted:
            busy = "; ".join(filter(None, [busy, "%s not the lab's own, so not under the scale model's budget" %
                                           ", ".join(sorted(self.unbudgeted))]))
        return busy


def locust_ramp(ctx, label, users, ramp, tags, options, extra, hold=10):
    """Locust headless on ctx.url: `users` ramped up over `ramp` seconds, then `hold` s more, with its
    1 s history (OUT/label_stats_history.csv) and its curves beside it (plot's PNGs). tags, options
    and extra are the locustfile's arguments, in that order on its command line around the ramp's
    (commands.log shows it); in the netns lab's client namespace with --netns."""
    prefix = os.path.join(ctx.out, label)
    argv = loadargv.locust_ramp(os.path.join(LOADSCRIPTS, "locust", "locustfile.py"), ctx.url, users, ramp,
                                ramp + hold, prefix, tags, options, extra)
    if ctx.netns:
        argv = [os.path.join(ctx.repo, "infra", "lab"), "exec-client", "--"] + argv
    ctx.progress("case %s: %s (%d users over %d s)" % (ctx.name, label, users, ramp))
    ctx.run(argv, "locust (%s)" % label, timeout=ramp + hold + 300)
    try:
        plot.pngs_of(prefix + "_stats_history.csv")
    except (ValueError, OSError, ImportError) as e:
        raise RunError("plot (%s): %s" % (label, e))


def stage(argv, log_path, what, env=None, cores=None):
    """steps' run of argv in this process, as its command would run it: its output appended to
    log_path, the lab's environment (lab_env, plus env) for the tools it starts, on `cores` (the
    calling thread's affinity, which the sampler's threads and the load tool inherit) when given.
    RunError when it refuses the options or a step fails."""
    with open(log_path, "a") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log), \
            _environ(dict(lab_env(), **(env or {}))), _affinity(cores):
        try:
            code = steps_command.execute(*steps_command.prepare(argv))
        except (Usage, RunError) as e:
            print("loadscripts/steps: %s" % e)
            code = 2
        except SystemExit as e:  # argparse's refusal, its line already in the log
            code = e.code
    if code != 0:
        raise RunError("%s failed (exit %d): see %s" % (what, code, log_path))


@contextlib.contextmanager
def _environ(env):
    """os.environ replaced by env for the block (the tools a stage starts inherit it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _affinity(cores):
    """The calling thread on `cores` for the block (taskset's effect on a command), then back."""
    if not cores:
        yield
        return
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(cores))
    try:
        yield
    finally:
        os.sched_setaffinity(0, saved)


class LabRestart:
    """The case's lab as the engine's target: each arm's flags through `infra/lab restart`, unless
    the lab already has them (brought up with them)."""

    def __init__(self, ctx):
        self.ctx = ctx

    def apply(self, flags, label):
        if list(flags) != self.ctx.in_force:
            self.ctx.lab("restart", "--", *flags)
            self.ctx.in_force = list(flags)


def flipped(ctx, base, settings, steps_args, size="tiny", reseed=False, up_args=(), env=None):
    """The lab up with the `base` flags (reseeded at `size` when asked: `up` keeps a database that
    holds data; up_args: more of `infra/lab up`'s options, such as --rate), then the sweep of
    `settings`, (label, flags) each, with base + flags; down at the end, whatever happened.
    {label: rows}."""
    ctx.up(size, base, *up_args)
    try:
        if reseed:
            ctx.lab("seed", size)
        return sweep(ctx, [(label, list(base) + list(flags)) for label, flags in settings], steps_args, env=env)
    finally:
        ctx.lab("down")


def flip_run(ctx, base, settings, steps_args, what, header, keys, judge, **kw):
    """A case that flips settings (flipped, **kw its options), declared: (sections, judge(runs)).
    The sections: `what` (the load, in words) with the load average before and after, and the
    measured table (header, and the keys of each row's cells); judge: the case's checks."""
    before = loadavg()
    runs = flipped(ctx, base, settings, steps_args, **kw)
    return (["%s; load average %s before, %s after" % (what, before, loadavg()), runs_table(header, runs, keys)],
            judge(runs))


def sweep(ctx, settings, steps_args, env=None, pin=None, cores=None):
    """Each (label, flags) of `settings` as an arm on the engine, on the lab that is up: restarted
    with its flags, each sutlab pinned to the `pin` cores (when given), one stepped run into
    OUT/label (env: variables for its load tool; cores: its load's). {label: rows}."""
    def measure(arm, _rnd, _seconds):
        if pin:
            ctx.pin_web(pin)
        return ctx.steps(arm.name, steps_args, env=env, cores=cores)
    arms = [engine.Arm(label, flags=list(flags)) for label, flags in settings]
    runs = engine.run_on(LabRestart(ctx), arms, measure, rounds=1, seconds=None)
    return {label: rows[0] for label, rows in runs.items()}


def load(tool, levels, seconds, warmup=2, script=None, path=None):
    """A stage's load as steps' options: the tool, its wrk script (a file of loadscripts/wrk) or
    its path, the levels ("8,32"), the measured and the warm-up seconds of each."""
    levels = ",".join(map(str, levels)) if isinstance(levels, (list, tuple)) else levels
    what = (["--script", os.path.join(LOADSCRIPTS, "wrk", script)] if script else []) + \
        (["--path", path] if path else [])
    return ["--tool", tool] + what + ["--levels", str(levels), "--duration", str(seconds), "--warmup", str(warmup)]


def runs_table(header, runs, keys):
    """Every arm's rows ({label: rows}), a line per level (cells), as a framed Markdown table."""
    return table(header, [cells(label, r, keys) for label in runs for r in runs[label]], framed=True)


def cells(label, r, keys):
    """A measured row's cells: the label, the level, then each key (busy_* as %, an open model's
    success as % to 0.1, *_ms to 0.1; report.MISSING when it is missing)."""
    out = [label, "%d" % r["level"]]
    for k in keys:
        v = r.get(k)
        if not isinstance(v, float):
            out.append(str(v) if v not in (None, "") else MISSING)
        elif k.startswith("busy_") or k == "success":
            out.append(fmt(100 * v, 1 if k == "success" else 0))
        else:
            out.append(fmt(v, 1 if k.endswith("_ms") else 0))
    return out


def row_at(rows, level):
    """The row of `rows` at `level` ({} when that level was not run: its checks then fail as
    missing)."""
    return next((r for r in rows if r.get("level") == level), {})


def top(rows, key="rps"):
    """The most of the rows' `key` (a failed step's empty cell counts as none); None when no row has it."""
    return max((r[key] for r in rows if isinstance(r.get(key), float)), default=None)


def num(row, key):
    """row[key] as a number, or None (an empty steps.csv cell reads as "")."""
    v = row.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def error_count(row, *kinds):
    """How many of a steps.csv row's failures are of these kinds ("refused", "reset/EOF", "502",
    ...): steps writes them as "kind:n kind:n"."""
    total = 0
    for kv in str(row.get("errors") or "").split():
        k, _, n = kv.rpartition(":")
        if k in kinds:
            total += int(n)
    return total


def failures(row):
    """Every failure of a steps.csv row, whatever its kind ("kind:n kind:n", a kind may hold spaces)."""
    return sum(int(n) for n in re.findall(r":(\d+)(?=\s|$)", str(row.get("errors") or "")))


def over(a, b, key):
    """a[key] / b[key], the measured side of a ratio check; None when either is missing or b's is 0."""
    return ratio(num(a, key), num(b, key))


def cpu_share(row, tier):
    """A tier's own CPU over its capacity (0..1) from a steps.csv row (cpu_TIER_pct, % of one
    core; capacity_TIER, cores); None when the tier was not sampled. The write-ups' CPU columns
    are CPU: busy_TIER adds the time runnable waiting for a core, which they do not count."""
    pct, cap = num(row, "cpu_%s_pct" % tier), num(row, "capacity_%s" % tier)
    return pct / 100.0 / cap if pct is not None and cap else None


def cpu_range(what, cite, low_high, share):
    """A CPU figure the write-up gives as a range (low_high = (65, 90), "65-90") against a measured
    share (0..1): the range's ends widened by a CPU share's checks.SHARE_POINTS, as a single
    figure's would be."""
    low, high = low_high
    return checks.value(what, cite, "%g-%g %%" % (low, high), None if share is None else share * 100,
                        max(0, low - checks.SHARE_POINTS), min(100, high + checks.SHARE_POINTS), unit=" %")


def lab_env():
    """The environment of the commands a case runs: no SUTLAB_<FLAG> variable (sutlab would read
    it as a flag), but the lab's own settings (SUTLAB_LAB_*: ports, state directory, services)
    and the netns lab's SUTLAB_URL."""
    keep = {k: v for k, v in os.environ.items() if k.startswith("SUTLAB_LAB_") or k == "SUTLAB_URL"}
    return procs.clean_env(keep)


def _number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def stamp():
    return time.strftime("%Y%m%d-%H%M%S")
