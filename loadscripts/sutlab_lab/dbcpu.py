"""PostgreSQL's CPU budget in the lab: the postmaster's process tree moved into a cgroup of the v1
`cpu` controller whose CFS quota is `cores` of CPU (0.5: half a core), the way a bigger or smaller
database instance has more or fewer cores. The backends it forks later stay in the group. When the
block ends, every process of the group goes back to the root group and the group is removed.

    with dbcpu.budget(postmaster_pid, 0.5):
        rows = ctx.steps(...)

tiers.py reads the quota back (quota_cores) and caps the db tier's capacity with it, so a db share
is of its budget. Where the controller is not mounted or not writable, `available()` is False
and the caller says the stage cannot be replayed here.
"""

import contextlib
import errno
import os

from .services import procs

ROOT = "/sys/fs/cgroup/cpu"
PERIOD_US = 100000


def available(root=ROOT):
    return os.access(os.path.join(root, "cgroup.procs"), os.W_OK)


def _write(path, value):
    with open(path, "w") as f:
        f.write("%s\n" % value)


def _move(group, pid):
    try:
        _write(os.path.join(group, "cgroup.procs"), pid)
    except OSError as e:
        if e.errno != errno.ESRCH:  # a backend that ended meanwhile needs no moving
            raise


@contextlib.contextmanager
def budget(postmaster, cores, root=ROOT):
    """postmaster's tree limited to `cores` of CPU inside the block."""
    if cores <= 0:
        raise ValueError("a CPU budget is > 0 cores, not %r" % cores)
    group = os.path.join(root, "sutlab-lab-db-%d" % os.getpid())
    os.makedirs(group, exist_ok=True)
    try:
        _write(os.path.join(group, "cpu.cfs_period_us"), PERIOD_US)
        _write(os.path.join(group, "cpu.cfs_quota_us"), int(round(cores * PERIOD_US)))
        for pid in procs.tree_pids(postmaster):
            _move(group, pid)
        yield group
    finally:
        with open(os.path.join(group, "cgroup.procs")) as f:
            for pid in f.read().split():
                _move(root, pid)
        os.rmdir(group)


def quota_cores(pid, mounts=ROOT, proc="/proc"):
    """The CFS quota of pid's cgroup of the cpu controller, in cores; None when it has none."""
    try:
        with open(os.path.join(proc, str(pid), "cgroup")) as f:
            path = next((ln.split(":", 2)[2].strip() for ln in f if ln.split(":")[1] in ("cpu", "cpu,cpuacct")),
                        None)
        if not path or path == "/":
            return None
        with open(os.path.join(mounts, path.lstrip("/"), "cpu.cfs_quota_us")) as f:
            quota = int(f.read())
        with open(os.path.join(mounts, path.lstrip("/"), "cpu.cfs_period_us")) as f:
            period = int(f.read())
    except (OSError, ValueError, IndexError):
        return None
    return quota / period if quota > 0 and period > 0 else None
