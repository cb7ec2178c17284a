"""run_tool: one run of a load generator (wrk, pgbench, redis-benchmark, Locust), bounded in
time, with the CPU time it spent itself."""

import resource
import subprocess
import time

from .services import procs
from .errors import RunError


class ToolRun:
    """What a load generator run gave: its output (stdout and stderr together), its own CPU
    seconds (user + system) and the wall seconds it took."""

    def __init__(self, output, cpu_s, wall_s):
        self.output, self.cpu_s, self.wall_s = output, cpu_s, wall_s


def run_tool(argv, timeout, what, env=None):
    """Run argv to completion; RunError if it runs over `timeout` seconds or exits non-zero.
    Its CPU time comes from RUSAGE_CHILDREN: the children reaped meanwhile are it alone. On any
    way out (Ctrl-C included) the tool does not outlive the call."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, preexec_fn=procs.die_with_parent)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except BaseException as e:
        proc.kill()
        proc.communicate()
        if isinstance(e, subprocess.TimeoutExpired):
            raise RunError("%s did not finish within %d s: %s" % (what, timeout, " ".join(argv))) from None
        raise
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = out.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RunError("%s exited with status %s: %s\n%s" % (what, proc.returncode, " ".join(argv),
                                                             output.strip()[-2000:]))
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    return ToolRun(output, cpu, time.monotonic() - t0)
