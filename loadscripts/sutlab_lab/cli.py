"""The commands' command lines: a usage error is one line, `PROG: what is wrong`, and exit 2."""

import argparse
import sys


class Usage(Exception):
    """A bad command line found after parsing (a missing combination, a tool not installed): the
    command prints it as Parser.error does and returns 2."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, but its errors are one line on stderr, without the usage text argparse
    prints first, and exit 2."""

    def error(self, message):
        print("%s: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(2)
