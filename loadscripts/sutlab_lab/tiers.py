"""Where the pressure is: the tiers of a run, and what each used during a step.

A tier is a set of process trees: web (every sutlab), lb (HAProxy or nginx in front), db (the
PostgreSQL postmaster and its backends), redis, and load (the load tool and its children). During a
step a Sampler reads, for each tier:

  - its CPU time, exact: the live processes' user+system time plus what their reaped children
    left in cutime/cstime (PostgreSQL backends come and go with connections);
  - its capacity, in cores: for the load tier, the threads its tool was told to run (wrk's -t,
    Locust's request-making processes, ab's one, hey's -cpus, httperf's processes: loadcap.py),
    whichever of them happened to run; for the balancer (lb), its CPU budget: nginx's worker
    processes or HAProxy's threads (lbcap.py; infra/lab up --lb-cpus gives it one a core); for
    the other server tiers, and a tool neither module knows, the most threads that ran at the same time (each at least ACTIVE_SHARE of a core over
    one sampling interval). Either is capped by the cores its cpuset allows, and a server tier's by
    its CFS quota (cpubudget.py: a case's scale model gives it one, possibly under a core). So a
    single-threaded Redis or ab saturates at one core, sutlab at its busy workers, PostgreSQL at
    its busy backends, and `taskset` pinning counts;
  - how busy it was against that capacity: its CPU time plus the time its threads were runnable
    but waited for a core (schedstat). On a shared machine a thread that wants a core all the
    time is saturated even when others got part of it. For the load tool, also the time its
    threads sat blocked writing (sampled): a load script printing every response into a slow
    console waits on it, and is as limited as one that has no core left (the TPS-trend case).
    A tier under a CPU budget is as busy as the share of its budget it used, or of the step's
    periods in which it ran out of it: its threads' waits there are mostly its own quota's
    throttling, not cores that other work took;
  - the CPU that went to work outside the tiers it samples (and outside the sampler's own
    process): the machine's task and steal time from /proc/stat less the tiers' CPU, in cores.
    A build or any other process beside the run takes cores the tiers wait for; the verdict
    reads this to tell a tier that saturated from one that only waited (verdict.py);
  - on the web tier only, the server-side signals: the summed Send-Q and Recv-Q of its
    established sockets, its listen queue, ListenOverflows (from the web's own network
    namespace, so `--netns` labs read the right counters), and what /metrics says of open
    connections and event-loop lag.

Everything comes from /proc: the trees and each process's CPU time through psutil (services/procs.py),
the rest (schedstat, the write(2) probe, Send-Q and the listen queue, ListenOverflows) read here.
Nothing here starts or stops a process.
"""

import os
import threading
import time

from . import cpubudget, lbcap, loadcap
from .services import procs

CLK_TCK = os.sysconf("SC_CLK_TCK")
ACTIVE_SHARE = 0.05   # a thread that used less than this share of a core did not run during the step
SAMPLE_EVERY = 0.25   # seconds between two looks at threads, queues and /metrics
WRITE_EVERY = 0.05    # seconds between two looks at whether the load tool is blocked writing

TIERS = ("web", "lb", "db", "redis", "load")


# -- processes ---------------------------------------------------------------------------------

def tree(roots, kids):
    """The roots and all their descendants that are alive now (kids: procs.children_map())."""
    out = set()
    for root in roots:
        out.update(procs.tree_pids(root, kids))
    return out


def _task_files(pids, name):
    """((pid, tid), text of /proc/PID/task/TID/NAME) for every thread of the processes that can
    be read (threads come and go while they are listed)."""
    for p, t in procs.thread_ids(pids):
        try:
            with open("/proc/%d/task/%d/%s" % (p, t, name)) as f:
                yield (p, t), f.read()
        except OSError:
            pass


def thread_cpu(pids):
    """{(pid, tid): (CPU seconds, seconds runnable but waiting for a core)} of every thread of the
    processes (schedstat, in nanoseconds)."""
    out = {}
    for key, text in _task_files(pids, "schedstat"):
        try:
            run, wait = text.split()[:2]
            out[key] = (int(run) / 1e9, int(wait) / 1e9)
        except ValueError:
            pass
    return out


# write(2) and its kin, by machine: a thread of the load tool blocked in one of them waits on its
# own output (a console, a pipe), which limits it as surely as a full core does
WRITE_SYSCALLS = {"x86_64": {1, 18, 20, 296, 328}, "aarch64": {64, 66, 68, 70, 287}}.get(os.uname().machine, set())


def threads_writing(pids):
    """How many threads of the processes are blocked in a write (/proc/PID/task/TID/syscall: the
    syscall number while asleep in one, "running" otherwise)."""
    n = 0
    for _, text in _task_files(pids, "syscall"):
        head = text.split(" ", 1)[0]
        if head.isdigit() and int(head) in WRITE_SYSCALLS:
            n += 1
    return n


def allowed_cores(pids):
    """Cores the processes may run on (the union of their cpusets)."""
    cores = set()
    for p in pids:
        try:
            cores |= os.sched_getaffinity(p)
        except OSError:
            pass
    return len(cores) or os.cpu_count()


def _machine_seconds():
    """CPU seconds the machine's tasks used (cpubudget.machine_cpu_s) plus what the hypervisor
    took from it (steal), since boot."""
    return cpubudget.machine_cpu_s() + procs.cpu_stat()[2] / CLK_TCK


def _allowed_of(pid):
    return allowed_cores([pid])


# -- sockets of the web tier ---------------------------------------------------------------------

def _socket_inodes(pids):
    inodes = set()
    for p in pids:
        try:
            fds = os.listdir("/proc/%d/fd" % p)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink("/proc/%d/fd/%s" % (p, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    return inodes


def socket_queues(pids):
    """(send_q, recv_q, listen_q, send_q_max) over the processes' TCP sockets: Send-Q and Recv-Q of
    the established ones summed, the accept queue of the listening ones (what `ss` shows as
    Recv-Q), and the largest Send-Q of one socket."""
    pids = list(pids)
    if not pids:
        return 0, 0, 0, 0
    inodes = _socket_inodes(pids)
    send = recv = listen = send_max = 0
    for table in ("tcp", "tcp6"):
        try:
            with open("/proc/%d/net/%s" % (pids[0], table)) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) < 10 or cols[9] not in inodes:
                continue
            tx, rx = (int(v, 16) for v in cols[4].split(":"))
            if cols[3] == "01":      # ESTABLISHED
                send += tx
                recv += rx
                send_max = max(send_max, tx)
            elif cols[3] == "0A":    # LISTEN: rx is the accept queue
                listen += rx
    return send, recv, listen, send_max


def listen_overflows(pid):
    """TcpExt ListenOverflows of the namespace pid lives in, or None."""
    try:
        with open("/proc/%d/net/netstat" % pid) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:]))
            return int(table.get("ListenOverflows", 0))
    return None


# -- one step ----------------------------------------------------------------------------------

class Sampler:
    """Samples the tiers over one step: start(), then stop() returns {tier: usage} and the web's
    signals.

    roots: {tier: [pid, ...]} (missing or empty tiers are not measured; a name outside TIERS is
    measured as a tier of its own, as loadscripts/bench names its contenders); the load tier's root is
    the load tool, started by the caller, whose exited children's time is read from the caller's
    own RUSAGE_CHILDREN (pass load_rusage=True). roots["aside"]: processes of the lab's own beside
    the tiers (a console the load prints to), whose CPU is neither a tier's nor work outside them.
    scrape: a callable returning the web's /metrics as {name: value} of the two gauges (or None),
    sampled with the rest.
    """

    def __init__(self, roots, scrape=None, load_rusage=False):
        roots = dict(roots)
        self.aside = [p for p in roots.pop("aside", None) or () if p]
        self.names = list(TIERS) + [t for t in roots if t not in TIERS]
        self.roots = {t: [p for p in roots.get(t) or () if p] for t in self.names}
        self.scrape = scrape
        self.load_rusage = load_rusage
        self._stop = threading.Event()
        self._threads = {t: {} for t in self.names}   # (pid, tid) -> (first, last) (cpu, wait) seen
        self._active = {t: 0 for t in self.names}     # most threads running at once over an interval
        self._allowed = {}                            # cores each tier's processes may use, last seen
        self._writing_s = 0.0  # thread-seconds the load tool spent blocked in a write (sampled)
        self._load_pids, self._last_write = [], None
        self._throttled0 = {}       # each budgeted tier's throttled seconds at the start (cpubudget.py)
        self._load_declared = None  # the load tool's declared capacity, the most seen (loadcap.py)
        self._lb_declared = None    # the balancer's, the most seen (lbcap.py)
        self._first_look = self._last_look = None
        self._queues = []
        self._metrics = []
        # (monotonic time, {tier: CPU seconds of every thread seen so far}) at each look, of the
        # tiers given processes: their CPU over time (report.html's panel: panels.py)
        self.timeline = []

    def _pids(self, tier, kids):
        return tree(self.roots[tier], kids)

    def _look(self, kids=None):
        """One look at every tier; kids: a children_map() of this instant, if the caller has one.
        Returns the children_map it walked."""
        kids = procs.children_map() if kids is None else kids
        now_t = time.monotonic()
        interval = now_t - self._last_look if self._last_look is not None else 0.0
        self._last_look = now_t
        if self._first_look is None:
            self._first_look = now_t
        for t in self.names:
            running = 0
            pids = self._pids(t, kids)
            if pids:  # read while they live: a tool may be gone by the end of the step
                self._allowed[t] = allowed_cores(pids)
            for key, now in thread_cpu(pids).items():
                first, last = self._threads[t].get(key, (now, now))
                if interval > 0 and (now[0] - last[0]) + (now[1] - last[1]) >= ACTIVE_SHARE * interval:
                    running += 1
                self._threads[t][key] = (first, now)
            self._active[t] = max(self._active[t], running)
        self.timeline.append((now_t, {t: sum(last[0] for _, last in self._threads[t].values())
                                      for t in self.names if self.roots[t]}))
        self._load_pids = self._pids("load", kids)  # refreshed here; read every WRITE_EVERY
        declared = loadcap.capacity(self._load_pids, _allowed_of, procs.parent_of)
        if declared is not None:
            self._load_declared = max(declared, self._load_declared or 0)
        self._look_lb(kids)
        web = self._pids("web", kids)
        if web:
            self._queues.append(socket_queues(web))
        if self.scrape is not None:
            m = self.scrape()
            if m is not None:
                self._metrics.append(m)
        return kids

    def _look_lb(self, kids):
        lb = self._pids("lb", kids)
        declared = lbcap.capacity(lb, loadcap.argv_of, lbcap.threads_of, allowed_cores(lb)) if lb else None
        if declared is not None:
            self._lb_declared = max(declared, self._lb_declared or 0)

    def _look_writing(self):
        """The share of the load tool's time spent blocked writing, sampled more often than the
        rest: its estimate is a count of samples (one /proc file per thread, cheap)."""
        now_t = time.monotonic()
        if self._last_write is not None:
            self._writing_s += (now_t - self._last_write) * threads_writing(self._load_pids)
        self._last_write = now_t

    def _run(self):
        ticks = 0
        while not self._stop.wait(WRITE_EVERY):
            self._look_writing()
            ticks += 1
            if ticks * WRITE_EVERY >= SAMPLE_EVERY:
                ticks = 0
                self._look()

    def start(self):
        kids = procs.children_map()
        self._t0 = time.monotonic()
        self._cpu0 = {t: procs.cpu_seconds(self._pids(t, kids)) for t in self.names}
        self._throttled0 = {t: cpubudget.throttled_s(self.roots[t][0]) for t in self.names if self.roots[t]}
        self._rusage0 = os.times()
        self._aside0 = procs.cpu_seconds(tree(self.aside, kids)) if self.aside else 0.0
        self._machine0 = _machine_seconds()
        web = self.roots["web"]
        self._overflows0 = listen_overflows(web[0]) if web else None
        self._look(kids)  # the same process table: the threads' first readings follow t0 closely
        # the write probe covers the step from its first instant, the looks' own time included
        self._last_write = self._t0
        self._bg = threading.Thread(target=self._run, daemon=True)
        self._bg.start()
        return self

    def stop(self):
        self._stop.set()
        self._bg.join()
        kids = self._look()
        self._look_writing()  # and to its last: the time the last looks took is credited too
        elapsed = time.monotonic() - self._t0
        usage = {}
        for t in self.names:
            # a load tool run to its end inside the step is known by its rusage alone
            if not self.roots[t] and not (t == "load" and self.load_rusage):
                continue
            cpu = procs.cpu_seconds(self._pids(t, kids)) - self._cpu0[t]
            if t == "load" and self.load_rusage:
                now = os.times()
                cpu += (now.children_user - self._rusage0.children_user
                        + now.children_system - self._rusage0.children_system)
            usage[t] = self._usage(t, max(cpu, 0.0), elapsed, kids)
        signals = self._signals()
        aside = procs.cpu_seconds(tree(self.aside, kids)) - self._aside0 if self.aside else 0.0
        signals["outside_cores"], signals["machine_busy"] = self._outside(usage, elapsed, max(aside, 0.0))
        signals["timeline"] = self.timeline
        return usage, signals

    def _outside(self, usage, elapsed, aside=0.0):
        """(cores used by work outside the tiers, this process and the processes aside (aside: their
        CPU seconds over the step) (>= 0), the share of the machine's cores busy with anything).
        Kernel time spent on interrupts is left out of both: on loopback it is mostly the run's own
        traffic. The tiers' CPU is read in ticks
        of 10 ms, so short steps read to a few hundredths of a core."""
        if elapsed <= 0:
            return None, None
        now = os.times()
        own = (now.user - self._rusage0.user) + (now.system - self._rusage0.system)
        machine = _machine_seconds() - self._machine0
        outside = max(0.0, (machine - own - aside - sum(u["cpu_s"] for u in usage.values())) / elapsed)
        return outside, min(1.0, machine / elapsed / (os.cpu_count() or 1))

    def _usage(self, tier, cpu, elapsed, kids):
        threads = self._threads[tier].values()
        writing = self._writing_s if tier == "load" else 0.0
        # a thread blocked in a write counts towards the capacity as one that ran
        active = max(self._active[tier], 1 if writing > 0 else 0)
        thread_wait = sum(last[1] - first[1] for first, last in threads)
        wait = thread_wait + writing
        # the threads' waits are read at the looks, the CPU and the write probe over the whole step:
        # the waits are a rate over the looks' span, or on a crowded machine, where the first and
        # last looks come late, the step reads idle for the time before and after them
        span = self._last_look - self._first_look if self._first_look is not None else 0.0
        wait_share = thread_wait / span if span > 0 else (thread_wait / elapsed if elapsed > 0 else 0.0)
        pids = self._pids(tier, kids)
        cores = allowed_cores(pids) if pids else self._allowed.get(tier) or allowed_cores(self.roots[tier])
        declared = {"load": self._load_declared, "lb": self._lb_declared}.get(tier)
        capacity = max(1, min(cores, declared if declared is not None else active))
        quota = None
        if self.roots[tier]:  # a CPU budget (cpubudget.py's CFS quota) caps it, under a core too
            quota = cpubudget.quota_cores(self.roots[tier][0])
            capacity = min(capacity, quota) if quota else capacity
        # Under a quota a thread also waits while its own tier is throttled: a burst longer than the
        # quota's share of a period (a request's 19 ms of --app-cpu-us against 2.3 ms every 10 ms)
        # waits about (1 / quota - 1) times its CPU, however idle the budget is over the step. That
        # wait is the budget's, not a core taken by other work, so a budgeted tier is as busy as
        # the share of its budget it used.
        waited = 0.0 if quota else wait_share
        busy = min(1.0, ((cpu + writing) / elapsed + waited) / capacity) if elapsed > 0 else 0.0
        # ... and at least as busy as the share of the step's periods in which it ran out of its
        # budget: several threads under a quota smaller than the scheduler's slice leave some of it
        # unused on one CPU while another CPU's thread waits, so a tier at its limit every period
        # can show 80 % of its budget in CPU
        throttled = self._throttled(tier)
        if quota and throttled is not None and elapsed > 0:
            busy = max(busy, min(1.0, throttled / elapsed))
        return {"cpu_s": cpu, "wait_s": wait, "writing_s": writing, "elapsed_s": elapsed,
                "cores_used": cpu / elapsed if elapsed > 0 else 0.0,
                "capacity": capacity, "allowed": cores, "active_threads": active,
                "throttled_s": throttled, "busy": busy}

    def _throttled(self, tier):
        """Seconds of the step's periods in which the tier's budget ran out, or None (no budget)."""
        first = self._throttled0.get(tier)
        last = cpubudget.throttled_s(self.roots[tier][0]) if self.roots[tier] else None
        return None if first is None or last is None else max(0.0, last - first)

    def _signals(self):
        web = self.roots["web"]
        out = {"send_q": None, "recv_q": None, "listen_q": None, "send_q_max": None, "overflows": None,
               "connections": None, "loop_lag_s": None}
        if self._queues:
            out["send_q"] = sum(q[0] for q in self._queues) / len(self._queues)
            out["recv_q"] = sum(q[1] for q in self._queues) / len(self._queues)
            out["listen_q"] = max(q[2] for q in self._queues)
            out["send_q_max"] = sum(q[3] for q in self._queues) / len(self._queues)
        if web and self._overflows0 is not None:
            end = listen_overflows(web[0])
            out["overflows"] = None if end is None else end - self._overflows0
        conns = [m["connections"] for m in self._metrics if m.get("connections") is not None]
        lags = [m["loop_lag_s"] for m in self._metrics if m.get("loop_lag_s") is not None]
        out["connections"] = max(conns) if conns else None
        out["loop_lag_s"] = max(lags) if lags else None
        return out
