"""The flag under test -> the off and on runs: their flags (the base flags plus the flag's off or
on tokens) or, for `indexes`, the `sutlab db indexes` action before the run."""

import os
import re
import shlex
import subprocess

from . import log
from ..engine import Arm, targets
from ..errors import RunError
from ..services import procs

BOOL_FLAGS_FALLBACK = {"redis-cache", "cache-local", "gzip"}
FALSE_WORDS = ("NO", "off", "no", "false", "0")

# flag -> how to flip it: off value (None = the server default, i.e. the flag removed;
# "NO" = --no-FLAG), on value when none is given, scenarios to try in order.
SPECS = {
    # a boolean grown into a choice: off|on|estimate (flip --count-pagination estimate)
    "count-pagination": {"off": "off", "on": "on", "scenarios": ["articles"]},
    "redis-cache": {"off": "NO", "scenarios": ["stores"]},
    # both runs cache in Redis; only the worker's own copy differs
    "cache-local": {"off": "NO", "scenarios": ["stores"], "requires": ["redis-cache"]},
    "gzip": {"off": "NO", "scenarios": ["stores-gzip"]},
    "keepalive-timeout": {"off": "10", "on": "0", "scenarios": ["health"]},
    "log": {"off": "off", "on": "verbose", "scenarios": ["echo", "article"]},
    "db-mode": {"off": None, "on": "sync", "scenarios": ["store"], "pin_db": True},
    "workers": {"off": "1", "on": str(os.cpu_count() or 2), "scenarios": ["store"], "pin_db": True},
    # the spray write-up's experiment: a 2 s block, 100 arrivals a second for 30 s (open model)
    "handler-mode": {"off": "offload", "on": "inline", "scenarios": ["block"], "probe": "/health_check",
                     "tool": "spray", "duration": 30.0},
    "indexes": {"scenarios": ["articles"]},
    # the HAProxy sizing write-up's resumption: a handshake per request, TLS 1.2 by default
    "tls-resumption": {"off": None, "scenarios": ["handshake"], "tool": "s_time"},
}
DEFAULT_SPEC = {"off": None, "scenarios": ["health"]}


def spec_of(flag):
    return SPECS.get(flag, DEFAULT_SPEC)


def serve_flags(sutlab_bin):
    """{name: is_boolean} from `sutlab serve --help`, or None."""
    if not sutlab_bin or not os.access(sutlab_bin, os.X_OK):
        return None
    try:
        out = subprocess.run([sutlab_bin, "serve", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=10, env=procs.clean_env()).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    flags = {m.group(1): bool(m.group(2)) for m in re.finditer(r"^  --([a-z0-9-]+)(, --no-\1)?", out, re.M)}
    return flags or None


def strip_flag(tokens, name, boolean):
    """tokens without any --name / --no-name / --name=V / --name V (a V that is no flag: a
    boolean that grew values, --count-pagination, may stand alone)."""
    out, i = [], 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("--" + name, "--no-" + name):
            if not boolean and t == "--" + name and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                i += 1  # its value
        elif not t.startswith("--" + name + "="):
            out.append(t)
        i += 1
    return out


def flag_tokens(name, value, boolean):
    if value is None:
        return []
    if boolean:
        return ["--no-" + name] if value in FALSE_WORDS else ["--" + name]
    return ["--" + name, value]


def indexes(sutlab_bin, db_url, action):
    """`sutlab db indexes ACTION` (off, on, status); its output."""
    return targets.db_indexes(sutlab_bin, db_url, action)


def indexes_state(sutlab_bin, db_url):
    m = re.search(r"(\d+) present, (\d+) dropped", indexes(sutlab_bin, db_url, "status"))
    if not m:
        return "unknown"
    present, dropped = int(m.group(1)), int(m.group(2))
    return "on" if dropped == 0 else ("off" if present == 0 else "mixed")


class Plan:
    """runs: [(label, flags, indexes action or None)], off first; change: {label: what differs,
    as the table shows it}; base: the flags of both runs; boolean: whether the flag is one."""

    def __init__(self, boolean, base, runs, change, sutlab_bin=None, db_url=None):
        self.boolean, self.base, self.runs, self.change = boolean, base, runs, change
        self.sutlab_bin, self.db_url = sutlab_bin, db_url

    def arms(self):
        """The runs as the engine's arms: the flags, and `sutlab db indexes ACTION` as the setup."""
        def setup(action):
            def run():
                log("sutlab db indexes %s" % action)
                indexes(self.sutlab_bin, self.db_url, action)
            return run
        return [Arm(label, flags=flags, change=self.change[label], setup=setup(idx) if idx else None)
                for label, flags, idx in self.runs]


def is_boolean(args, sutlab_bin):
    if args.flag == "indexes":
        return False
    known = serve_flags(sutlab_bin)
    if known is None:
        return args.flag in BOOL_FLAGS_FALLBACK
    if args.flag not in known:
        raise RunError("--%s is not a flag of %s serve (see its --help)" % (args.flag, sutlab_bin))
    return known[args.flag]


def base_flags(args, target, boolean):
    """The flags of both runs: --base-flags, else the lab's saved ones, without the flag under
    test, with the flags it needs."""
    if args.base_flags is not None:
        base = shlex.split(args.base_flags)
    else:
        base = list(target.original) if target.kind == "lab" else []
    if args.flag != "indexes":
        base = strip_flag(base, args.flag, boolean)
    for needed in spec_of(args.flag).get("requires", ()):
        base = strip_flag(base, needed, True) + ["--" + needed]
    return base


def on_off_tokens(args, boolean, base, out):
    """(off tokens, on tokens) of a sutlab flag."""
    spec = spec_of(args.flag)
    if boolean:
        if args.value not in (None, "on", "off", "yes", "no", "true", "false", "1", "0"):
            raise RunError("--%s is a boolean flag; no value %r" % (args.flag, args.value))
        return flag_tokens(args.flag, "NO", True), flag_tokens(args.flag, "on", True)
    on_value = args.value if args.value is not None else spec.get("on")
    if on_value is None:
        raise RunError("--%s needs a value for the on run, e.g. flip --%s VALUE" % (args.flag, args.flag))
    off_value = args.off if args.off is not None else spec.get("off")
    if args.flag == "db-mode" and args.off is None:
        off_value = "async" if on_value == "sync" else "sync"
    if off_value == on_value:
        raise RunError("the off and on runs would both use --%s %s: give --off VALUE" % (args.flag, on_value))
    on_tok = flag_tokens(args.flag, on_value, False)
    if args.flag == "log" and on_value == "verbose" and "--log-file" not in " ".join(base):
        on_tok += ["--log-file", os.path.join(out, "verbose.log")]
    return flag_tokens(args.flag, off_value, False), on_tok


def make_plan(args, target, sutlab_bin, out):
    boolean = is_boolean(args, sutlab_bin)
    base = base_flags(args, target, boolean)
    db_url = args.db_url or target.db_url
    if target.kind == "restart-cmd":
        target.original = shlex.split(args.restore_flags) if args.restore_flags is not None else list(base)
    if args.flag == "indexes":
        return Plan(False, base, [("off", list(base), "off"), ("on", list(base), "on")],
                    {"off": "sutlab db indexes off", "on": "sutlab db indexes on"}, sutlab_bin, db_url)
    off_tok, on_tok = on_off_tokens(args, boolean, base, out)
    return Plan(boolean, base, [("off", base + off_tok, None), ("on", base + on_tok, None)],
                {"off": " ".join(off_tok) or "(server default)",
                 "on": " ".join(on_tok).replace(out + os.sep, "OUT/")}, sutlab_bin, db_url)


def pin_setting(args):
    """args.pin_db resolved: 'SERVER_CPU:DB_CPU' or None (default 0:1 for the flags whose case
    needs PostgreSQL on a core of its own, on a machine with two CPUs or more)."""
    if args.pin_db is None and spec_of(args.flag).get("pin_db") and (os.cpu_count() or 1) >= 2:
        return "0:1"
    if args.pin_db == "none":
        return None
    if args.pin_db and not re.fullmatch(r"\d+:\d+", args.pin_db):
        raise RunError("--pin-db takes SERVER_CPU:DB_CPU, e.g. 0:1")
    return args.pin_db


def tool_setting(args):
    """args.tool and args.duration resolved: the user's, else the flag's (spray and 30 s for
    --handler-mode, the write-up's), else wrk and 10 s."""
    spec = spec_of(args.flag)
    if args.tool is None:
        args.tool = spec.get("tool", "wrk")
    if args.duration is None:
        args.duration = spec.get("duration", 10.0) if args.tool == spec.get("tool") else 10.0


def probe_setting(args):
    """args.probe resolved: a path, or None (default: the flag's, e.g. /health_check beside
    --handler-mode inline; 'none' turns it off)."""
    if args.probe is None:
        return spec_of(args.flag).get("probe")
    return None if args.probe == "none" else args.probe
