"""ServerProcess: a server the tooling starts itself (sutlab, nginx), for bench's contenders,
flip --spawn and the integration tests' Server.

    srv = ServerProcess(["build/sutlab", "serve", "--listen", "127.0.0.1:%d" % port], port,
                        stdout_path="/tmp/x/out.log").start()   # returns once it answers
    ...
    srv.stop()      # SIGTERM, its exit status (None if it had to be killed)
"""

import os
import signal
import subprocess

from . import client, procs
from ..errors import RunError


class ServerStartError(RunError):
    """The server exited, or did not answer, during its start."""


class ServerProcess:
    """One server process in a session of its own (stop() also ends what it forked, nginx's
    workers), its stdout and stderr in files (the same file when stderr_path is not given).

    Ready means `ready_hits` answers 200 in a row to GET `ready_path` within `start_timeout`
    seconds: sutlab's /readyz answers per worker, so asking a few times covers the workers."""

    def __init__(self, argv, port, stdout_path, stderr_path=None, name="server", env=None,
                 cwd=None, ready_path="/health_check", ready_hits=1, start_timeout=15.0,
                 die_with_parent=False):
        self.argv, self.port, self.name = list(argv), port, name
        self.stdout_path, self.stderr_path = stdout_path, stderr_path or stdout_path
        self.env, self.cwd = env, cwd
        self.ready_path, self.ready_hits, self.start_timeout = ready_path, ready_hits, start_timeout
        self.die_with_parent = die_with_parent
        self.proc = None
        self.returncode = None
        self.ready_requests = 0  # readiness requests that got an answer (they show in its logs)

    # -- lifecycle

    def start(self, wait=True):
        """Start it; with `wait`, return once it is ready (else ServerStartError, and it is
        killed). Returns self."""
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            try:
                self.proc = subprocess.Popen(
                    self.argv, stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT if self.stderr_path == self.stdout_path else err,
                    env=self.env, cwd=self.cwd, start_new_session=True,
                    preexec_fn=procs.die_with_parent if self.die_with_parent else None)
            except OSError as e:
                raise ServerStartError("%s cannot start: %s: %s" % (self.name, e, " ".join(self.argv)))
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self):
        url = "http://127.0.0.1:%d%s" % (self.port, self.ready_path)
        try:
            self.ready_requests += client.wait_until_ok(url, self.start_timeout, self.ready_hits,
                                                        alive=self.running)
        except client.NotReady as e:
            if self.running():
                self.kill()
                raise ServerStartError("%s: %s: %s\n%s" % (self.name, e, " ".join(self.argv),
                                                            self.log_tail()))
            raise ServerStartError("%s exited with status %s at start-up: %s\n%s"
                                   % (self.name, self.proc.returncode, " ".join(self.argv),
                                      self.log_tail()))

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        """Send `sig` and wait up to `timeout` s for the exit. Returns the exit status, or None
        if it had to be killed (or never started). Whatever it forked is killed after."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        self.returncode = self.proc.returncode
        self._kill_group()
        return self.returncode

    def kill(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._kill_group()

    def _kill_group(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    # -- what it did

    @property
    def pid(self):
        return self.proc.pid if self.proc is not None else None

    def stdout(self):
        return _read_text(self.stdout_path)

    def stderr(self):
        return _read_text(self.stderr_path)

    def log_tail(self, n=15):
        lines = self.stderr().splitlines()[-n:]
        return "\n".join("  | " + line for line in lines) if lines else "  (no output)"


def _read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""
