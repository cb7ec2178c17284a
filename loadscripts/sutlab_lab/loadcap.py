"""How many cores a load tool can use: the threads that do its work, read from its command line.

A load tool's capacity is not the threads that happened to run during a step: wrk's main thread
wakes to start and to print, a Locust master only aggregates, the Go runtime under hey starts
helper threads, and on a busy machine any of them may or may not be scheduled in a 3 s window. A
verdict that depends on which of them ran is noise (wrk -t1 once read as 98 % of 2 cores when its
main thread happened to run, and the step lost its verdict). So the capacity is what the tool
was told to use:

  wrk       -t/--threads N (wrk's default, 2, when not given)
  ab        1: one thread
  hey       -cpus N, else every core its cpuset allows (Go's GOMAXPROCS)
  locust    1 for each process that makes requests (a standalone run or a --worker); a --master 0
  httperf   1 for each process (loadscripts/spray starts as many as the rate needs)
  attacker.py  1: spray's asyncio attacker (IPv6 and names), one thread
  spray     0: the Python that starts and reads the httperf processes

capped by the cores the tool's processes may run on. A tree in which no process is one of these
has no declared capacity (None): the sampler then counts the threads that ran.
"""

import os

WRK_DEFAULT_THREADS = 2


def argv_of(pid):
    """The process's argv as a list of str, or None if it is gone."""
    # read by hand: psutil's cmdline() splits a one-NUL title ("nginx: worker process\0") at its
    # spaces, which would turn a worker into a master for lbcap
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0")[:-1]] or None


def program(argv):
    """(name, args) of the program an argv runs: an interpreter's script (python3 /usr/bin/locust,
    python3 loadscripts/spray) is named by the script."""
    name = os.path.basename(argv[0])
    args = argv[1:]
    if name.startswith("python"):
        while args and args[0].startswith("-"):
            args = args[1:]  # the interpreter's own options (-u, -B)
        if args:
            name, args = os.path.basename(args[0]), args[1:]
    return name, args


def _option(args, short, long_=None):
    """The value of an option given as `-t 4`, `-t4`, `-t=4`, `--threads 4` or `--threads=4`, or
    None; the last one given wins, as with getopt."""
    value = None
    names = [n for n in (short, long_) if n]
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                value = args[i + 1]
            elif a.startswith(n + "="):
                value = a[len(n) + 1:]
            elif n == short and len(n) == 2 and a.startswith(n) and len(a) > 2:
                value = a[2:]
    return value


def _count(text, default):
    try:
        n = int(text)
    except (TypeError, ValueError):
        return default
    return n if n >= 1 else default


def declared(argv, allowed):
    """The cores one process of a load tool was told to use, or None if it is no load tool this
    module knows. `allowed`: the cores its cpuset allows."""
    name, args = program(argv)
    if name == "wrk":
        return _count(_option(args, "-t", "--threads"), WRK_DEFAULT_THREADS)
    if name in ("ab", "httperf", "attacker.py"):
        return 1
    if name == "hey":
        # Go's flag package takes -cpus and --cpus alike
        return _count(_option(args, "-cpus") or _option(args, "--cpus"), allowed)
    if name == "locust":
        return 0 if "--master" in args else 1
    if name == "spray":
        return 0
    return None


def capacity(pids, allowed_of, parent_of):
    """The declared capacity of a load tier's processes (summed over those the module knows), or
    None when it knows none of them. allowed_of(pid): the cores that process may run on;
    parent_of(pid): its parent's pid. A child with its parent's argv was forked, not started: it
    is part of the parent's declared work and is not counted again."""
    total, known = 0, False
    for pid in pids:
        argv = argv_of(pid)
        if argv is None or argv == argv_of(parent_of(pid) or 0):
            continue
        n = declared(argv, allowed_of(pid))
        if n is not None:
            total, known = total + n, True
    return total if known else None
