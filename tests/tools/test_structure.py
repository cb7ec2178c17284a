"""The tree holds to its structure rules (tests/tools/structure.py): short Python and C functions,
short case modules, one sys.path edit per file at most, loadscripts/ independent of tests/, and the
server's tests taking only the services layer from the lab's package. Each checker is first shown to
catch a fabricated offender, then run on the tree; a failure lists the offenders as path:line."""

import ast
import os
import shutil
import tempfile
import textwrap
import unittest

import structure as st

ROOT = st.ROOT


def no_offenders(test, out, what):
    """Fails listing the offenders, one path:line a line."""
    if out:
        test.fail("%s:\n  %s" % (what, "\n  ".join(out)))


def fn(name, body_lines, indent=""):
    """A Python function `name` of 1 + body_lines lines."""
    return "".join([indent + "def %s():\n" % name] + [indent + "    x = %d\n" % i for i in range(body_lines)])


def c_fn(name, lines):
    """A C function of exactly `lines` lines, from its name's line to its closing brace, with braces
    in its comments, strings and character literals (which must not end it early)."""
    body = ['    const char *s = "}}}";  /* } */', "    char c = '}';  // }", "    if (c) {", "    }"]
    body += ["    n += %d;" % i for i in range(lines - 3 - len(body))]
    return "static int\n%s(int n)\n{\n%s\n}\n" % (name, "\n".join(body))


C_AROUND = textwrap.dedent("""\
    #include <stdio.h>
    #define OPEN {  /* a macro with a brace */
    #define LONG_MACRO(x) do { \\
        x; } while (0)
    /* a comment with a function in it: int g(void) { */
    struct pair { int a; int b; };
    static const struct pair pairs[] = { { 1, 2 }, { 3, 4 } };
    enum colour { RED, GREEN };
    static int small(void) { return '{'; }
    """)


class Files(unittest.TestCase):
    def test_tree_files_are_git_tracked_files(self):
        paths = st.tree_files()
        self.assertIn("tests/tools/toolstest.py", paths)
        self.assertIn("servers/core/server.c", paths)
        self.assertFalse([p for p in paths if p.startswith(("build", ".git/"))], "build trees or .git listed")

    def test_walk_skips_build_trees_hidden_folders_and_caches(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        for rel in ("loadscripts/a.py", "build-test/b.py", ".git/c.py", "tests/__pycache__/d.py", "var/e.py",
                    "tests/f.py"):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            open(os.path.join(tmp, rel), "w").close()
        self.assertEqual(st.walk_files(tmp), ["loadscripts/a.py", "tests/f.py"])
        self.assertEqual(st.tree_files(tmp), ["loadscripts/a.py", "tests/f.py"])  # not a git tree

    def test_python_scripts_by_shebang(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        for name, first in (("tool", "#!/usr/bin/env python3\n"), ("shell", "#!/bin/sh\n"), ("m.py", "x = 1\n"),
                            ("data.txt", "#!/usr/bin/python3\n")):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(first)
        self.assertEqual(sorted(p for p in os.listdir(tmp) if st.is_python(tmp, p)), ["m.py", "tool"])


class PythonFunctions(unittest.TestCase):
    def test_catches_a_function_over_the_limit(self):
        text = fn("ok", 59) + fn("long", 60) + "class K:\n" + fn("method", 61, "    ")
        out = st.python_functions([("x.py", text)])
        self.assertEqual(out, ["x.py:61: long is 61 lines (at most 60)", "x.py:123: method is 62 lines (at most 60)"])

    def test_catches_an_async_or_nested_function(self):
        text = "def outer():\n" + fn("inner", 70, "    ") + "async " + fn("coro", 61)
        self.assertEqual([o.split(": ")[1].split()[0] for o in st.python_functions([("x.py", text)])],
                         ["outer", "coro", "inner"])

    def test_a_file_that_does_not_parse_is_an_offender(self):
        with self.assertRaisesRegex(SyntaxError, r"^bad\.py:2: "):
            st.python_functions([("bad.py", "x = 1\ndef (:\n")])

    def test_tree(self):
        files = st.sources(ROOT, st.python_files(ROOT, st.tree_files()))
        self.assertGreater(len(files), 100)
        out = st.python_functions(files)
        no_offenders(self, out, "Python functions over %d lines" % st.PY_FUNCTION_MAX)


class CFunctions(unittest.TestCase):
    def test_scanner_measures_each_function_from_its_name_to_its_brace(self):
        text = C_AROUND + c_fn("long_one", 81) + "\nint main(void)\n{\n    return small();\n}\n"
        spans = st.c_function_spans(text)
        self.assertEqual([s[0] for s in spans], ["small", "long_one", "main"])
        self.assertEqual([s[2] - s[1] + 1 for s in spans], [1, 81, 4])
        self.assertEqual(text.splitlines()[spans[1][1] - 1], "long_one(int n)")

    def test_catches_a_function_over_the_limit(self):
        text = C_AROUND + c_fn("fits", 80) + c_fn("long_one", 81)
        first = text.splitlines().index("long_one(int n)") + 1
        self.assertEqual(st.c_functions([("x.c", text)]), ["x.c:%d: long_one is 81 lines (at most 80)" % first])

    def test_braces_in_literals_and_comments_do_not_count(self):
        code = st.c_blank("a /* { */ b // }\n\"{\\\"}\" '}' '\\'' #x\n#define Y {\\\n}\nz")
        self.assertEqual(code.count("\n"), 4)
        self.assertNotIn("{", code)
        self.assertNotIn("}", code)
        self.assertEqual(code.split(), ["a", "b", "#x", "z"])

    def test_tree(self):
        paths = [p for p in st.tree_files() if p.startswith("servers/") and p.endswith((".c", ".h"))]
        files = st.sources(ROOT, paths)
        self.assertGreater(sum(len(st.c_function_spans(t)) for _, t in files), 300)
        out = st.c_functions(files)
        no_offenders(self, out, "C functions over %d lines" % st.C_FUNCTION_MAX)


class CaseModules(unittest.TestCase):
    CASE = 'NAME = "x"\n\n\ndef run(ctx):\n    return [], []\n'

    def test_catches_a_case_module_over_the_limit(self):
        self.assertEqual(st.case_modules([("c.py", self.CASE + "\n" * 95)]), [])
        self.assertEqual(st.case_modules([("c.py", self.CASE + "\n" * 96)]), ["c.py:101: 101 lines (at most 100)"])

    def test_a_case_module_has_name_and_run(self):
        self.assertTrue(st.is_case_module(ast.parse(self.CASE)))
        self.assertTrue(st.is_case_module(ast.parse('NAME, TITLE = "x", "y"\n\n\ndef run(ctx):\n    pass\n')))
        self.assertFalse(st.is_case_module(ast.parse("def run(ctx):\n    pass\n")))
        self.assertFalse(st.is_case_module(ast.parse("class C:\n    NAME = 1\n\n    def run(self):\n        pass\n")))

    def test_tree(self):
        paths = [p for p in st.tree_files() if p.startswith(st.CASES) and p.endswith(".py")]
        files = st.sources(ROOT, paths)
        found = {os.path.basename(p)[:-3] for p, t in files if st.is_case_module(ast.parse(t))}
        self.assertEqual(found, registered_cases(), "the case modules, as cases/__init__.py's CASES lists them")
        out = st.case_modules(files)
        no_offenders(self, out, "case modules over %d lines" % st.CASE_MODULE_MAX)


def registered_cases():
    """The module names in cases/__init__.py's CASES."""
    tree = ast.parse(st.read(ROOT, st.CASES + "__init__.py"))
    value = [n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "CASES"][0]
    return {n.id for n in ast.walk(value.generators[0].iter) if isinstance(n, ast.Name)}


class SysPathEdits(unittest.TestCase):
    def edits(self, text):
        return st.sys_path_edit_lines(ast.parse(textwrap.dedent(text)))

    def test_counts_statements_not_mentions(self):
        self.assertEqual(self.edits('''\
            """Run with sys.path.insert(0, x) done by the caller; sys.path.append too."""
            import sys
            print("sys.path.append(1)", sys.path[0], len(sys.path))  # sys.path.insert(0, "y")
            sys.path.insert(0, "a")
            '''), [4])

    def test_every_form_of_edit(self):
        self.assertEqual(self.edits('''\
            import sys
            import sys as s2
            from sys import path as p
            sys.path.insert(0, "a")
            sys.path.append("b")
            sys.path[:0] = ["c"]
            sys.path = ["d"]
            s2.path.extend(["e"])
            p.insert(0, "f")
            sys.path += ["g"]
            del sys.path[0]
            other.path.append("h")
            '''), [4, 5, 6, 7, 8, 9, 10, 11])

    def test_catches_a_second_edit(self):
        text = "import sys\nimport os\nsys.path.insert(0, 'a')\nif os:\n    sys.path.append('b')\n"
        self.assertEqual(st.sys_path_edits([("one.py", text.replace("sys.path.append('b')", "pass"))]), [])
        self.assertEqual(st.sys_path_edits([("two.py", text)]),
                         ["two.py:5: sys.path edited 2 times (lines 3, 5; at most 1)"])

    def test_tree(self):
        out = st.sys_path_edits(st.sources(ROOT, st.python_files(ROOT, st.tree_files())))
        no_offenders(self, out, "files that edit sys.path more than once")


class ImportsOfTests(unittest.TestCase):
    MODULES = st.test_module_names(["tests/integration/sutlab_testlib.py", "tests/integration/pgtest.py",
                                    "tests/tools/toolstest.py", "tests/unit/test_x.c"])

    def test_names_of_test_modules(self):
        self.assertEqual(self.MODULES, {"tests", "sutlab_testlib", "pgtest", "toolstest"})

    def test_catches_an_import_or_a_path_into_tests(self):
        text = textwrap.dedent('''\
            """Unlike tests/integration/sutlab_testlib.py, this imports nothing of tests/."""
            import os
            import sutlab_testlib
            from pgtest import db_url
            from tests.integration import x
            HELPERS = os.path.join(ROOT, "tests", "integration")
            HARNESS = "tests/harness/with-services"
            OK = "Time taken for tests: 2 seconds"
            ''')
        self.assertEqual([o.split(": ")[0] for o in st.imports_of_tests([("l.py", text)], self.MODULES)],
                         ["l.py:3", "l.py:4", "l.py:5", "l.py:6", "l.py:7"])

    def test_tree(self):
        paths = st.tree_files()
        files = [f for f in st.sources(ROOT, st.python_files(ROOT, paths)) if f[0].startswith("loadscripts/")]
        self.assertGreater(len(files), 50)
        out = st.imports_of_tests(files, st.test_module_names(paths))
        no_offenders(self, out, "loadscripts/ depends on tests/")


class ServerTestImports(unittest.TestCase):
    def test_only_the_services_layer(self):
        text = textwrap.dedent("""\
            import sutlab_testlib
            from sutlab_lab import services
            from sutlab_lab.services import procs
            from sutlab_lab.services.server import ServerProcess
            import sutlab_lab.services.client
            from sutlab_lab import metrics
            from sutlab_lab.metrics import parse_metrics
            import sutlab_lab
            from sutlab_lab import services, report
            from . import boardlib
            """)
        self.assertEqual([o.split(": ")[0] for o in st.server_test_imports([("s.py", text)])],
                         ["s.py:6", "s.py:7", "s.py:8", "s.py:9"])

    def test_tree(self):
        # the server tests, and the helpers they share with the others (what they import counts too)
        paths = [p for p in st.python_files(ROOT, st.tree_files())
                 if p.startswith(st.SERVER_TESTS) or p in st.SERVER_TEST_HELPERS]
        self.assertGreater(len(paths), 10)
        self.assertTrue(set(st.SERVER_TEST_HELPERS) <= set(paths), "a shared helper has moved: %s" % paths)
        out = st.server_test_imports(st.sources(ROOT, paths))
        no_offenders(self, out, "server tests importing more than the services layer")


if __name__ == "__main__":
    unittest.main(verbosity=2)
