"""How many cores a balancer can use: its CPU budget, read from its processes.

A balancer's capacity is what it was given, not the workers that happened to run during a step:
nginx hands connections to its workers unevenly, and a worker holding few of a run's keep-alive
connections may idle through a sampling interval while another is saturated; counting only the
busy ones would call a half-used budget full. So, as loadcap.py does for the load tools:

  nginx    its worker processes (argv "nginx: worker process": worker_processes N; the master
           only starts them and the cache processes do no proxying)
  haproxy  the threads of its process (nbthread N; HAProxy 2.6 runs no other thread, and without
           nbthread it starts one a core of its cpuset)

capped by the cores its processes may run on (infra/lab up --lb-cpus LIST: taskset). A tree with
neither has no declared capacity (None): the sampler then counts the threads that ran.
"""

import psutil

NGINX_WORKER = "nginx: worker process"


def declared(argv, threads):
    """The workers one process of a balancer runs, or None if it is no balancer this module
    knows (or a part of one that does no proxying: nginx's master). argv: its /proc cmdline as
    a list; threads: how many threads it has."""
    if not argv:
        return None
    head = argv[0]
    if head.startswith(NGINX_WORKER):
        return 1
    if head.startswith("nginx:"):
        return 0  # the master, a cache manager or loader
    name = head.rsplit("/", 1)[-1]
    if name == "haproxy":
        return max(1, threads)
    return None


def capacity(pids, argv_of, threads_of, allowed):
    """The declared capacity in cores of a balancer's processes, or None when none of them is
    nginx or HAProxy. argv_of(pid), threads_of(pid): a process's argv (None when gone) and its
    thread count; allowed: the cores its processes may run on together."""
    total, known = 0, False
    for pid in pids:
        argv = argv_of(pid)
        if argv is None:
            continue
        n = declared(argv, threads_of(pid))
        if n is not None:
            total, known = total + n, True
    if not known:
        return None
    return max(1, min(total, allowed))


def threads_of(pid):
    """A process's thread count, 0 when it is gone."""
    try:
        return psutil.Process(pid).num_threads()
    except psutil.Error:
        return 0
