"""The lab's process roots: the pids of what `infra/lab up` started, read from the pid files of the
checkout's var/ (the scaled lab's instances and front, the netns lab's, else the single sutlab;
PostgreSQL's postmaster and Redis), for the per-tier sampler (tiers.Sampler) that steps and the
cases run against the lab."""

import os

from . import procs


def _pidfile(path):
    pid = procs.read_pidfile(path)
    return pid if pid is not None and procs.pid_alive(pid) else None


def _tier_dir(path):
    """The sutlab instances and the front of an `--instances`/`--netns` tier state directory."""
    web = []
    for name in sorted(os.listdir(path)) if os.path.isdir(path) else ():
        if name.startswith("sutlab-") and name.endswith(".pid"):
            pid = _pidfile(os.path.join(path, name))
            if pid:
                web.append(pid)
    lb = _pidfile(os.path.join(path, "lb.pid"))
    return web, [lb] if lb else []


def roots(var):
    """{tier: [pid, ...]} of the lab whose state is under `var` (the checkout's var/): the scaled
    lab (var/scale), else the netns lab (var/netns), else the single server; PostgreSQL's
    postmaster and Redis from their own directories. Tiers that do not run are left out, so an
    empty dict means no lab."""
    roots = {}
    web, lb = _tier_dir(os.path.join(var, "scale"))
    home = var
    if not web and os.path.exists(os.path.join(var, "netns", "netns.conf")):
        web, lb = _tier_dir(os.path.join(var, "netns", "web"))
        home = os.path.join(var, "netns") if web else var
    if not web:
        pid = _pidfile(os.path.join(var, "sutlab.pid"))
        web = [pid] if pid else []
    for tier, pids in (("web", web), ("lb", lb)):
        if pids:
            roots[tier] = pids
    db = _pidfile(os.path.join(home, "pg", "data", "postmaster.pid"))
    redis = _pidfile(os.path.join(home, "redis", "redis.pid"))
    if db:
        roots["db"] = [db]
    if redis:
        roots["redis"] = [redis]
    return roots
