"""The command-line options of sutlab's Locust files (group "sutlab" of `locust --help`), each
also settable through an environment variable; opt() reads one from a Locust environment.
Imported by sutlab_locust.py, sutlab_recorder.py, sutlab_responses.py and stepload.py."""

import argparse
import math
import os
import re

from locust import events

DEFAULTS = {
    "fixture_users": ("SUTLAB_FIXTURE_USERS", "10"),
    "think_time": ("SUTLAB_THINK_TIME", ""),  # "": the user class's default_think
    "login": ("SUTLAB_LOGIN", "auto"),
    "slug_pages": ("SUTLAB_SLUG_PAGES", "5"),
    "index_pages": ("SUTLAB_INDEX_PAGES", "1"),
    "cpu_ms": ("SUTLAB_CPU_MS", "10"),
    "echo_bytes": ("SUTLAB_ECHO_BYTES", "100"),
    "accept_encoding": ("SUTLAB_ACCEPT_ENCODING", "gzip, deflate"),
    "step_size": ("SUTLAB_STEP_SIZE", "10"),
    "step_hold": ("SUTLAB_STEP_HOLD", "30"),
    "steps": ("SUTLAB_STEPS", "5"),
    "step_rate": ("SUTLAB_STEP_RATE", "0"),
    "step_settle": ("SUTLAB_STEP_SETTLE", "2"),
    "ramp_up": ("SUTLAB_RAMP_UP", "0"),
    "print_responses": ("SUTLAB_PRINT_RESPONSES", ""),
    "client_cpu_us": ("SUTLAB_CLIENT_CPU_US", "0"),
}


def _default(name):
    env, value = DEFAULTS[name]
    return os.environ.get(env, value)


@events.init_command_line_parser.add_listener
def _add_arguments(parser, **_kw):
    g = parser.add_argument_group("sutlab", "options of loadscripts/locust (environment variable in brackets)")
    g.add_argument("--fixture-users", type=int, default=int(_default("fixture_users")), metavar="N",
                   help="log in as a random user<1..N>@example.com / password: 10 tiny, 1000 small, "
                        "10000 medium, 100000 large [SUTLAB_FIXTURE_USERS] (default %(default)s)")
    g.add_argument("--think-time", default=_default("think_time"), metavar="S|MIN-MAX",
                   help="seconds between two tasks of a user: fixed, or uniform in MIN-MAX "
                        "[SUTLAB_THINK_TIME] (default: the locustfile's, 0 but in blog_writeup.py)")
    g.add_argument("--login", choices=("auto", "always", "never"), default=_default("login"),
                   help="log in on start: auto = only when a selected task needs a token "
                        "(store_article, like, comment, or a scenario user) [SUTLAB_LOGIN] (default %(default)s)")
    g.add_argument("--slug-pages", type=int, default=int(_default("slug_pages")), metavar="N",
                   help="article slugs are sampled from the newest N*100 articles "
                        "[SUTLAB_SLUG_PAGES] (default %(default)s)")
    g.add_argument("--index-pages", type=int, default=int(_default("index_pages")), metavar="N",
                   help="list_articles reads page 0..N-1 (limit 20) at random [SUTLAB_INDEX_PAGES] "
                        "(default %(default)s)")
    g.add_argument("--cpu-ms", type=int, default=int(_default("cpu_ms")), metavar="MS",
                   help="work_cpu: GET /work/cpu?ms=MS [SUTLAB_CPU_MS] (default %(default)s)")
    g.add_argument("--echo-bytes", type=int, default=int(_default("echo_bytes")), metavar="N",
                   help="rpc_echo: size of the payload string [SUTLAB_ECHO_BYTES] (default %(default)s)")
    g.add_argument("--accept-encoding", default=_default("accept_encoding"), metavar="VALUE",
                   help="Accept-Encoding of every request; 'identity' asks for no compression "
                        "[SUTLAB_ACCEPT_ENCODING] (default %(default)s)")
    g.add_argument("--step-size", type=int, default=int(_default("step_size")), metavar="N",
                   help="step shape (stepload.py): users added per step [SUTLAB_STEP_SIZE] (default %(default)s)")
    g.add_argument("--step-hold", default=_default("step_hold"), metavar="SECONDS",
                   help="step shape: how long each step is held, seconds (30, 2.5, 30s, 2m) "
                        "[SUTLAB_STEP_HOLD] (default %(default)s)")
    g.add_argument("--steps", type=int, default=int(_default("steps")), metavar="N",
                   help="step shape: number of steps; the run lasts steps x step-hold [SUTLAB_STEPS] "
                        "(default %(default)s)")
    g.add_argument("--step-rate", type=float, default=float(_default("step_rate")),
                   metavar="USERS/S",
                   help="step shape: spawn rate within a step; 0 = the whole step within one second "
                        "[SUTLAB_STEP_RATE] (default %(default)s)")
    g.add_argument("--step-settle", type=float, default=float(_default("step_settle")), metavar="SECONDS",
                   help="seconds at the start of each user level left out of PREFIX_steps.csv "
                        "[SUTLAB_STEP_SETTLE] (default %(default)s)")
    # A string default goes through `type` too, so a bad SUTLAB_RAMP_UP is refused like a bad
    # --ramp-up: argparse's one line naming the option, exit 2.
    g.add_argument("--ramp-up", type=ramp_seconds, default=_default("ramp_up"), metavar="SECONDS",
                   help="JMeter's ramp-up: the -u users are started evenly over SECONDS (30, 2.5, 30s, "
                        "2m), i.e. a spawn rate of users/SECONDS that replaces -r; 0 = off "
                        "[SUTLAB_RAMP_UP] (default %(default)s)")
    g.add_argument("--client-cpu-us", type=int, default=int(_default("client_cpu_us")), metavar="US",
                   help="CPU the load generator spends of its own a request, in microseconds, as a heavier "
                        "tool would (a JVM's nGrinder: the case delivery-scaleout fits it); spent after each "
                        "response, on the user's process, so a worker's other users wait as they would "
                        "[SUTLAB_CLIENT_CPU_US] (default %(default)s)")
    g.add_argument("--print-responses", nargs="?", const="-", default=_default("print_responses"),
                   metavar="FILE|-",
                   help="write every response, one line 'STATUS BODY', with a blocking write and "
                        "flush per response, as the TPS-trend write-up's load script did (it slows the "
                        "load generator on purpose); FILE is truncated, '-' or no value = stdout; "
                        "unopenable FILE: exit 2 [SUTLAB_PRINT_RESPONSES] (default off)")


def opt(environment, name):
    """A sutlab option from the parsed command line, else its environment/default value."""
    po = getattr(environment, "parsed_options", None)
    if po is not None and hasattr(po, name):
        return getattr(po, name)
    value = _default(name)
    if name in ("think_time", "login", "accept_encoding", "step_hold", "print_responses"):
        return value
    if name == "ramp_up":
        return ramp_seconds(value)
    if name in ("step_rate", "step_settle"):
        return float(value)
    return int(value)


def parse_seconds(text):
    """'30', '2.5', '30s', '2m', '1m30s' -> seconds (float)."""
    text = str(text).strip()
    try:
        return float(text)
    except ValueError:
        pass
    m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?", text)
    if not text or not m:
        raise ValueError("not a duration: %r (use 30, 2.5, 30s, 2m)" % text)
    h, mi, s = (float(x) if x else 0.0 for x in m.groups())
    return h * 3600 + mi * 60 + s


def ramp_seconds(text):
    """--ramp-up's value: seconds >= 0 as parse_seconds reads them (0 = off); anything else is an
    argparse type error, which Locust prints as one line and exit 2."""
    try:
        seconds = parse_seconds(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError("%r: seconds must be 0 (off) or more" % str(text))
    return seconds


def parse_think(text):
    text = str(text).strip()
    if "-" in text:
        a, b = text.split("-", 1)
        lo, hi = float(a), float(b)
    else:
        lo = hi = float(text)
    if lo < 0 or hi < lo:
        raise ValueError("bad --think-time %r" % text)
    return lo, hi

