"""Replay one write-up's experiment on the lab and set its figures next to the measured ones:

  loadscripts/case spray                 the blocking handler under vegeta's open-model spray
  loadscripts/case tps-trend             the load script that printed every response
  loadscripts/case keepalive             keep-alive against a connection per request
  loadscripts/case count-pagination      the paginated index and its count(*)
  loadscripts/case redis-cache           the store listing from PostgreSQL and from Redis
  loadscripts/case gzip --netns          gzip on a bandwidth-capped link (root)
  loadscripts/case missing-index         the blog scenario with and without the articles' date index
  loadscripts/case php-fpm               a web tier as slow as PHP: children, OPcache, a second server
  loadscripts/case haproxy               HAProxy's sizing table on one core (close, TLS, memory, CPU split)
  loadscripts/case delivery-scaleout     one cached server, then nginx and two: load tool, nginx, users
  loadscripts/case NAME --duration 3     every step shortened, for a quick look
  loadscripts/case NAME --netns          through the netns lab (root): load from the client namespace

Each case runs its sequence through loadscripts/steps (the lab is brought up, restarted with each
setting, and taken down at the end), prints the measured table, the write-up's figures next to
the measured ones with the write-up's line and the band stated before the run, and one verdict
line in two parts, the bottleneck (the fix's direction at each level, the limiting tier the
write-up names, the fix's ratio) and the profile (every other figure): reproduced (the whole
bottleneck and two thirds of the profile), partly reproduced, not reproduced (the bottleneck
missed) or illustrated (nothing a run could miss); sutlab_lab/cases/checks.py has the rules. A case
with a scale model (cases/scale.py) runs the write-up's machines scaled onto this one: each server
tier under a CPU budget in the write-up's proportions, the stack's costs fitted on named rows of
the write-up and those rows left unjudged; --full-speed runs sutlab at its own speed instead.
The verdict line warns when the machine was busy (load average over 1.0 before, or other work
beside a step).
OUT (--out, default var/cases/NAME-TIME) keeps case.md, every stage's output (OUT/STAGE/: its
steps.csv, cpu.csv, PNGs and report.html), commands.log, and report.html with each stage's curves
(steps.png, CPU per tier over time, and with --monitoring its Prometheus series). Exit 0 when reproduced; 1 when partly or not reproduced, or a run failed; 2 on bad
usage.
"""

import os
import sys

from .. import REPO, htmlreport, panels
from ..cases import CASES, PLANNED
from ..cases import checks as case_checks
from ..cases.common import Context, loadavg, stamp
from ..cli import Parser
from ..errors import RunError


def arguments(argv):
    p = Parser(prog="loadscripts/case", description=__doc__.split("\n\n")[0])
    p.add_argument("name", metavar="NAME", help="one of: %s" % ", ".join(sorted(CASES)))
    p.add_argument("--duration", type=int, help="seconds per step instead of the write-up's (a quick look)")
    p.add_argument("--netns", action="store_true", help="through the netns lab (root)")
    p.add_argument("--out", help="output directory (default var/cases/NAME-TIME)")
    p.add_argument("--load-workers", metavar="N|auto",
                   help="the load tool's workers in every stage whose tool has them (wrk -t, hey, Locust as a "
                        "master and N workers; steps' option); in the netns lab they run in the client namespace")
    p.add_argument("--load-cpus", metavar="LIST", help="the load tool on these cores in every stage (steps' option)")
    p.add_argument("--monitoring", action="store_true",
                   help="every lab the case brings up with its monitoring (infra/lab up --monitoring): each "
                        "stage's report, and this one, then carry the stage's Prometheus series")
    p.add_argument("--prometheus", default="auto", metavar="URL|auto|none",
                   help="given to every stage's steps (default auto: the lab's, with --monitoring)")
    p.add_argument("--full-speed", action="store_true",
                   help="no scale model: sutlab and every tier at this machine's speed, no CPU budget, no fitted "
                        "knob; only the bottleneck part of the verdict judged (what a lab with sutlab as its "
                        "target sees)")
    args = p.parse_args(argv)
    if args.name not in CASES:
        if args.name in PLANNED:
            p.error("case %s has no replay of its own: %s (built: %s)" % (
                args.name, "loadscripts/flip --tls-resumption off" if args.name == "tls" else
                "the last stage of loadscripts/case php-fpm", ", ".join(sorted(CASES))))
        p.error("unknown case %r (built: %s)" % (args.name, ", ".join(sorted(CASES))))
    if args.duration is not None and not 1 <= args.duration <= 600:
        p.error("--duration wants whole seconds from 1 to 600")
    if args.netns and os.geteuid() != 0:
        p.error("--netns needs root (infra/lab up --netns creates network namespaces)")
    return args


def main(argv):
    args = arguments(argv)
    case = CASES[args.name]
    out = os.path.realpath(args.out or os.path.join(REPO, "var", "cases", "%s-%s" % (args.name, stamp())))
    ctx = Context(args.name, out, duration=args.duration, netns=args.netns, load_workers=args.load_workers,
                  load_cpus=args.load_cpus, monitoring=args.monitoring, prometheus=args.prometheus,
                  full_speed=args.full_speed)
    before = loadavg()
    page = htmlreport.Report("case", "case %s: %s" % (case.NAME, case.TITLE))
    print("case %s: %s (output: %s)" % (case.NAME, case.TITLE, out), flush=True)
    try:
        sections, checks = case.run(ctx)
    except RunError as e:
        print("loadscripts/case: %s" % e, file=sys.stderr)
        return 1
    finally:
        ctx.restore_lab_flags()
    text = ["# case %s: %s" % (case.NAME, case.TITLE), "", "Made by `loadscripts/case %s`." % " ".join(argv), "",
            "## The write-up", case.WRITEUP, ""]
    if ctx.model is not None:
        ctx.model.stage()  # the topology's machines, as the section's table gives them (a stage's are its own)
        checks = ctx.model.set_checks() + checks
        text += ["## The write-up's machines, scaled", "",
                 ctx.model.section(len([c for c in checks if c.role != "set"])), ""]
    text += ["## Measured", ""]
    for s in sections:
        text += [s, ""]
    word, line = case_checks.verdict(checks, full_speed=args.full_speed, warning=ctx.busy_machine(before))
    text += ["## The write-up's figures next to the measured ones", "", case_checks.table(checks), "",
             "Chosen here, not published by the write-up:", case.INVENTED, "", line]
    doc = "\n".join(text)
    print(doc)
    with open(os.path.join(out, "case.md"), "w") as f:
        f.write(doc + "\n")
    write_page(page, ctx, doc, word, line)
    return case_checks.exit_code(word)


def write_page(page, ctx, doc, word, line):
    """OUT/report.html: case.md, the commands that made it (the flags of each stage are in
    them), and each stage's curves from its own steps run (OUT/STAGE/): steps.png, CPU per tier
    over time (cpu.png) and, with the lab's monitoring, its Prometheus series (prometheus.png),
    all embedded."""
    page.flags = "each stage's, in the commands below (infra/lab up/restart -- FLAGS)"
    page.set_verdict(line[len("verdict: "):] if line.startswith("verdict: ") else line, word == "reproduced")
    page.add_markdown("The case", doc)
    page.add_text("Commands", "\n".join(ctx.commands))
    stages = sorted(s for s in os.listdir(ctx.out) if os.path.isdir(os.path.join(ctx.out, s)))
    for stage in stages:
        here = os.path.join(ctx.out, stage)
        page.add_image("stage %s: req/s and p95 against level, CPU per tier" % stage, os.path.join(here, "steps.png"))
        if not page.add_image("stage %s: %s (%s/cpu.csv)" % (stage, panels.CPU_TITLE, stage),
                              os.path.join(here, "cpu.png"), panel="cpu"):
            page.add_text("stage %s: %s" % (stage, panels.CPU_TITLE), "no cpu.png in %s" % here, panel="cpu-note")
        page.add_image("stage %s: %s" % (stage, panels.PROMETHEUS_TITLE.replace("prometheus.csv",
                                                                                stage + "/prometheus.csv")),
                       os.path.join(here, "prometheus.png"), panel="prometheus")
    print("report: %s" % page.write(ctx.out), file=sys.stderr)
