"""Processes and ports, read from /proc: process trees, their CPU time (user and kernel, on a core
and waiting for one), memory and CPU affinity, the pid behind a listening port, pid files; free
loopback ports; the environment a server is started in.
"""

import ctypes
import os
import signal
import socket
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_stat(pid):
    """(state, ppid, own ticks, reaped children's ticks) of /proc/PID/stat, or None if it is gone.
    Own ticks = utime + stime of every thread; children's = cutime + cstime, the time of the
    children it has waited for (pgbench's backends, once they exit)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except OSError:
        return None
    # the command name may hold spaces and parentheses: the fields start after the last ')'
    rest = data[data.rindex(")") + 2:].split()
    return rest[0], int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def pid_alive(pid):
    st = proc_stat(pid)
    return st is not None and st[0] != "Z"


def children_map():
    """{ppid: [pid, ...]} of every process now."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st:
                kids.setdefault(st[1], []).append(int(d))
    return kids


def tree_pids(root, kids=None):
    """root and every process under it, as they are now ([] when root is gone); `kids` a
    children_map() already taken, for callers that walk several trees at once."""
    kids = children_map() if kids is None else kids
    out, pending = [], [root]
    while pending:
        pid = pending.pop()
        if pid in out or proc_stat(pid) is None:
            continue
        out.append(pid)
        pending.extend(kids.get(pid, []))
    return out


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


def _listening_inodes(port):
    want = ":%04X" % port
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "0A" and parts[1].endswith(want):  # 0A: LISTEN
                        inodes.add("socket:[%s]" % parts[9])
        except OSError:
            continue
    return inodes


def listening_pid(port):
    """The pid of a process holding a listening TCP socket on `port`, or None."""
    inodes = _listening_inodes(port)
    for d in os.listdir("/proc") if inodes else ():
        if not d.isdigit():
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % d)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink("/proc/%s/fd/%s" % (d, fd)) in inodes:
                    return int(d)
            except OSError:
                continue
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
    added to it, so that the servers of one run get distinct ports before any has started."""
    taken = set() if taken is None else taken
    for _ in range(50):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        finally:
            s.close()
        if port not in taken and port_is_free(port):
            taken.add(port)
            return port
    raise OSError("could not find a free port on 127.0.0.1")


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
    """The 1, 5 and 15 minute load averages, as /proc/loadavg writes them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cpu_split(pid):
    """(user, kernel) ticks of /proc/PID/stat (utime, stime, every thread), or None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(rest[11]), int(rest[12])


def schedstat(pid):
    """(on a core, runnable waiting for one) in seconds, of /proc/PID/schedstat (its main thread):
    their sum over a wall interval is how busy a single-threaded process kept its core, whatever
    else ran there."""
    with open("/proc/%d/schedstat" % pid) as f:
        run_ns, wait_ns = f.read().split()[:2]
    return int(run_ns) / 1e9, int(wait_ns) / 1e9


def rss_bytes(pid):
    """VmRSS of /proc/PID/status in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmRSS for pid %d" % pid)
