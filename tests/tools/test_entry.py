"""sutlab_lab.entry: a Python module or a program that is not installed ends a command with one line
naming its Debian package (from infra/lib/common.sh's lists), exit 1, never a traceback."""

import os
import subprocess
import tempfile
import unittest

import toolstest  # noqa: F401  (the library on sys.path)
from sutlab_lab import LOADSCRIPTS, entry  # noqa: I100

COMMON = """\
LAB_PKGS=(meson curl)
TOOL_CMDS=(/usr/bin/python3:python3 wrk:wrk ab:apache2-utils   # a comment
           "$PG_BIN/pgbench:postgresql-15")
TOOL_PY_MODULES=(prometheus_client.parser:python3-prometheus-client
                 psutil:python3-psutil)
"""


class PackageOf(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".sh")
        with os.fdopen(fd, "w") as f:
            f.write(COMMON)
        self.addCleanup(os.unlink, self.path)

    def test_programs_by_name_and_by_path(self):
        self.assertEqual(entry.package_of("ab", common_sh=self.path), "apache2-utils")
        self.assertEqual(entry.package_of("wrk", common_sh=self.path), "wrk")
        self.assertEqual(entry.package_of("/usr/lib/postgresql/15/bin/pgbench", common_sh=self.path),
                         "postgresql-15")

    def test_modules_by_their_top_level_name(self):
        self.assertEqual(entry.package_of("prometheus_client", modules=True, common_sh=self.path),
                         "python3-prometheus-client")
        self.assertEqual(entry.package_of("psutil", modules=True, common_sh=self.path), "python3-psutil")
        self.assertIsNone(entry.package_of("psutil", common_sh=self.path))  # not a program

    def test_what_no_list_names_is_none(self):
        self.assertIsNone(entry.package_of("meson", common_sh=self.path))  # a package, not a CMD:PKG
        self.assertIsNone(entry.package_of("results.csv", common_sh=self.path))
        self.assertIsNone(entry.package_of("wrk", common_sh="/no/such/common.sh"))


class Lines(unittest.TestCase):
    """Against the repository's own infra/lib/common.sh."""

    def test_a_missing_program_names_its_package(self):
        self.assertEqual(entry.missing_program("ab"), "ab is not installed (Debian package apache2-utils; "
                         "infra/lab up installs what the tools of loadscripts/ need)")

    def test_a_file_that_is_not_a_program_is_left_to_the_command(self):
        self.assertIsNone(entry.missing_program("var/steps/steps.csv"))

    def test_a_missing_module_names_its_package(self):
        self.assertIn("the Python module psutil is not installed (Debian package python3-psutil;",
                      entry.missing_module("psutil"))
        # a module no list has: Debian's naming of Python 3 modules
        self.assertIn("(Debian package python3-no-such-thing;", entry.missing_module("no_such_thing.sub"))


class Commands(unittest.TestCase):
    """A real command of loadscripts/ run with a module made unimportable."""

    def run_without(self, module, command, *args):
        code = ("import runpy, sys; sys.modules[%r] = None; sys.argv = [%r] + %r; "
                "runpy.run_path(%r, run_name='__main__')" % (module, command, list(args), command))
        return subprocess.run(["/usr/bin/python3", "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)

    def test_flip_without_psutil_is_one_line_and_exit_1(self):
        p = self.run_without("psutil", os.path.join(LOADSCRIPTS, "flip"), "--count-pagination", "--duration", "1")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(p.stderr.strip().splitlines(), [
            "flip: the Python module psutil is not installed (Debian package python3-psutil; "
            "infra/lab up installs what the tools of loadscripts/ need)"])

    def test_every_command_starts_through_entry(self):
        for name in ("bench", "case", "console", "flip", "plot", "soak", "spray", "steps", "jmeter/run"):
            with open(os.path.join(LOADSCRIPTS, name)) as f:
                text = f.read()
            self.assertIn("from sutlab_lab.entry import run", text, name)
            self.assertIn('sys.exit(run("%s", sys.argv[1:]))' % os.path.basename(name).replace("run", "jmeter"),
                          text, name)


if __name__ == "__main__":
    unittest.main()
