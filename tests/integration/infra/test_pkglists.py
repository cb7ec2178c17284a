#!/usr/bin/python3
"""Tests of the package and program lists of infra/lib/common.sh, against this machine's dpkg records
(no network), and of `infra/lab fresh-root`'s arguments.

Packages are installed with --no-install-recommends (ensure_pkgs): a program that only a Recommends
brings is missing on a fresh machine. That is how `infra/lab test` failed on one: netavark
runs iptables, which nothing installed. So:

- every CMD:PKG entry of LAB_CMDS, TOOL_CMDS, LAB_OPTION_CMDS, CONTAINER_CMDS and TEST_CMDS (and
  MODULE:PKG of TOOL_PY_MODULES) names a package of its own part's list: LAB_PKGS; LAB_PKGS +
  TOOL_PKGS (what infra/lab up installs, for the tools of loadscripts/); the packages infra/lab up's
  options add; CONTAINER_PKGS; LAB_PKGS + TEST_PKGS + npm (what infra/lab test installs);
- TEST_PKGS holds TOOL_PKGS: infra/lab test installs what up installs;
- on this machine (infra/lab test installed them before the tests run), each program is there, and
  the package that owns its file (dpkg -S, through symbolic links and alternatives) is PKG or one
  that PKG hard-depends on (Depends, Pre-Depends, transitively), or an Essential one. The same for
  the file each Python module is imported from. A program brought by a Recommends, or by another
  part's packages only, fails here;
- every program the Python code of loadscripts/ and tests/ starts by name (argv[0] of a subprocess
  call or of an argv list, shutil.which(NAME), need_tools, TOOLS) is in one of the lists, comes from
  an Essential or required package (every Debian has those), or is optional (OPTIONAL below);
- apt_host_sources reads one-line and deb822 sources as apt does;
- `infra/lab fresh-root --help` prints its usage; a bad --stage or argument is one line, exit 2.

Also run, outside meson, at the end of `infra/lab fresh-root --stage packages` on a fresh root.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("SUTLAB_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
LAB = os.path.join(ROOT, "infra", "lab")
COMMON = os.path.join(ROOT, "infra", "lib", "common.sh")
# root's PATH on Debian, without what a user's shell may put first (pyenv shims, ~/.local/bin)
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LISTS = ("LAB_PKGS", "TOOL_PKGS", "TEST_PKGS", "CONTAINER_PKGS", "LAB_CMDS", "TOOL_CMDS", "LAB_OPTION_CMDS",
         "CONTAINER_CMDS", "TEST_CMDS", "TOOL_PY_MODULES")
# Programs the code starts that no list needs: each is looked up first and skipped when absent.
OPTIONAL = {
    "promtool": "test_core_metrics checks /metrics with it when Prometheus is installed",
    "/no/such/binary": "test_procs: a program that does not exist, on purpose",
}


def common_lists():
    """{NAME: [items]} of the lists of infra/lib/common.sh, as bash sees them."""
    script = '. "$1"; shift; for n in "$@"; do declare -n a=$n; printf "%s\\t%s\\n" "$n" "${a[*]}"; done'
    out = subprocess.run(["bash", "-c", script, "lists", COMMON] + list(LISTS), env={"ROOT": ROOT, "PATH": PATH},
                         stdout=subprocess.PIPE, check=True, text=True).stdout
    return {name: items.split() for name, items in (line.split("\t", 1) for line in out.splitlines())}


def split_entry(entry):
    name, pkg = entry.rsplit(":", 1)
    return name, pkg


def bash_array(name):
    """The items of the array NAME of infra/lib/common.sh."""
    script = '. "$1"; declare -n a=$2; printf "%s\\n" "${a[@]}"'
    return subprocess.run(["bash", "-c", script, "x", COMMON, name], env={"ROOT": ROOT, "PATH": PATH},
                          stdout=subprocess.PIPE, check=True, text=True).stdout.split()


def option_pkgs():
    """The packages infra/lab up adds for its options (--tls, --lb, --netns ...), read from infra/lab:
    pkgs+=(PKG), pkgs+=("${LIST[@]}") and what lb_pkg prints."""
    with open(LAB) as f:
        text = f.read()
    pkgs = set(re.findall(r"pkgs\+=\(([a-z0-9][a-z0-9.+-]*)\)", text))
    for name in re.findall(r'pkgs\+=\("\$\{([A-Z_]+)\[@\]\}"\)', text):
        pkgs |= set(bash_array(name))
    m = re.search(r"^lb_pkg\(\) \{(.*)\}$", text, re.M)
    assert m, "no lb_pkg in infra/lab"
    pkgs |= set(re.findall(r"echo ([a-z0-9][a-z0-9.+-]*)", m.group(1)))
    return pkgs


class Dpkg:
    """The installed packages: status, Essential/Priority, what they provide and hard-depend on."""

    def __init__(self):
        fmt = "${Package}\\t${db:Status-Abbrev}\\t${Essential}\\t${Priority}\\t${Provides}\\t${Pre-Depends}, ${Depends}\\n"
        out = subprocess.run(["dpkg-query", "-W", "-f=" + fmt], stdout=subprocess.PIPE, check=True, text=True).stdout
        self.installed, self.always, self.providers, self.deps = set(), set(), {}, {}
        for line in out.splitlines():
            name, status, essential, priority, provides, deps = line.split("\t")
            if not status.startswith("ii"):
                continue
            self.installed.add(name)
            if essential == "yes" or priority == "required":
                self.always.add(name)
            for p in self.names(provides):
                self.providers.setdefault(p, set()).add(name)
            self.deps[name] = [self.names(group.replace("|", ",")) for group in deps.split(",") if group.strip()]

    @staticmethod
    def names(field):
        return [re.sub(r":\w+$", "", re.sub(r"\(.*?\)|\[.*?\]", "", x)).strip() for x in field.split(",") if x.strip()]

    def real(self, name):
        """The installed packages a dependency on `name` can be satisfied by."""
        got = {name} & self.installed
        return got | self.providers.get(name, set())

    def closure(self, pkg):
        """pkg and every installed package it hard-depends on, transitively."""
        seen, todo = set(), [pkg]
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            for group in self.deps.get(p, []):
                for alt in group:
                    todo.extend(self.real(alt) - seen)
        return seen

    @staticmethod
    def owner(path):
        """The package owning path (tried as it is, its merged-/usr twin, its target), or None."""
        def twin(p):
            for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"), ("/usr/lib/", "/lib/")):
                if p.startswith(a):
                    return b + p[len(a):]
                if p.startswith(b):
                    return a + p[len(b):]
            return p
        real = os.path.realpath(path)
        for p in (path, twin(path), real, twin(real)):
            out = subprocess.run(["dpkg-query", "-S", p], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True).stdout
            for line in out.splitlines():
                if not line.startswith("diversion ") and ": " in line:
                    return re.sub(r":\w+$", "", line.split(": ", 1)[0].split(",")[0].strip())
        return None


def find(name):
    if name.startswith("/"):
        return name if os.path.exists(name) else None
    return shutil.which(name, path=PATH)


class PackageLists(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lists = common_lists()
        lab, test = set(cls.lists["LAB_PKGS"]), set(cls.lists["TEST_PKGS"])
        tools = lab | set(cls.lists["TOOL_PKGS"])
        cls.parts = {  # list of CMD:PKG -> (part, the packages that part installs)
            "LAB_CMDS": ("lab", lab),
            "TOOL_CMDS": ("tools", tools),
            "TOOL_PY_MODULES": ("tools", tools),
            "LAB_OPTION_CMDS": ("lab (up's options)", option_pkgs()),
            "CONTAINER_CMDS": ("containers", set(cls.lists["CONTAINER_PKGS"])),
            "TEST_CMDS": ("test", lab | test | {"npm"}),
        }

    def test_test_packages_hold_the_tools_packages(self):
        self.assertEqual(sorted(set(self.lists["TOOL_PKGS"]) - set(self.lists["TEST_PKGS"])), [])

    def test_each_entry_names_a_package_of_its_part(self):
        wrong = []
        for lst, (part, pkgs) in self.parts.items():
            self.assertTrue(self.lists[lst], "%s is empty" % lst)
            for entry in self.lists[lst]:
                name, pkg = split_entry(entry)
                if pkg not in pkgs:
                    wrong.append("%s: %s: %s is not among the packages part %s installs" % (lst, entry, pkg, part))
        self.assertEqual(wrong, [], "\n".join(wrong))

    def test_option_packages_are_those_of_lab_option_cmds(self):
        self.assertEqual({split_entry(e)[1] for e in self.lists["LAB_OPTION_CMDS"]}, option_pkgs())

    def test_each_program_comes_from_its_package(self):
        dpkg = Dpkg()
        problems = []
        for lst in ("LAB_CMDS", "TOOL_CMDS", "LAB_OPTION_CMDS", "CONTAINER_CMDS", "TEST_CMDS"):
            for entry in self.lists[lst]:
                name, pkg = split_entry(entry)
                problems += self.check_owner(dpkg, lst, name, pkg, find(name))
        self.assertEqual(problems, [], "\n".join(problems))

    def test_each_python_module_comes_from_its_package(self):
        dpkg = Dpkg()
        problems = []
        for entry in self.lists["TOOL_PY_MODULES"]:
            module, pkg = split_entry(entry)
            p = subprocess.run(["/usr/bin/python3", "-c", "import sys, importlib; print(importlib.import_module(sys.argv[1]).__file__)",
                                module], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={"PATH": PATH})
            if p.returncode != 0:
                problems.append("TOOL_PY_MODULES: %s does not import: %s" % (module, p.stderr.strip().splitlines()[-1:]))
                continue
            problems += self.check_owner(dpkg, "TOOL_PY_MODULES", module, pkg, p.stdout.strip())
        self.assertEqual(problems, [], "\n".join(problems))

    def check_owner(self, dpkg, lst, name, pkg, path):
        if name == "npm" and path and "npm" not in dpkg.installed and dpkg.owner(path) == "nodejs":
            return []  # NodeSource's nodejs bundles npm: infra/lab test then installs no npm (npm_pkgs)
        if pkg not in dpkg.installed:
            return ["%s: %s: package %s is not installed here (infra/lab test installs it)" % (lst, name, pkg)]
        if not path:
            return ["%s: %s is missing although %s is installed: it comes from another package" % (lst, name, pkg)]
        owner = dpkg.owner(path)
        if owner is None:
            return ["%s: %s (%s) belongs to no Debian package" % (lst, name, path)]
        if owner in dpkg.closure(pkg) or owner in dpkg.always:
            return []
        return ["%s: %s (%s) belongs to %s, which %s does not depend on (a Recommends, or another part's "
                "package, brings it): add %s to the part's package list" % (lst, name, path, owner, pkg, owner)]

    def test_every_program_the_python_code_runs_is_listed(self):
        listed = {split_entry(e)[0] for lst in ("LAB_CMDS", "TOOL_CMDS", "LAB_OPTION_CMDS", "CONTAINER_CMDS", "TEST_CMDS")
                  for e in self.lists[lst]}
        listed |= {os.path.basename(n) for n in listed}
        dpkg = Dpkg()
        unlisted = []
        for prog, files in sorted(programs_run().items()):
            if prog in listed or os.path.basename(prog) in listed or prog in OPTIONAL:
                continue
            path = find(prog)
            owner = dpkg.owner(path) if path else None
            if owner in dpkg.always:
                continue
            unlisted.append("%s (run by %s; package: %s)" % (prog, ", ".join(sorted(files)[:3]), owner or "?"))
        self.assertEqual(unlisted, [], "programs in no list of infra/lib/common.sh:\n" + "\n".join(unlisted))

    def test_every_module_the_python_code_imports_is_listed(self):
        listed = {split_entry(e)[0] for e in self.lists["TOOL_PY_MODULES"]}
        listed |= {m.split(".")[0] for m in listed}
        unlisted = ["%s (imported by %s)" % (m, ", ".join(sorted(files)[:3]))
                    for m, files in sorted(modules_imported().items())
                    if m not in listed and m.split(".")[0] not in listed]
        self.assertEqual(unlisted, [], "modules in no TOOL_PY_MODULES entry of infra/lib/common.sh:\n" +
                         "\n".join(unlisted))


def python_files():
    """(path, source) of every Python file of loadscripts/ and tests/ (scripts without .py too)."""
    for top in ("loadscripts", "tests"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                path = os.path.join(dirpath, f)
                try:
                    with open(path, "rb") as fh:
                        text = fh.read()
                except OSError:
                    continue
                if f.endswith(".py") or text.startswith(b"#!/usr/bin/python3"):
                    yield path, text


def modules_imported():
    """{module: {files}} imported by the Python code of loadscripts/ and tests/, but for the standard
    library and the project's own modules (its .py files and packages)."""
    local = set()
    for top in ("loadscripts", "tests"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            local |= {f[:-3] for f in files if f.endswith(".py")}
            if "__init__.py" in files:
                local.add(os.path.basename(dirpath))
    found = {}
    for path, text in python_files():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
                names = [n.module]
            else:
                continue
            for m in names:
                top = m.split(".")[0]
                if top not in sys.stdlib_module_names and top not in local and top != "__future__":
                    found.setdefault(m, set()).add(os.path.relpath(path, ROOT))
    return found


def first_name(node):
    """The string that starts an argv-like expression: ["prog", ...], prefix + ["prog", ...]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return first_name(node.left) or first_name(node.right)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        e = node.elts[0]
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return e.value
    return None


def programs_run():
    """{program: {files}} started by name in the Python code of loadscripts/ and tests/: the first
    item of a subprocess call's argv, shutil.which(NAME), need_tools(...) (all taken, installed or
    not); the first item of an argv list built elsewhere (argv = [...], return [...], TOOLS), taken
    when it names an installed program (other lists start with plain words)."""
    calls = {"run", "Popen", "check_output", "check_call", "call", "run_tool", "tool", "first_line",
             "ServerProcess", "execve"}
    found = {}
    for path, text in python_files():
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for n in ast.walk(tree):
            strong, weak = [], []
            if isinstance(n, ast.Call):
                fn = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
                if fn == "which" and n.args and isinstance(n.args[0], ast.Constant):
                    strong.append(n.args[0].value)
                elif fn == "need_tools":
                    strong += [a.value for a in n.args[1:] if isinstance(a, ast.Constant)]
                elif fn in calls and n.args:
                    strong.append(first_name(n.args[0]))
            elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                target = n.targets[0].id
                if target in ("argv", "cmd", "base"):
                    weak.append(first_name(n.value))
                elif target == "TOOLS" and isinstance(n.value, (ast.Tuple, ast.List, ast.Dict)):
                    elts = n.value.keys if isinstance(n.value, ast.Dict) else n.value.elts
                    weak += [e.value for e in elts if isinstance(e, ast.Constant)]
            elif isinstance(n, ast.Return) and n.value is not None:
                weak.append(first_name(n.value))
            for name in strong + [w for w in weak if isinstance(w, str) and find(w)]:
                if isinstance(name, str) and re.match(r"^(/[\w./+-]+|[a-z][\w.+-]*)$", name):
                    found.setdefault(name, set()).add(os.path.relpath(path, ROOT))
    return found


class AptSources(unittest.TestCase):
    def sources(self, files):
        etc = tempfile.mkdtemp(prefix="sutlab-apt-")
        self.addCleanup(shutil.rmtree, etc, True)
        os.makedirs(os.path.join(etc, "sources.list.d"))
        for name, text in files.items():
            with open(os.path.join(etc, name), "w") as f:
                f.write(text)
        script = '. "$1"; shift; "$@"'
        return lambda *cmd: subprocess.run(["bash", "-c", script, "x", COMMON] + list(cmd), stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True, env={"ROOT": ROOT, "PATH": PATH, "APT_ETC": etc})

    def test_deb822_and_one_line(self):
        run = self.sources({
            "sources.list": "# a comment\ndeb-src http://src.example/debian bookworm main\n"
                            "deb [arch=amd64 signed-by=/k.gpg] http://one.example/debian/ bookworm-backports main contrib # x\n",
            "sources.list.d/debian.sources":
                "Types: deb deb-src\nURIs: http://m.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"
                "Signed-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n -----END PGP PUBLIC KEY BLOCK-----\n\n"
                "# the security suite\nTypes: deb\nURIs: http://s.example/debian-security/\nSuites: bookworm-security\n"
                "Components: main non-free-firmware\n\nTypes: deb\nURIs: http://off.example/debian\nSuites: bookworm\n"
                "Components: main\nEnabled: no\n",
            "sources.list.d/other.sources": "Types: deb\nURIs: https://nodes.example/node\nSuites: nodistro\nComponents: main\n",
        })
        p = run("apt_host_sources")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(p.stdout.splitlines()), sorted([
            "http://one.example/debian/ bookworm-backports main contrib",
            "http://m.example/debian bookworm main", "http://m.example/debian bookworm-updates main",
            "http://s.example/debian-security/ bookworm-security main non-free-firmware",
            "https://nodes.example/node nodistro main"]))
        self.assertEqual(run("debian_mirror", "bookworm").stdout, "http://m.example/debian\n")
        self.assertEqual(run("debian_sources_list", "bookworm").stdout.splitlines(), [
            "deb http://m.example/debian bookworm main", "deb http://m.example/debian bookworm-updates main",
            "deb http://s.example/debian-security bookworm-security main non-free-firmware"])

    def test_no_source_for_the_release(self):
        run = self.sources({"sources.list": "deb http://m.example/debian trixie main\n"})
        p = run("debian_mirror", "bookworm")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("no source for Debian bookworm", p.stderr)


class FreshRootUsage(unittest.TestCase):
    def lab(self, *args):
        return subprocess.run(["bash", LAB, "fresh-root"] + list(args), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30,
                              env={"PATH": PATH, "HOME": os.environ.get("HOME", "/root")})

    def test_help(self):
        p = self.lab("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("usage: infra/lab fresh-root [--stage packages|up|test|all]"), p.stdout)
        for word in ("--keep", "--rebuild", "packages", "up", "test", "all"):
            self.assertIn(word, p.stdout)

    def test_usage_errors(self):
        for args, says in ((["--stage", "bogus"], '--stage is packages, up, test or all, not "bogus"'),
                           (["--stage=pkgs"], "not \"pkgs\""), (["--stage"], "--stage needs a value"),
                           (["--frobnicate"], "unknown argument --frobnicate")):
            p = self.lab(*args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertEqual(p.stdout, "", args)
            self.assertEqual(len(p.stderr.splitlines()), 1, (args, p.stderr))
            self.assertIn(says, p.stderr)

    def test_listed_in_lab_help(self):
        p = subprocess.run(["bash", LAB, "help"], stdout=subprocess.PIPE, text=True, env={"PATH": PATH})
        self.assertIn("fresh-root [--stage packages|up|test|all] [--keep] [--rebuild]", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
