"""The commands' command lines and ends: a usage error is one line, `PROG: what is wrong`, and
exit 2; a long run's failure one line and exit 1, an interrupt exit 130 (guarded)."""

import argparse
import signal
import subprocess
import sys

from .errors import RunError


class Usage(Exception):
    """A bad command line found after parsing (a missing combination, a tool not installed): the
    command prints it as Parser.error does and returns 2."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, but its errors are one line on stderr, without the usage text argparse
    prints first, and exit 2."""

    def error(self, message):
        print("%s: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(2)


def guarded(run, log, interrupted="interrupted", cleanup=None, prefix="error: "):
    """run() -> its exit status, ended the way every long command ends: a RunError or a tool's
    time-out is one line through log and exit 1, an interrupt (Ctrl-C, or a signal the command
    turned into KeyboardInterrupt) `interrupted` and exit 130. cleanup() runs after in every
    case, with SIGINT and SIGTERM ignored, so that a second Ctrl-C cannot cut it short."""
    try:
        return run()
    except RunError as e:
        log("%s%s" % (prefix, e))
        return 1
    except subprocess.TimeoutExpired as e:
        log("%stimed out: %s" % (prefix, e))
        return 1
    except KeyboardInterrupt:
        log(interrupted)
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if cleanup is not None:
            cleanup()
