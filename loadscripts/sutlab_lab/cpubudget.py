"""A tier's CPU budget in the lab: its process trees moved into a cgroup whose CFS quota is `cores`
of CPU (0.5: half a core), the way a smaller machine has fewer cores. A case's scale model
(cases/scale.py) gives each server tier of a write-up its vCPUs times the model's factor this way.
Processes the trees fork later (PostgreSQL's backends) stay in the group. When the block ends,
every process of the group goes back where the hierarchy's processes live and the group is removed.

    with cpubudget.budget({"db": [postmaster], "web": [sutlab]}, {"db": 0.5, "web": 0.5}):
        rows = ctx.steps(...)

Two hierarchies, found by detect():
  - cgroup v1 (this project's machines): the `cpu` controller mounted at ROOT/cpu; a group
    sutlab-lab-TIER-PID there with cpu.cfs_period_us and cpu.cfs_quota_us. Processes go back to
    the controller's root group.
  - cgroup v2 (a standard Debian 12 with systemd): the unified hierarchy at ROOT; a parent
    (sutlab-lab, or $SUTLAB_LAB_CGROUP: a subtree delegated to the lab, relative to ROOT) with
    +cpu in its cgroup.subtree_control, and a child TIER-PID in it with cpu.max "QUOTA PERIOD".
    A cgroup with controllers enabled for its children holds no process itself, so the parent
    is only ever a parent; processes go back to the cgroup each came from.

The period is short (PERIOD_US, 10 ms): a tier that spends its quota early waits at most that long
for the next, where the kernel's default 100 ms would stall a request for up to a tenth of a second.
tiers.py reads the quota back (quota_cores) and caps a tier's capacity with it, so a share is of
its budget. Where no hierarchy is writable, available() is False and the caller says the scale
model cannot run here (`case --full-speed` needs no budget)."""

import contextlib
import errno
import os

from .services import procs

ROOT = "/sys/fs/cgroup"
PERIOD_US = 10000
V2_PARENT = "sutlab-lab"


class V1:
    """The v1 `cpu` controller mounted at `mount`."""

    version = 1

    def __init__(self, mount):
        self.mount = mount

    def writable(self):
        return os.access(os.path.join(self.mount, "cgroup.procs"), os.W_OK)

    def make(self, name, cores):
        group = os.path.join(self.mount, "sutlab-lab-%s" % name)
        os.makedirs(group, exist_ok=True)
        _write(os.path.join(group, "cpu.cfs_period_us"), PERIOD_US)
        _write(os.path.join(group, "cpu.cfs_quota_us"), quota_us(cores))
        return group

    def home(self, _pid):
        return self.mount

    def quota(self, path):
        """(quota, period) in µs of the group at `path` (relative to the mount); None: no limit."""
        quota, period = (_read_int(os.path.join(self.mount, path.lstrip("/"), f))
                         for f in ("cpu.cfs_quota_us", "cpu.cfs_period_us"))
        return (quota, period) if quota is not None and period is not None and quota > 0 else None


class V2:
    """The unified hierarchy mounted at `mount`, the lab's groups under `parent` (relative)."""

    version = 2

    def __init__(self, mount, parent=V2_PARENT):
        self.mount, self.parent = mount, parent.strip("/")

    def writable(self):
        top = os.path.join(self.mount, self.parent)
        return "cpu" in _read(os.path.join(self.mount, "cgroup.controllers")).split() and (
            os.access(top, os.W_OK) if os.path.isdir(top) else os.access(os.path.dirname(top), os.W_OK))

    def make(self, name, cores):
        top = os.path.join(self.mount, self.parent)
        os.makedirs(top, exist_ok=True)
        if "cpu" not in _read(os.path.join(top, "cgroup.subtree_control")).split():
            _write(os.path.join(top, "cgroup.subtree_control"), "+cpu")
        group = os.path.join(top, name)
        os.makedirs(group, exist_ok=True)
        _write(os.path.join(group, "cpu.max"), "%d %d" % (quota_us(cores), PERIOD_US))
        return group

    def home(self, pid):
        """The cgroup pid lives in now (its 0:: line), to go back to when the budget ends."""
        path = cgroup_path(pid, self.version)
        return os.path.join(self.mount, (path or "/").lstrip("/"))

    def quota(self, path):
        words = _read(os.path.join(self.mount, path.lstrip("/"), "cpu.max")).split()
        if len(words) != 2 or words[0] == "max":
            return None
        try:
            quota, period = int(words[0]), int(words[1])
        except ValueError:
            return None
        return (quota, period) if quota > 0 else None


def detect(root=ROOT, parent=None):
    """The hierarchy the lab can budget CPU with (V1 or V2), or None."""
    if os.path.exists(os.path.join(root, "cgroup.controllers")):
        return V2(root, parent or os.environ.get("SUTLAB_LAB_CGROUP") or V2_PARENT)
    if os.path.isdir(os.path.join(root, "cpu")):
        return V1(os.path.join(root, "cpu"))
    return None


def available(root=ROOT):
    h = detect(root)
    return h is not None and h.writable()


def quota_us(cores):
    if cores <= 0:
        raise ValueError("a CPU budget is > 0 cores, not %r" % cores)
    return max(1000, int(round(cores * PERIOD_US)))


@contextlib.contextmanager
def budget(roots, cores, root=ROOT, hierarchy=None):
    """The trees of roots[tier] (root pids) limited to cores[tier] inside the block, for each tier
    of `cores` (a tier with no root pid is left alone). Yields {tier: group path}."""
    for tier, c in cores.items():
        quota_us(c)  # refuse a budget of nothing before anything moves
    h = hierarchy or detect(root)
    if h is None or not h.writable():
        raise OSError(errno.EACCES, "no writable cgroup cpu controller under %s" % root)
    groups, homes = {}, {}
    try:
        for tier, c in cores.items():
            pids = [p for r in roots.get(tier) or [] for p in procs.tree_pids(r)]
            if not pids:
                continue
            groups[tier] = h.make("%s-%d" % (tier, os.getpid()), c)
            for pid in pids:
                homes.setdefault(h.home(pid), []).append(pid)
                _move(groups[tier], pid)
        yield groups
    finally:
        for tier, group in groups.items():
            back = {pid: home for home, pids in homes.items() for pid in pids}
            for pid in _members(group):
                _move(back.get(pid) or (h.mount if h.version == 1 else _first(homes) or h.mount), pid)
            _remove(group)


@contextlib.contextmanager
def empty(name, cores, root=ROOT, hierarchy=None):
    """A group of `cores` with no process yet, for one started inside the block to join itself
    (the load tool: stepped.LOAD_GROUP, through its preexec_fn, before it execs). Yields the
    group's cgroup.procs path; on the way out its members go back and it is removed."""
    quota_us(cores)
    h = hierarchy or detect(root)
    if h is None or not h.writable():
        raise OSError(errno.EACCES, "no writable cgroup cpu controller under %s" % root)
    group = h.make("%s-%d" % (name, os.getpid()), cores)
    home = h.mount if h.version == 1 else h.home(os.getpid())
    try:
        yield os.path.join(group, "cgroup.procs")
    finally:
        for pid in _members(group):
            _move(home, pid)
        _remove(group)


def join(procs_file):
    """Moves the calling process into the group whose cgroup.procs is procs_file (a preexec_fn's
    step: the child joins before it execs, so every thread and child of the tool is in it)."""
    with open(procs_file, "w") as f:
        f.write("%d\n" % os.getpid())


def cgroup_path(pid, version=1, proc="/proc"):
    """pid's cgroup path: of the v1 cpu controller, or of the v2 unified hierarchy (its 0:: line)."""
    try:
        with open(os.path.join(proc, str(pid), "cgroup")) as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) != 3:
                    continue
                if version == 2 and parts[0] == "0" and parts[1] == "":
                    return parts[2]
                if version == 1 and "cpu" in parts[1].split(","):
                    return parts[2]
    except OSError:
        return None
    return None


def _budgeted(pid, root, proc, hierarchy):
    """(hierarchy, pid's cgroup path, (quota, period) in µs) when that group has a CFS quota, else None."""
    h = hierarchy or detect(root)
    path = cgroup_path(pid, h.version, proc) if h is not None else None
    q = h.quota(path) if path and path != "/" else None
    return (h, path, q) if q and q[1] > 0 else None


def quota_cores(pid, root=ROOT, proc="/proc", hierarchy=None):
    """The CFS quota of pid's cgroup, in cores; None when it has none (or no hierarchy is there)."""
    b = _budgeted(pid, root, proc, hierarchy)
    return b[2][0] / b[2][1] if b else None


def throttled_s(pid, root=ROOT, proc="/proc", hierarchy=None):
    """Seconds of periods in which pid's cgroup ran out of its quota so far (cpu.stat's nr_throttled
    times the period, the same in v1 and v2); None when it has no quota. Over a step, its share of
    the step is how often the tier was at its budget's limit, which its CPU over the budget
    understates for several threads under a quota smaller than a scheduler slice."""
    b = _budgeted(pid, root, proc, hierarchy)
    if not b:
        return None
    h, path, (_, period) = b
    throttled = _stat(os.path.join(h.mount, path.lstrip("/"), "cpu.stat"), "nr_throttled")
    return None if throttled is None else throttled * period / 1e6


def machine_cpu_s(root=ROOT):
    """CPU seconds every task of the machine used since boot, from the root cgroup's own count
    (v1: cpuacct/cpuacct.usage in ns; v2: cpu.stat's usage_usec), else from /proc/stat's ticks.
    Why not /proc/stat first: its user and system columns are sampled at each tick, and under
    the budgets' quotas tasks that run for a fraction of a tick and are throttled get charged
    whole ticks: measured here, 1.09 and 1.28 cores from /proc/stat against 0.96 and 0.97 from
    cpuacct.usage and 1.01 and 1.03 summed over the processes, for the same two steps."""
    ns = _read_int(os.path.join(root, "cpuacct", "cpuacct.usage"))
    if ns is not None:
        return ns / 1e9
    us = _stat(os.path.join(root, "cpu.stat"), "usage_usec")
    return us / 1e6 if us is not None else procs.cpu_stat()[0] / procs.CLK_TCK


def _stat(path, key):
    """A counter of a cgroup's cpu.stat ("key value" lines), or None."""
    for line in _read(path).splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == key and words[1].isdigit():
            return int(words[1])
    return None


def _first(homes):
    return next(iter(homes), None)


def _members(group):
    try:
        with open(os.path.join(group, "cgroup.procs")) as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def _move(group, pid):
    try:
        _write(os.path.join(group, "cgroup.procs"), pid)
    except OSError as e:
        if e.errno != errno.ESRCH:  # a backend that ended meanwhile needs no moving
            raise


def _remove(group):
    """rmdir of a cgroup (a real one goes with its control files; a fabricated test tree keeps
    them as plain files, so those go first)."""
    try:
        os.rmdir(group)
    except OSError as e:
        if e.errno != errno.ENOTEMPTY:
            raise
        for f in os.listdir(group):
            os.unlink(os.path.join(group, f))
        os.rmdir(group)


def _write(path, value):
    with open(path, "w") as f:
        f.write("%s\n" % value)


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _read_int(path):
    try:
        return int(_read(path).strip())
    except ValueError:
        return None
