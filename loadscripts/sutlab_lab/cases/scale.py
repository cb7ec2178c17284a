"""A case's scale model: the write-up's machines mapped onto this one.

A write-up ran each tier on a machine of its own (a 2-vCPU web server, a database, a load generator
apart); the lab has two cores for all of them, and runs a C server ten times faster than PHP or
Spring. A case declares the write-up's Topology (each tier's machine with the line that says so,
the load model, what the write-up leaves unstated) and one scale factor s, cores here for a vCPU
there. The Model then

  - gives each server tier s x its vCPUs of CPU (a CFS quota: cpubudget.py; web, db, redis, lb), so
    the tiers keep the write-up's proportions; the load generator, which ran on machines of its
    own, stays out of the model on what is left, and a check holds that it did not limit unless the
    write-up says it did;
  - runs the write-up's clock s times slower: a request's CPU takes 1/s as long on s of a core, so
    rates come out s x the write-up's and times 1/s x; users are the write-up's, a think time is
    the write-up's / s. A write-up's rate is compared as rate(x) = s x, its time as time(x) = x / s;
  - spends what the write-up's stack spent and sutlab does not (PHP's CPU per request, the
    database's, a think time the write-up left unstated), each a knob fitted on one named row of
    the write-up (Fit): the row's figures give the value, with its arithmetic printed as `set`,
    and no counted check may read a row a fit used (rows_fitted; a unit test holds every case to
    it). Every figure no fit read is a prediction.

At full speed (`case --full-speed`) there is no model: no budget, no knob, the write-up's think
time, and only the bottleneck part of the verdict is judged (checks.verdict), which is what a lab
that points its own load tool at sutlab sees.
"""

from ..report import table
from . import checks

SERVER_TIERS = ("web", "db", "redis", "lb")
# the load tier is budgeted too when the write-up's load generator is one of the model's machines
# (a Machine("load", ..., vcpu) with its vCPUs stated): the write-up named it the limit somewhere


class Machine:
    """One tier's machine in the write-up: vcpu None when the write-up does not state it."""

    def __init__(self, tier, what, vcpu, cite):
        self.tier, self.what, self.vcpu, self.cite = tier, what, vcpu, cite


class Topology:
    """The write-up's machines, its load model (words, with lines) and what it leaves unstated."""

    def __init__(self, machines, load, unstated=()):
        self.machines, self.load, self.unstated = list(machines), load, list(unstated)

    def vcpus(self, tier):
        return sum(m.vcpu or 0 for m in self.machines if m.tier == tier)


class Fit:
    """A knob fitted on one row of the write-up (cite: "000 L168"): figures are the row's numbers
    it reads, compute(figures, model) gives (value, arithmetic), from the row, the scale and what
    the model measured of sutlab itself (model.measured: calibrate.py) or the fits before it.
    with_figures() replaces some, for a test that changes the row and sees the value move."""

    def __init__(self, knob, cite, figures, compute, unit=""):
        if len(checks.lines(cite)) != 1:
            raise ValueError("a fit reads one row: %r" % cite)
        self.knob, self.cite, self.figures, self.compute, self.unit = knob, cite, dict(figures), compute, unit

    def with_figures(self, **figures):
        return Fit(self.knob, self.cite, dict(self.figures, **figures), self.compute, self.unit)

    def value(self, model):
        return self.compute(self.figures, model)[0]

    def check(self, model):
        value, arithmetic = self.compute(self.figures, model)
        shown = ("%.4g%s" % (value, self.unit)) if isinstance(value, (int, float)) else str(value)
        return checks.set_by("fitted: %s" % self.knob, self.cite,
                             ", ".join("%s %s" % (k, "%g-%g" % v if isinstance(v, tuple) else v)
                                       for k, v in self.figures.items()), arithmetic, shown)


class Model:
    """The scale model of a case (s: cores here per vCPU there); full=True: sutlab at its own speed
    (no model: s = 1 for the comparisons, no budget, knobs at their full-speed values)."""

    def __init__(self, topology, s, fits=(), why_s="", full=False, measured=None):
        self.topology, self.s, self.fits, self.why_s, self.full = topology, s, list(fits), why_s, full
        self.measured = dict(measured or {})  # what calibrate.py measured of sutlab itself, for the fits
        self.vcpus_now = {}  # a stage's machines where they differ from the topology's (stage())
        if not full and not 0 < s <= 1:
            raise ValueError("a scale factor is a share of a core per vCPU, in (0, 1]: %r" % s)

    # -- what the run uses

    def budgets(self):
        """{tier: cores} of the server tiers whose vCPUs the write-up states (for the stage that
        runs: stage()); {} at full speed."""
        if self.full:
            return {}
        vcpus = {t: self.vcpus_now.get(t, self.topology.vcpus(t)) for t in SERVER_TIERS + ("load",)}
        return {t: self.s * v for t, v in vcpus.items() if v}

    def stage(self, **vcpus):
        """A stage of the write-up on other machines (two web servers: web=4; a bigger database:
        db=8): the budgets follow until the next stage() (none given: the topology's again)."""
        self.vcpus_now = dict(vcpus)

    def knob(self, name, full_speed=0):
        """A fitted knob's value (full_speed at full speed)."""
        if self.full:
            return full_speed
        for f in self.fits:
            if f.knob == name:
                return f.value(self)
        raise KeyError("no fit for %s" % name)

    def think(self, seconds):
        """A think time of the write-up's, in the model's slower clock."""
        return seconds if self.full else seconds / self.s

    # -- what the checks compare with

    def rate(self, x):
        return x if self.full else x * self.s

    def time(self, x):
        return x if self.full else x / self.s

    def rows_fitted(self):
        """{(write-up, line)} the fits read."""
        return {ln for f in self.fits for ln in checks.lines(f.cite)}

    def set_checks(self):
        """The scale and every fit, as `set` checks: printed, never counted."""
        if self.full:
            return [checks.set_by("scale", self.topology.machines[0].cite, "the write-up's machines",
                                  "full speed: no model, every tier at this machine's speed", "1")]
        return [checks.set_by("scale: cores here per vCPU there", self.topology.machines[0].cite,
                              "%g vCPU of server tiers" % sum(m.vcpu or 0 for m in self.topology.machines
                                                              if m.tier in SERVER_TIERS), self.why_s,
                              "%g" % self.s)] + [f.check(self) for f in self.fits]

    def section(self, predictions):
        """The topology, the scale and the fits, as the case prints them; predictions: how many
        counted checks the run makes."""
        budgets = self.budgets()
        rows = [[m.tier, m.what, "-" if m.vcpu is None else "%g" % m.vcpu, m.cite,
                 ("%.2f core (CFS quota)" % budgets[m.tier]) if m.tier in budgets else
                 ("the rest of the machine, not in the model" if m.tier == "load" else "not budgeted")]
                for m in self.topology.machines]
        head = ("Full speed: no scale model; sutlab and every tier at this machine's speed, only the "
                "bottleneck part judged." if self.full else
                "Scale model: s = %g core per vCPU (%s); the clock runs %.3gx slower: the write-up's rates "
                "are compared as x%g, its times as x%.3g. %d value%s fitted, each on one row, %d counted "
                "checks (predictions)." % (self.s, self.why_s, 1 / self.s, self.s, 1 / self.s, len(self.fits),
                                            "" if len(self.fits) == 1 else "s", predictions))
        text = [head, "", table(["tier", "the write-up's machine", "vCPU", "line", "here"], rows, framed=True), "",
                "Load model: " + self.topology.load]
        if self.topology.unstated:
            text += ["", "Not stated by the write-up: " + "; ".join(self.topology.unstated) + "."]
        return "\n".join(text)
