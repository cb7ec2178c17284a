"""The tree's structure rules, as checker functions test_structure.py runs on the tree and
on fabricated inputs. Each checker returns its offenders as "path:line: what" strings, empty when
the rule holds.

  python_functions   no Python function or method over 60 lines (loadscripts/, tests/, infra/)
  c_functions        no C function over 80 lines (servers/)
  case_modules       no case module (loadscripts/sutlab_lab/cases/NAME.py: NAME and run) over 100 lines
  sys_path_edits     no Python file edits sys.path more than once
  imports_of_tests   nothing under loadscripts/ imports from tests/
  server_test_imports the server's tests take from sutlab_lab nothing but sutlab_lab.services

The files are those `git ls-files` lists (a fresh clone: nothing built, nothing left over), or, where
git is absent or refuses the tree, a walk that skips build trees, hidden folders and caches.
"""

import ast
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_FUNCTION_MAX = 60
C_FUNCTION_MAX = 80
CASE_MODULE_MAX = 100
PY_TREES = ("loadscripts/", "tests/", "infra/")
CASES = "loadscripts/sutlab_lab/cases/"
SERVER_TESTS = "tests/integration/server/"
SERVER_TEST_HELPERS = ("tests/integration/sutlab_testlib.py", "tests/integration/pgtest.py")


# --- the files -------------------------------------------------------------------------------

def tree_files(root=ROOT):
    """Repository-relative paths of the tree's files, sorted."""
    try:
        out = subprocess.run(["git", "-c", "safe.directory=" + root, "-C", root, "ls-files", "-z"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
        paths = [p for p in out.decode().split("\0") if p]
        if paths:
            return sorted(p for p in paths if os.path.isfile(os.path.join(root, p)))
    except (OSError, subprocess.CalledProcessError):
        pass
    return walk_files(root)


def walk_files(root):
    found = []
    for top, dirs, files in os.walk(root):
        # what .gitignore leaves out: the build trees and var/ at the top, caches anywhere
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d == "__pycache__"
                                           or (top == root and (d.startswith("build") or d == "var")))]
        for name in files:
            if not name.endswith(".pyc"):
                found.append(os.path.relpath(os.path.join(top, name), root))
    return sorted(found)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def is_python(root, path):
    """A .py file, or an extensionless script whose shebang names python."""
    if path.endswith(".py"):
        return True
    if "." in os.path.basename(path):
        return False
    with open(os.path.join(root, path), "rb") as f:
        first = f.readline(200)
    return first.startswith(b"#!") and b"python" in first


def python_files(root, paths, trees=PY_TREES):
    return [p for p in paths if p.startswith(trees) and is_python(root, p)]


def sources(root, paths):
    """(path, text) of each path."""
    return [(p, read(root, p)) for p in paths]


# --- Python functions --------------------------------------------------------------------------

def parse(path, text):
    """The module's ast, or a SyntaxError naming path:line (a file the checks cannot read is an
    offender, not a pass)."""
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as e:
        raise SyntaxError("%s:%s: %s" % (path, e.lineno, e.msg)) from None


def python_functions(files, limit=PY_FUNCTION_MAX):
    """Each function or method over `limit` lines, its `def` line to its last line."""
    out = []
    for path, text in files:
        for node in ast.walk(parse(path, text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append("%s:%d: %s is %d lines (at most %d)" % (path, node.lineno, node.name, n, limit))
    return out


# --- C functions -------------------------------------------------------------------------------

def c_blank(text):
    """The C text with comments, string and character literals and preprocessor lines turned into
    spaces, newlines kept: what is left has only the code's own braces, at their lines."""
    out, i, n = list(text), 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            i = blank(out, i, end)
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = blank(out, i, n if end < 0 else end + 2)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = blank(out, i, n if end < 0 else end)
        elif c in "\"'":
            i = blank(out, i, literal_end(text, i))
        else:
            i += 1
    return "".join(out)


def literal_end(text, i):
    """The index past the string or character literal that opens at text[i]."""
    quote, j = text[i], i + 1
    while j < len(text) and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1


def blank(out, start, end):
    for k in range(start, min(end, len(out))):
        if out[k] != "\n":
            out[k] = " "
    return end


def c_function_spans(text):
    """(name, first line, last line) of each function defined at file scope: a `{` at depth 0
    whose header (since the last `;` or `}` at depth 0) ends in a parameter list and assigns
    nothing (so no struct, enum or initializer). The first line is the one with the name."""
    code = c_blank(text)
    spans, depth, header_start, name = [], 0, 0, None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                name = function_name(code, header_start, i)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if name:
                    spans.append((name[0], code.count("\n", 0, name[1]) + 1, code.count("\n", 0, i) + 1))
                name, header_start = None, i + 1
        elif c == ";" and depth == 0:
            header_start = i + 1
    return spans


def function_name(code, start, end):
    """(name, index) when code[start:end] is a function's header, else None."""
    header = code[start:end].rstrip()
    if not header.endswith(")") or re.search(r"(?<![=!<>])=(?!=)", header):
        return None
    depth, k = 0, len(header) - 1
    while k >= 0:  # back to the `(` that opens the last parenthesised group: the parameters
        depth += {")": 1, "(": -1}.get(header[k], 0)
        if depth == 0:
            break
        k -= 1
    m = re.search(r"([A-Za-z_]\w*)\s*$", header[:k])
    if not m or m.group(1) in ("if", "while", "for", "switch", "return", "sizeof"):
        return None
    return m.group(1), start + m.start(1)


def c_functions(files, limit=C_FUNCTION_MAX):
    """Each C function over `limit` lines, from the line of its name to its closing brace."""
    out = []
    for path, text in files:
        for name, first, last in c_function_spans(text):
            if last - first + 1 > limit:
                out.append("%s:%d: %s is %d lines (at most %d)" % (path, first, name, last - first + 1, limit))
    return out


# --- case modules ------------------------------------------------------------------------------

def is_case_module(tree):
    """A case, as cases/__init__.py defines one: a module with NAME and run(ctx) of its own (the
    cases' shared modules, common, checks and texts, are none)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):  # NAME = ..., or NAME, TITLE = ...
            for t in node.targets:
                names.update(e.id for e in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(e, ast.Name))
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return {"NAME", "run"} <= names


def case_modules(files, limit=CASE_MODULE_MAX):
    """Each case module over `limit` lines."""
    out = []
    for path, text in files:
        if not is_case_module(parse(path, text)):
            continue
        n = len(text.splitlines())
        if n > limit:
            out.append("%s:%d: %d lines (at most %d)" % (path, limit + 1, n, limit))
    return out


# --- sys.path edits ----------------------------------------------------------------------------

def sys_names(tree):
    """The names the module binds to sys, and those it binds to sys.path itself."""
    mods, paths = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.update(a.asname or a.name for a in node.names if a.name == "sys")
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            paths.update(a.asname or a.name for a in node.names if a.name == "path")
    return mods, paths


def is_sys_path(node, mods, paths):
    if isinstance(node, ast.Name):
        return node.id in paths
    return (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
            and node.value.id in mods)


def sys_path_edit_lines(tree):
    """The lines of the statements that change sys.path: its insert/append/extend/remove/pop/clear,
    an assignment to it or to an item or slice of it, `+=` on it, `del` of an item."""
    mods, paths = sys_names(tree)
    lines = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("insert", "append", "extend", "remove", "pop", "clear"):
                targets = [node.func.value]
        elif isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        targets = [t.value if isinstance(t, ast.Subscript) else t for t in targets]
        if any(is_sys_path(t, mods, paths) for t in targets):
            lines.append(node.lineno)
    return sorted(lines)


def sys_path_edits(files, limit=1):
    out = []
    for path, text in files:
        lines = sys_path_edit_lines(parse(path, text))
        if len(lines) > limit:
            out.append("%s:%d: sys.path edited %d times (lines %s; at most %d)"
                       % (path, lines[limit], len(lines), ", ".join(map(str, lines)), limit))
    return out


# --- imports -----------------------------------------------------------------------------------

def imported(tree):
    """(line, module) of each import: `import a.b` gives a.b, `from a import b` gives a.b (b may be
    a module), a relative import gives None (it stays in its own package)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for a in node.names:
                yield node.lineno, node.module + "." + a.name


def docstrings(tree):
    nodes = [tree] + [n for n in ast.walk(tree)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return {id(n.body[0].value) for n in nodes
            if n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def paths_into_tests(tree):
    """(line, text) of each string (docstrings aside) that names a path into tests/: "tests" as one
    component of a path being joined, or text that starts with tests/ or has /tests/ in it."""
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            s = node.value
            if s.strip("/") == "tests" or re.search(r"(^|/)tests/", s):
                yield node.lineno, s


def test_module_names(paths):
    """The names a module of tests/ is imported by: each .py of tests/ (the folders the tests put on
    sys.path: tests/integration, its subfolders, tests/tools), and the package name `tests`."""
    return {"tests"} | {os.path.basename(p)[:-3] for p in paths if p.startswith("tests/") and p.endswith(".py")}


def imports_of_tests(files, test_modules):
    out = []
    for path, text in files:
        tree = parse(path, text)
        found = [(line, "imports %s, a module of tests/" % mod) for line, mod in imported(tree)
                 if mod.split(".")[0] in test_modules]
        found += [(line, "names a path into tests/: %r" % s) for line, s in paths_into_tests(tree)]
        out += ["%s:%d: %s" % (path, line, what) for line, what in sorted(found)]
    return out


def server_test_imports(files, package="sutlab_lab", allowed="sutlab_lab.services"):
    out = []
    for path, text in files:
        for line, mod in imported(parse(path, text)):
            if mod.split(".")[0] == package and mod != allowed and not mod.startswith(allowed + "."):
                out.append("%s:%d: imports %s (the server's tests take only %s from %s)"
                           % (path, line, mod, allowed, package))
    return out
