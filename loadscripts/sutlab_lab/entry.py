"""entry: how every command of loadscripts/ starts. run(NAME, argv) imports commands/NAME.py and
calls its main(argv); a Python module or a program that is not installed ends the command with one
line naming the Debian package that brings it, exit 1, instead of a traceback.

This module imports only the standard library: it is what still works when the rest cannot.
Commands check their own tools first where they can (steps, flip: exit 2 before anything starts);
this is the net under them, for a module imported at the top of a file or a program started deep
in a run. The packages come from infra/lib/common.sh, the one place they are listed."""

import importlib
import os
import re
import sys

COMMON_SH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))),
                         "infra", "lib", "common.sh")
HINT = "infra/lab up installs what the tools of loadscripts/ need"


def run(name, argv):
    """The command NAME's exit status."""
    try:
        main = importlib.import_module("sutlab_lab.commands." + name).main
        return main(argv)
    except ModuleNotFoundError as e:
        if not e.name or e.name.split(".")[0] == "sutlab_lab":
            raise  # a module of ours missing is a bug, not an install step
        print("%s: %s" % (name, missing_module(e.name)), file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        line = missing_program(e.filename) if isinstance(e.filename, str) else None
        if line is None:
            raise  # a file of the run's, not a program of the lists
        print("%s: %s" % (name, line), file=sys.stderr)
        return 1


def missing_module(module):
    """One line for a Python module /usr/bin/python3 cannot import."""
    top = module.split(".")[0]
    return "the Python module %s is not installed (Debian package %s; %s)" % (
        top, package_of(top, modules=True) or "python3-" + top.replace("_", "-"), HINT)


def missing_program(program):
    """One line for a program that could not be started, or None when no list names it (then it
    was a file, not a program: a missing CSV is the command's own error). Every program the code
    starts is in a list (test_pkglists holds that)."""
    pkg = package_of(program)
    if pkg is None:
        return None
    return "%s is not installed (Debian package %s; %s)" % (os.path.basename(program), pkg, HINT)


def package_of(name, modules=False, common_sh=COMMON_SH):
    """The package of NAME in the CMD:PKG lists (*_CMDS) of common.sh, or in its MODULE:PKG lists
    (*_PY_MODULES) with modules=True; None if no list has it."""
    try:
        with open(common_sh, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    kind = r"[A-Z_]+_PY_MODULES" if modules else r"[A-Z_]+_CMDS"
    for body in re.findall(r"^%s=\((.*?)\)" % kind, text, re.S | re.M):
        body = re.sub(r"#[^\n]*", "", body)
        for entry in body.split():
            key, _, pkg = entry.strip('"').rpartition(":")
            if key and (key == name or os.path.basename(key) == os.path.basename(name)
                        or modules and key.split(".")[0] == name):
                return pkg
    return None
