#!/usr/bin/python3
"""The README's first screen, run as a newcomer would run it.

The commands are read from README.md itself, from its top to the line that ends the first screen
(`<!-- The first screen ends here`): every line of a fenced block that is not ```text (a command's
comment after "  #" dropped), and every inline code span, that starts as a command of the lab does
(infra/lab, loadscripts/, curl, docker compose, build/sutlab). They run in the order they stand, each
once, with bash from the repository top, against a private lab: its own state directory and free
ports (the README's 127.0.0.1:8080 is rewritten to the lab's port, the only change made to a
command), the binary of this build (SUTLAB_BIN, else build/sutlab). curl is made to fail on an HTTP
error (a private ~/.curlrc with `fail`). Any non-zero exit fails the test, naming the command.

Two commands are not run, for a reason each: `infra/lab test` (this test is one of its tests) and
`docker compose` (it needs a Docker engine; integration-containers runs the same compose file with
podman). The table the README shows after the flip command must have the columns flip prints.

Standard library only: `infra/lab fresh-root --stage up` runs this file too, in a root that has the
lab's and the tools' packages and nothing of the tests'.
"""

import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("SUTLAB_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
README = os.path.join(ROOT, "README.md")
END = "<!-- The first screen ends here"
STARTS = ("infra/lab ", "loadscripts/", "curl ", "docker compose ", "build/sutlab ")
NOT_RUN = {
    "infra/lab test": "the test command: this test is one of its tests",
    "docker compose": "needs a Docker engine, none here: integration-containers runs the compose file with podman",
}
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def first_screen(text):
    """The README's lines up to the end-of-first-screen marker."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(END):
            return lines[:i]
    raise AssertionError("README.md has no line starting %r" % END)


def commands(lines):
    """(command, is_fenced) in document order, each once; and the ```text blocks, as lists of lines,
    keyed by the command that stands last before each."""
    found, texts, fence, last = [], {}, None, None
    for line in lines:
        if line.startswith("```"):
            fence = None if fence is not None else (line[3:].strip() or "sh")
            if fence == "text":
                texts[last] = []
            continue
        if fence == "text":
            texts[last].append(line)
            continue
        candidates = [re.split(r"\s{2,}#", line)[0].strip()] if fence else re.findall(r"`([^`]+)`", line)
        for c in candidates:
            c = c.strip()
            if c.startswith(STARTS) or c in ("infra/lab up", "infra/lab down", "infra/lab test"):
                if c not in found:
                    found.append(c)
                last = c
    return found, texts


def skipped(command):
    for prefix, why in NOT_RUN.items():
        if command == prefix or command.startswith(prefix + " "):
            return why
    return None


def free_port(taken=set()):  # noqa: B006 - the ports handed out so far, on purpose
    """A loopback port from 20000-32767, below Linux's ephemeral range (as the lab's defaults are:
    a port bind(0) hands out is one the next outgoing connection may take), free and not yet given."""
    rnd = random.Random()
    for _ in range(500):
        port = rnd.randrange(20000, 32768)
        if port in taken:
            continue
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        taken.add(port)
        return port
    raise AssertionError("no free port")


class FirstScreen(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(README, encoding="utf-8") as f:
            cls.commands, cls.texts = commands(first_screen(f.read()))

    def setUp(self):
        self.var = tempfile.mkdtemp(prefix="sutlab-readme-")
        os.chmod(self.var, 0o755)   # PostgreSQL's user must reach its data below it
        home = os.path.join(self.var, "home")
        os.makedirs(home)
        with open(os.path.join(home, ".curlrc"), "w") as f:
            f.write("fail\nsilent\nshow-error\nmax-time = 20\n")
        self.port = free_port()
        binary = os.environ.get("SUTLAB_BIN") or os.path.join(ROOT, "build", "sutlab")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")}
        self.env.update(HOME=home, PATH=PATH, SUTLAB_LAB_VAR=self.var, SUTLAB_LAB_BIN=binary,
                        SUTLAB_LAB_PORT=str(self.port), SUTLAB_LAB_BACKEND_PORT=str(free_port()),
                        SUTLAB_LAB_PG_PORT=str(free_port()), SUTLAB_LAB_REDIS_PORT=str(free_port()),
                        SUTLAB_LAB_TLS_PORT=str(free_port()), SUTLAB_LAB_ADMIN_PORT=str(free_port()))
        self.addCleanup(shutil.rmtree, self.var, ignore_errors=True)
        self.addCleanup(self.bash, "infra/lab down", check=False)

    def bash(self, command, check=True):
        sys.stderr.write("$ %s\n" % command)
        p = subprocess.run(["bash", "-c", command], cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if check and p.returncode != 0:
            self.fail("README's first screen: `%s` exited %d:\n%s" % (command, p.returncode, p.stdout[-4000:]))
        return p.stdout

    def test_the_first_screen_runs(self):
        ran = []
        for command in self.commands:
            why = skipped(command)
            if why:
                sys.stderr.write("(not run: `%s`: %s)\n" % (command, why))
                continue
            out = self.bash(command.replace("127.0.0.1:8080", "127.0.0.1:%d" % self.port))
            ran.append(command)
            if command.startswith("loadscripts/flip ") and command in self.texts:
                self.check_shown_table(command, self.texts[command], out)
        # the test cannot pass on a first screen it failed to read
        for need in ("infra/lab up", "curl ", "loadscripts/flip "):
            self.assertTrue([c for c in ran if c.startswith(need)], "no `%s...` run; read: %s" % (need, self.commands))

    def check_shown_table(self, command, shown, printed):
        """The README shows the table `command` prints: the same columns, an off and an on row."""
        header = [line.split() for line in shown if line.startswith("run ")]
        self.assertEqual(len(header), 1, "the README shows no table header after `%s`" % command)
        got = [line.split() for line in printed.splitlines() if line.startswith("run ")]
        self.assertEqual(len(got), 1, printed[-3000:])
        self.assertEqual(header[0], got[0], "the README's table for `%s` has other columns than it prints" % command)
        rows = [line.split()[0] for line in printed.splitlines() if line.split()[:1] in (["off"], ["on"])]
        self.assertEqual(rows, ["off", "on"], printed[-3000:])


class Reading(unittest.TestCase):
    """The reader of the first screen, on fabricated text: what it takes, what it leaves."""

    TEXT = """# title

```
infra/lab up      # installs
infra/lab test    # tests
```

Run `infra/lab up`, or `docker compose -f x.yml up -d`; log in as `user1@example.com`.

| `curl http://127.0.0.1:8080/health_check` | the stack |

```sh
loadscripts/flip --gzip --duration 3
```

```text
run  change  req/s
```

<!-- The first screen ends here: -->
`curl http://127.0.0.1:8080/after`
"""

    def test_commands_in_order_once_each_and_only_the_first_screen(self):
        found, texts = commands(first_screen(self.TEXT))
        self.assertEqual(found, ["infra/lab up", "infra/lab test", "docker compose -f x.yml up -d",
                                 "curl http://127.0.0.1:8080/health_check", "loadscripts/flip --gzip --duration 3"])
        self.assertEqual(texts, {"loadscripts/flip --gzip --duration 3": ["run  change  req/s"]})

    def test_what_is_not_run_and_why(self):
        self.assertIn("this test", skipped("infra/lab test"))
        self.assertIn("Docker engine", skipped("docker compose -f x.yml up -d"))
        self.assertIsNone(skipped("infra/lab up"))
        self.assertIsNone(skipped("infra/lab testing-something"))

    def test_a_readme_without_the_marker_fails(self):
        with self.assertRaises(AssertionError):
            first_screen("# title\n\n`infra/lab up`\n")


if __name__ == "__main__":
    unittest.main()
