"""An experiment's target: the server restarted with each arm's flags. The lab (infra/lab restart,
the default; its sutlab, or every instance of a scaled lab), one the engine starts itself (--spawn;
or a ServerTarget, a server its caller builds: bench's), or one a command restarts (--restart-cmd).
`args` holds the options flip names them by: url, spawn, restart_cmd, pid_file, pg_pid_file,
db_url, start_timeout."""

import os
import shlex
import subprocess
import sys
import urllib.parse

from .. import REPO
from ..services import client, procs
from ..errors import RunError
from ..services.server import ServerProcess

INFRA_LAB = os.path.join(REPO, "infra", "lab")
LAB_VAR = os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var")


def lab_bin():
    """The lab's sutlab binary: $SUTLAB_LAB_BIN, else build/sutlab, as infra/lab has it."""
    return os.environ.get("SUTLAB_LAB_BIN") or os.path.join(REPO, "build", "sutlab")


def lab_db_url():
    """The lab's PostgreSQL: $SUTLAB_LAB_DB_URL, else the lab's own on $SUTLAB_LAB_PG_PORT (25432)."""
    return os.environ.get("SUTLAB_LAB_DB_URL") or \
        "postgresql://postgres@127.0.0.1:%s/sutlab" % os.environ.get("SUTLAB_LAB_PG_PORT", "25432")


def db_indexes(sutlab_bin, db_url, action, names=()):
    """`sutlab db indexes ACTION [NAME...]` (off, on, status) on the target's database; its output.
    An action on the data an arm's setup takes (flip's `indexes`, the missing-index case)."""
    if not db_url:
        raise RunError("`indexes` needs --db-url (the lab's is known)")
    if not sutlab_bin or not os.access(sutlab_bin, os.X_OK):
        raise RunError("`indexes` needs a sutlab binary (--sutlab-bin, $SUTLAB_BIN or build/sutlab)")
    proc = subprocess.run([sutlab_bin, "db", "indexes", action] + list(names) + ["--db-url", db_url],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
                          env=procs.clean_env())
    if proc.returncode != 0:
        raise RunError("sutlab db indexes %s failed (exit %d): %s" % (action, proc.returncode,
                                                                      proc.stdout.strip()[-500:]))
    return proc.stdout


def stderr_log(msg):
    print(msg, file=sys.stderr, flush=True)


def wait_healthy(url, timeout):
    client.wait_until_ok(url.rstrip("/") + "/health_check", timeout)


def run_logged(argv, logpath, title):
    """argv's output appended to logpath under a '==== title' line; its exit status."""
    with open(logpath, "a") as f:
        f.write("\n==== %s\n" % title)
        f.flush()
        return subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              timeout=120).returncode


class Target:
    """What every target has: url, apply(flags, label) (restart with them, return once it
    answers), pids(), pg_pid(), restore() (the flags it had), describe(); `original` its flags
    before the experiment, db_url and bin when they are known; `admin` its admin listener
    (live.Admin, through which live arms change it) when it has one; log(msg) says what it does."""

    kind = ""

    def __init__(self, args, out, log=stderr_log):
        self.args, self.out, self.log = args, out, log
        self.url = args.url
        self.current = None  # flags last applied
        self.original = []
        self.db_url, self.bin = args.db_url, None
        self.admin = None

    def pg_pid(self):
        return procs.read_pidfile(self.args.pg_pid_file) if self.args.pg_pid_file else None

    def restore(self):
        pass


class LabTarget(Target):
    kind = "lab"

    def __init__(self, args, out, log=stderr_log):
        super().__init__(args, out, log)
        self.url = args.url or "http://127.0.0.1:%s" % os.environ.get("SUTLAB_LAB_PORT", "8080")
        if not self.pids():
            raise RunError("the lab's sutlab is not running (no live pid in %s/sutlab.pid or "
                           "scale/sutlab-*.pid): start it with infra/lab up, or give --spawn/--restart-cmd "
                           "and --url" % LAB_VAR)
        try:
            wait_healthy(self.url, 3)
        except RunError as e:
            raise RunError("the lab's sutlab does not answer: %s" % e)
        try:
            with open(os.path.join(LAB_VAR, "sutlab.flags")) as f:
                self.original = [line.rstrip("\n") for line in f if line.rstrip("\n") != ""]
        except OSError:
            self.original = []
        self.current = list(self.original)
        self.db_url, self.bin = lab_db_url(), lab_bin()

    def _restart(self, flags, label):
        self.log("infra/lab restart -- %s" % " ".join(flags))
        logpath = os.path.join(self.out, "restart.log")
        rc = run_logged([INFRA_LAB, "restart", "--"] + flags, logpath,
                        "%s: infra/lab restart -- %s" % (label, " ".join(flags)))
        self.current = list(flags)
        if rc != 0:
            raise RunError("infra/lab restart -- %s failed (exit %d); see %s" % (" ".join(flags), rc, logpath))

    def apply(self, flags, label):
        if flags != self.current:
            self._restart(flags, label)
            wait_healthy(self.url, self.args.start_timeout)

    def pids(self):
        """The lab's sutlab, or every instance of the scaled lab (infra/lab up --instances N)."""
        files = [os.path.join(LAB_VAR, "sutlab.pid")]
        scale = os.path.join(LAB_VAR, "scale")
        if os.path.isdir(scale):
            files += sorted(os.path.join(scale, f) for f in os.listdir(scale)
                            if f.startswith("sutlab-") and f.endswith(".pid"))
        pids = [procs.read_pidfile(f) for f in files]
        return [p for p in pids if p and procs.pid_alive(p)]

    def pg_pid(self):
        if self.args.pg_pid_file or os.environ.get("SUTLAB_LAB_DB_URL"):
            return super().pg_pid()  # given, or PostgreSQL runs elsewhere
        return procs.read_pidfile(os.path.join(LAB_VAR, "pg", "data", "postmaster.pid"))

    def restore(self):
        if self.current != self.original:
            try:
                self._restart(self.original, "restore")
            except RunError as e:
                self.log("warning: restoring the lab's flags failed (%s): run infra/lab restart -- %s"
                    % (e, " ".join(self.original)))

    def describe(self):
        return "the lab, %s (infra/lab restart)" % self.url


class Restarts:
    """A server the engine starts itself: new_server(flags, label) gives one (a ServerProcess, not
    yet started) and apply starts it anew when the flags differ from those in force or when it is
    not running (an arm's teardown that stops it gives every run a fresh server)."""

    server = None
    current = None

    def apply(self, flags, label):
        if flags == self.current and self.server is not None and self.server.running():
            return
        self.stop()
        self.current = list(flags)
        self.server = self.new_server(flags, label)
        try:
            self.server.start()
        except RunError as e:
            raise self.start_failed(e)

    def start_failed(self, e):
        return e

    def stop(self):
        if self.server is not None:
            self.server.stop()
            self.server = None

    def pids(self):
        return [self.server.pid] if self.server is not None else []

    def restore(self):
        self.stop()


class ServerTarget(Restarts):
    """A server the caller knows how to start (bench's sutlab on its CPU): new_server(flags,
    label) -> a ServerProcess, not started."""

    kind = "server"

    def __init__(self, new_server):
        self.new_server = new_server


class SpawnTarget(Restarts, Target):
    kind = "spawn"

    def __init__(self, args, out, log=stderr_log):
        super().__init__(args, out, log)
        self.cmd = shlex.split(args.spawn)
        # the server runs in the output directory (its files land there): a program named by a
        # relative path (build/sutlab) is the caller's, from the caller's directory
        if self.cmd and os.sep in self.cmd[0] and not os.path.isabs(self.cmd[0]):
            self.cmd[0] = os.path.abspath(self.cmd[0])
        self.log_path = None

    def new_server(self, flags, label):
        argv = self.cmd + flags
        self.log_path = os.path.join(self.out, "server-%s.log" % label)
        shown = " ".join(shlex.quote(a) for a in argv)
        self.log("starting %s" % shown)
        with open(self.log_path, "a") as f:
            f.write("==== %s\n" % shown)
        return ServerProcess(argv, urllib.parse.urlsplit(self.url).port or 80, self.log_path, name=self.cmd[0],
                             env=procs.clean_env(), cwd=self.out, start_timeout=self.args.start_timeout)

    def start_failed(self, e):
        return RunError("%s (log: %s)" % (e, self.log_path))

    def describe(self):
        return "%s (started by flip: %s FLAGS)" % (self.url, " ".join(self.cmd))


class RestartCmdTarget(Target):
    kind = "restart-cmd"

    def __init__(self, args, out, log=stderr_log):
        super().__init__(args, out, log)
        self.cmd = shlex.split(args.restart_cmd)
        self.original = None  # set by the plan: --restore-flags, else the base flags

    def apply(self, flags, label):
        if flags == self.current:
            return
        self.log("%s %s" % (" ".join(self.cmd), " ".join(flags)))
        logpath = os.path.join(self.out, "restart.log")
        rc = run_logged(self.cmd + flags, logpath, "%s: %s" % (label, " ".join(self.cmd + flags)))
        self.current = list(flags)
        if rc != 0:
            raise RunError("%s failed (exit %d); see %s" % (" ".join(self.cmd + flags), rc, logpath))
        wait_healthy(self.url, self.args.start_timeout)

    def pids(self):
        if self.args.pid_file:
            pid = procs.read_pidfile(self.args.pid_file)
        else:
            pid = procs.listening_pid(urllib.parse.urlsplit(self.url).port or 80)
        return [pid] if pid else []

    def restore(self):
        if self.original is not None and self.current != self.original:
            self.log("restoring: %s %s" % (" ".join(self.cmd), " ".join(self.original)))
            try:
                self.apply(self.original, "restore")
            except (RunError, OSError, subprocess.TimeoutExpired) as e:
                self.log("warning: restore failed: %s" % e)

    def describe(self):
        return "%s (restarted with: %s FLAGS)" % (self.url, " ".join(self.cmd))


def make_target(args, out, log=stderr_log):
    if args.spawn:
        return SpawnTarget(args, out, log)
    if args.restart_cmd:
        return RestartCmdTarget(args, out, log)
    return LabTarget(args, out, log)
