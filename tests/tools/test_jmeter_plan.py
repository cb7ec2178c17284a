"""loadscripts/jmeter/rpc_echo.jmx: what the plan must hold (read as XML), and, where JMeter is
installed, a short run with print on: one printed line per sample of the JTL, none with it off.

  /usr/bin/python3 tests/tools/test_jmeter_plan.py
"""

import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

import toolstest  # noqa: F401  (first: it puts loadscripts/ on the path, for package sutlab_lab)
from sutlab_lab.services import procs  # noqa: I100
from sutlab_lab.services.server import ServerProcess

PLAN = os.path.join(toolstest.ROOT, "loadscripts", "jmeter", "rpc_echo.jmx")
RUN = os.path.join(toolstest.ROOT, "loadscripts", "jmeter", "run")
EXPR = re.compile(r"\$\{[^{}]*\}")  # a JMeter variable or function call, innermost first


def prop(el, name):
    """The text of el's direct property NAME (stringProp, boolProp, intProp...), or None."""
    for child in el:
        if child.get("name") == name and child.tag.endswith("Prop"):
            return (child.text or "").strip()
    return None


def children(tree, el):
    """The elements under el in the plan: the hashTree that follows it in its parent hashTree."""
    for parent in tree.iter("hashTree"):
        kids = list(parent)
        for i, k in enumerate(kids):
            if k is el:
                nxt = kids[i + 1] if i + 1 < len(kids) else None
                if nxt is None or nxt.tag != "hashTree":
                    return []
                return [c for c in nxt if c.tag != "hashTree"]
    return []


def enabled(el):
    return el.get("enabled", "true") == "true"


def problems(root):
    """What is wrong with the plan, one sentence each; [] for a good plan."""
    if root.tag != "jmeterTestPlan":
        return ["the root is <%s>, not <jmeterTestPlan>" % root.tag]
    samplers = [e for e in root.iter()
                if e.tag in ("HTTPSamplerProxy", "HTTPSampler") and enabled(e)]
    if len(samplers) != 1:
        return ["%d enabled HTTP samplers, not one" % len(samplers)]
    s = samplers[0]
    return (target_problems(root, s) + body_problems(root, s) + group_problems(root, s)
            + printer_problems(root, s))


def target_problems(root, s):
    """The sampler's request line: POST /rpc/echo to the host and port properties."""
    bad = []
    if prop(s, "HTTPSampler.method") != "POST":
        bad.append("the sampler's method is %r, not POST" % prop(s, "HTTPSampler.method"))
    if prop(s, "HTTPSampler.path") != "/rpc/echo":
        bad.append("the sampler's path is %r, not /rpc/echo" % prop(s, "HTTPSampler.path"))
    if prop(s, "HTTPSampler.domain") != "${__P(host,127.0.0.1)}":
        bad.append("the host is not ${__P(host,127.0.0.1)}")
    if prop(s, "HTTPSampler.port") != "${__P(port,8080)}":
        bad.append("the port is not ${__P(port,8080)}")
    return bad


def body_problems(root, s):
    """The body: raw, JSON once its ${...} are filled in, carrying the payload property; sent as
    application/json."""
    bad = []
    if prop(s, "HTTPSampler.postBodyRaw") != "true":
        bad.append("the sampler does not send a raw body")
    values = [v.text or "" for v in s.iter("stringProp") if v.get("name") == "Argument.value"]
    if len(values) != 1:
        bad.append("%d body arguments, not one" % len(values))
    else:
        body = values[0]
        filled = body
        while EXPR.search(filled):
            filled = EXPR.sub("7", filled)
        try:
            doc = json.loads(filled)
        except ValueError as e:
            doc = None
            bad.append("the body is not JSON: %s (%s)" % (body, e))
        if isinstance(doc, dict):
            if set(doc) != {"id", "method", "payload"} or doc.get("method") != "echo":
                bad.append("the body is not {id, method: echo, payload}: %s" % body)
            m = re.search(r'"payload":"(\$\{(\w+)\})"', body)
            if not m:
                bad.append("the payload is not a variable: %s" % body)
            else:
                defs = [a for a in root.iter("elementProp") if a.get("elementType") == "Argument"
                        and prop(a, "Argument.name") == m.group(2)]
                if not defs or "${__P(payload,100)}" not in (prop(defs[0], "Argument.value") or ""):
                    bad.append("${%s} does not come from ${__P(payload,100)}" % m.group(2))
    headers = [h for h in s.iter("elementProp") if h.get("elementType") == "Header"]
    headers += [h for hm in children(root, s) if hm.tag == "HeaderManager" and enabled(hm)
                for h in hm.iter("elementProp") if h.get("elementType") == "Header"]
    if not any(prop(h, "Header.name").lower() == "content-type"
               and prop(h, "Header.value") == "application/json" for h in headers):
        bad.append("no Content-Type: application/json header on the sampler")
    return bad


def group_problems(root, s):
    """The thread group: everything from properties with defaults, a linear ramp-up for a
    duration, the sampler inside it."""
    bad = []
    groups = [g for g in root.iter("ThreadGroup") if enabled(g)]
    if len(groups) != 1:
        bad.append("%d enabled thread groups, not one" % len(groups))
    else:
        g = groups[0]
        for name, want in (("ThreadGroup.num_threads", "${__P(threads,100)}"),
                           ("ThreadGroup.ramp_time", "${__P(rampup,100)}"),
                           ("ThreadGroup.duration", "${__P(duration,120)}"),
                           ("ThreadGroup.scheduler", "true")):
            if prop(g, name) != want:
                bad.append("%s is %r, not %r" % (name, prop(g, name), want))
        loops = [prop(c, "LoopController.loops") for c in g.iter("elementProp")
                 if c.get("name") == "ThreadGroup.main_controller"]
        if loops != ["-1"]:
            bad.append("the thread group does not loop until the duration ends (loops %r)" % loops)
        if s not in g.iter() and not any(s is x for k in children(root, g) for x in k.iter()):
            bad.append("the sampler is not in the thread group")
    return bad


def printer_problems(root, s):
    """The post-processor: on the sampler, prints status and body, only when print is true."""
    bad = []
    posts = [p for p in children(root, s)
             if p.tag in ("JSR223PostProcessor", "BeanShellPostProcessor") and enabled(p)]
    if len(posts) != 1:
        bad.append("%d JSR223/BeanShell post-processors on the sampler, not one" % len(posts))
    else:
        p = posts[0]
        if p.tag == "JSR223PostProcessor" and prop(p, "scriptLanguage") != "groovy":
            bad.append("the JSR223 post-processor is in %r, not groovy" % prop(p, "scriptLanguage"))
        script = prop(p, "script") or ""
        code = "\n".join(re.sub(r"//.*", "", line) for line in script.splitlines())
        on_print = r'(props\.getProperty\(\s*"print"|__P\(print)'
        guard = re.search(r'\bif\s*\((?=[^{]*' + on_print + r')[^{]*\{', code)
        out = re.search(r"System\.out\.println\(|\blog\.info\(|\bOUT\.println\(", code)
        if not guard:
            bad.append("the script has no if (...) on the print property")
        if not out:
            bad.append("the script prints nothing (System.out.println / log.info)")
        if guard and out:
            inside = code[guard.end():out.start()]
            if out.start() < guard.end() or inside.count("}") >= inside.count("{") + 1:
                bad.append("the print is not inside the if on the print property")
            call = code[out.start():]
            if "prev.getResponseCode()" not in call or "prev.getResponseDataAsString()" not in call:
                bad.append("the print does not carry prev's response code and body")
    return bad


class Plan(unittest.TestCase):
    def setUp(self):
        self.root = ET.parse(PLAN).getroot()

    def test_plan_is_good(self):
        self.assertEqual(problems(self.root), [])

    def mutated(self, fn):
        root = copy.deepcopy(self.root)
        fn(root)
        return problems(root)

    def set_prop(self, tag, name, value):
        def fn(root):
            for el in root.iter(tag):
                for c in el:
                    if c.get("name") == name:
                        c.text = value
        return fn

    def set_arg(self, element_type, value):
        def fn(root):
            for el in root.iter("elementProp"):
                if el.get("elementType") == element_type:
                    el.find("stringProp[@name='Argument.value']").text = value
        return fn

    def test_each_check_catches_its_fault(self):
        """Each fault in a copy of the plan is reported, so a plan that lost it fails here."""
        faults = {
            "GET": self.set_prop("HTTPSamplerProxy", "HTTPSampler.method", "GET"),
            "path": self.set_prop("HTTPSamplerProxy", "HTTPSampler.path", "/rpc"),
            "threads fixed": self.set_prop("ThreadGroup", "ThreadGroup.num_threads", "100"),
            "no rampup property": self.set_prop("ThreadGroup", "ThreadGroup.ramp_time",
                                                "${__P(ramp,100)}"),
            "no duration": self.set_prop("ThreadGroup", "ThreadGroup.scheduler", "false"),
            "body not JSON": self.set_arg("HTTPArgument", "id=${__counter(FALSE,)}"),
            "payload fixed": self.set_arg("Argument", "x" * 100),
            "unguarded": self.set_prop("JSR223PostProcessor", "script",
                                       'System.out.println(prev.getResponseCode() + " " + '
                                       'prev.getResponseDataAsString())'),
            "guard closed before print": self.set_prop(
                "JSR223PostProcessor", "script",
                'if (Boolean.parseBoolean(props.getProperty("print", "false"))) { }\n'
                'System.out.println(prev.getResponseCode() + prev.getResponseDataAsString())'),
            "prints no body": self.set_prop(
                "JSR223PostProcessor", "script",
                'if (Boolean.parseBoolean(props.getProperty("print", "false"))) {\n'
                '  System.out.println(prev.getResponseCode())\n}'),
            "post-processor disabled": lambda r: [p.set("enabled", "false")
                                                  for p in r.iter("JSR223PostProcessor")],
            "no JSON header": lambda r: [h.set("enabled", "false")
                                         for h in r.iter("HeaderManager")],
        }
        for name, fn in faults.items():
            with self.subTest(fault=name):
                self.assertNotEqual(self.mutated(fn), [], name)


def sutlab_bin():
    path = os.environ.get("SUTLAB_BIN") or os.path.join(toolstest.ROOT, "build", "sutlab")
    return path if os.access(path, os.X_OK) else None


def jmeter_runs():
    """A jmeter on PATH that loadscripts/jmeter/run can drive: a JMeter 5, or Debian's 2.13 with
    Debian's Groovy (the post-processor's language, which 2.13 does not bundle)."""
    path = shutil.which("jmeter")
    if not path:
        return False
    debian = os.path.realpath(path).startswith("/usr/share/jmeter/")
    return not debian or os.path.exists("/usr/share/java/groovy-all.jar")


@unittest.skipUnless(jmeter_runs(),
                     "no JMeter that runs the plan (apt-get install jmeter jmeter-http groovy)")
@unittest.skipUnless(sutlab_bin(), "no sutlab binary (build/sutlab or SUTLAB_BIN)")
class Run(unittest.TestCase):
    """loadscripts/jmeter/run, 3 s with 2 threads, against sutlab with no database (the echo
    needs none): print on gives one `rpc_echo 200 BODY` line per JTL row, print off none."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="jmeter-plan-")
        cls.port = procs.free_port()
        cls.server = ServerProcess(
            [sutlab_bin(), "serve", "--listen", "127.0.0.1:%d" % cls.port, "--workers", "1",
             "--db-url", "postgresql://127.0.0.1:1/none", "--redis-url", "redis://127.0.0.1:1"],
            cls.port, stdout_path=os.path.join(cls.tmp, "sutlab.log"), env=procs.clean_env(),
            die_with_parent=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_plan(self, name, *flags):
        out = os.path.join(self.tmp, name)
        r = subprocess.run([RUN, "--url", "http://127.0.0.1:%d" % self.port, "--threads", "2",
                            "--rampup", "0", "--duration", "3", "--payload", "16", "--out", out]
                           + list(flags), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout)
        with open(os.path.join(out, "results.jtl")) as f:
            rows = f.read().splitlines()[1:]
        with open(os.path.join(out, "jmeter.out"), errors="replace") as f:
            printed = [line for line in f.read().splitlines() if line.startswith("rpc_echo ")]
        self.assertGreater(len(rows), 0, r.stdout)
        return rows, printed

    def test_print_on_one_line_per_sample(self):
        rows, printed = self.run_plan("on", "--print")
        self.assertEqual(len(printed), len(rows))
        ids = set()
        for line in printed:
            _, code, body = line.split(" ", 2)
            self.assertEqual(code, "200", line)
            doc = json.loads(body)
            self.assertEqual(doc["echo"]["method"], "echo")
            self.assertEqual(doc["echo"]["payload"], "x" * 16)
            ids.add(doc["echo"]["id"])
        self.assertEqual(len(ids), len(printed))  # every request its own id

    def test_print_off_prints_nothing(self):
        rows, printed = self.run_plan("off")
        self.assertEqual(printed, [])


if __name__ == "__main__":
    unittest.main()
