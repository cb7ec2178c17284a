"""Processes and ports: process trees, their CPU time (user and kernel, on a core and waiting for
one), memory and CPU affinity, the pid behind a listening port, pid files; free loopback ports;
the environment a server is started in.

psutil (python3-psutil) reads /proc for the trees, their CPU and memory and the listening pid.
Read here by hand: schedstat (psutil has no run/wait split), a process's thread ids (the task
directory, where tiers.py reads each thread's schedstat: psutil's threads() reads every thread's
stat file besides, twice the files per look) and the machine's CPU lines of /proc/stat (psutil
numbers CPUs by position among those online, cpu_stat by their number).
"""

import ctypes
import os
import random
import signal
import socket
import time

import psutil

CLK_TCK = os.sysconf("SC_CLK_TCK")


def pid_alive(pid):
    """True while pid runs (a zombie, exited but not yet reaped, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def children_map():
    """{ppid: [pid, ...]} of every process now: one look at the process table, for callers that
    walk several trees at once (tiers.Sampler, four times a second)."""
    kids = {}
    for p in psutil.process_iter(["ppid"]):
        kids.setdefault(p.info["ppid"], []).append(p.pid)
    return kids


def tree_pids(root, kids=None):
    """root and every process under it, as they are now ([] when root is gone); `kids` a
    children_map() already taken, for callers that walk several trees at once."""
    if kids is None:
        try:
            return [root] + [c.pid for c in psutil.Process(root).children(recursive=True)]
        except psutil.Error:
            return []
    out, pending = [], [root]
    while pending:
        pid = pending.pop()
        if pid in out or not psutil.pid_exists(pid):
            continue
        out.append(pid)
        pending.extend(kids.get(pid, []))
    return out


def cpu_seconds(pids):
    """User+system time of the processes, with what their reaped children left (cutime+cstime:
    pgbench's backends, once they exit), in seconds; processes already gone count nothing."""
    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def parent_of(pid):
    """The parent's pid, or None when pid is gone."""
    try:
        return psutil.Process(pid).ppid()
    except psutil.Error:
        return None


def pin_tree(root, cpus):
    """Every thread of root and of every process under it allowed on `cpus` only (a set of CPU
    numbers; what `taskset -a -p` does, for the whole tree). Children forked later inherit it.
    Returns how many processes were pinned."""
    pids = tree_pids(root)
    for _, tid in thread_ids(pids):
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:
            pass  # the thread ended meanwhile
    return len(pids)


def thread_ids(pids):
    """(pid, tid) of every thread of the processes that can be listed (a process that ended is
    skipped; its threads, and others', may end before the caller gets to them)."""
    for pid in pids:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            yield pid, int(tid)


def tree_cpus(root):
    """The distinct CPU lists ("0", "0,1") the tree's threads are allowed on."""
    seen = set()
    for pid in tree_pids(root):
        try:
            for tid in os.listdir("/proc/%d/task" % pid):
                seen.add(",".join(map(str, sorted(os.sched_getaffinity(int(tid))))))
        except OSError:
            continue
    return seen


def wait_tree_size(root, size, timeout):
    """Wait until root's tree is down to `size` processes (the backends of a finished pgbench
    exiting); False if it is not within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(tree_pids(root)) <= size:
            return True
        time.sleep(0.05)
    return False


def read_pidfile(path):
    """The pid on the first line of path (a pid file, postmaster.pid), or None."""
    try:
        with open(path) as f:
            return int(f.readline().strip())
    except (OSError, ValueError):
        return None


def listening_pid(port):
    """The pid of a process holding a listening TCP socket on `port`, or None."""
    for c in psutil.net_connections("tcp"):
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
            return c.pid
    return None


def clean_env(extra=None):
    """This process's environment without any SUTLAB_* variable, plus `extra`: sutlab reads
    SUTLAB_<FLAG> variables, and the caller's must not add flags to the ones it shows."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")}
    if extra:
        env.update(extra)
    return env


def port_is_free(port, host="127.0.0.1"):
    """True if nothing accepts connections on host:port and a listener could bind it now."""
    try:
        socket.create_connection((host, port), timeout=1).close()
        return False
    except OSError:
        pass
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # SO_REUSEADDR only: TIME_WAIT leftovers are fine, a listener is not, even one that
        # shares its port with SO_REUSEPORT (another sutlab's workers)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(1)
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port(taken=None):
    """A TCP port on 127.0.0.1 that is free now; with `taken` (a set), also not in it, and
    added to it, so that the servers of one run get distinct ports before any has started.

    It is drawn below the kernel's ephemeral range (ip_local_port_range), never from it: a port
    the kernel hands out for bind(0) is also one it may give the next outgoing connection, and
    the load tests beside a starting server make thousands of those, so one took a test's port
    between the draw and the server's bind (EADDRINUSE, seen in CI)."""
    taken = set() if taken is None else taken
    low, high = listen_port_range()
    for _ in range(200):
        port = random.randrange(low, high)
        if port not in taken and port_is_free(port):
            taken.add(port)
            return port
    raise OSError("could not find a free port on 127.0.0.1 in %d-%d" % (low, high - 1))


def listen_port_range(path="/proc/sys/net/ipv4/ip_local_port_range"):
    """[low, high) of the ports free_port draws from: the 10,000 below the ephemeral range (from
    10000 at least); 20000-30000 where the range cannot be read or leaves too little below it."""
    try:
        with open(path) as f:
            first = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        first = 0
    if first - 10000 < 10000:
        return 20000, 30000
    return first - 10000, first


def die_with_parent():
    """preexec_fn: the child gets SIGTERM when the thread that started it goes, even by SIGKILL,
    so that a killed bench leaves no server or load generator behind."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def cpu_stat(cpu=None):
    """(tasks, irq, steal) ticks of one CPU (of all of them: None) from /proc/stat: tasks = user +
    nice + system, irq = irq + softirq (on loopback, mostly the run's own TCP traffic)."""
    head = "cpu " if cpu is None else "cpu%d " % cpu
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(head):
                v = [int(x) for x in line.split()[1:9]]
                return v[0] + v[1] + v[2], v[5] + v[6], v[7]
    raise OSError("no %sline in /proc/stat" % head)


def loadavg():
    """The 1, 5 and 15 minute load averages, as /proc/loadavg writes them ("0.52 0.41 0.33")."""
    return "%.2f %.2f %.2f" % os.getloadavg()


def cpu_split(pid):
    """(user, kernel) CPU seconds of a process (every thread), or None if it is gone."""
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return t.user, t.system


def schedstat(pid):
    """(on a core, runnable waiting for one) in seconds, of /proc/PID/schedstat (its main thread):
    their sum over a wall interval is how busy a single-threaded process kept its core, whatever
    else ran there."""
    with open("/proc/%d/schedstat" % pid) as f:
        run_ns, wait_ns = f.read().split()[:2]
    return int(run_ns) / 1e9, int(wait_ns) / 1e9


def rss_bytes(pid):
    """The resident set of a process, in bytes (VmRSS); OSError when it is gone."""
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.Error as e:
        raise OSError("pid %d: %s" % (pid, e))


def open_fds(pid):
    """How many file descriptors a process holds; OSError when it is gone."""
    try:
        return psutil.Process(pid).num_fds()
    except psutil.Error as e:
        raise OSError("pid %d: %s" % (pid, e))
