"""report.html: one run of steps, flip, spray, bench or case on one page a browser opens offline.

The page says what ran (the command, the flags in force as the server reported them, the fixtures,
the machine, the load average before and after), then the run's own Markdown (its tables, the
verdicts and their rules, for a case the write-up's figures beside the measured ones) as HTML, and
its PNGs, among them the panels every command shares (panels.py: CPU per tier over time, the
run's Prometheus series). Self-contained: the styles are inline, the images data: URIs, and the page's policy
(Content-Security-Policy default-src 'none') refuses any request it might make. Markdown goes
through python3-markdown (its tables extension), the page through a python3-jinja2 template
(templates/report.html) with autoescaping.
"""

import base64
import html
import os
import platform
import re
import shlex
import sys
import time

import psutil

from . import REPO
from .services import metrics
from .services import procs

TEMPLATE = "report.html"
LIST_ITEM = re.compile(r" {0,3}([-*+]|1\.) ")  # a list's first line that may follow a paragraph's (CommonMark)


class Report:
    """A page being put together: what ran, sections of Markdown, images; write() renders it."""

    def __init__(self, kind, title, argv=None, url=None):
        self.kind, self.title = kind, title
        self.command = " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv))
        self.url = url
        self.loadavg_before = procs.loadavg()
        self.started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        self.sections, self.images = [], []
        self.verdict, self.verdict_ok = None, True
        self.flags = None

    def note_flags(self):
        """The flags in force, read now from the server's sutlab_build_info (call it while the
        server under test still runs)."""
        if self.url and self.flags is None:
            self.flags = metrics.fetch_flags(self.url)

    def add_markdown(self, title, text):
        """Markdown of the tools' own (tables, lists), as HTML."""
        self.sections.append({"title": title, "html": to_html(text), "panel": ""})

    def add_text(self, title, text, panel=""):
        """Preformatted text (a tool's report, the verdict rules), as it was printed. panel: what
        the section stands for (panels.py: "cpu-note", "prometheus"), in its data-panel."""
        from markupsafe import Markup, escape
        self.sections.append({"title": title, "html": Markup("<pre>%s</pre>") % escape(text), "panel": panel})

    def add_image(self, title, path, panel=""):
        """A PNG, embedded; a missing file is left out (the run may have had no matplotlib).
        panel: what the image is (panels.py: "cpu", "prometheus"), in its data-panel; the page
        counts the rendered images of each (body data-cpu-images, data-prometheus-images)."""
        try:
            with open(path, "rb") as f:
                data = base64.b64encode(f.read()).decode("ascii")
        except OSError:
            return False
        self.images.append({"title": title, "data": data, "panel": panel})
        return True

    def set_verdict(self, text, ok):
        self.verdict, self.verdict_ok = text, ok

    def ran(self):
        return [("command", self.command),
                ("flags in force", self.flags or "(not reported: no sutlab_build_info at %s)" % (self.url or "-")),
                ("fixtures", fixtures()),
                ("machine", machine()),
                ("started", self.started), ("finished", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
                ("load average", "%s before, %s after" % (self.loadavg_before, procs.loadavg()))]

    def write(self, out_dir):
        """OUT_DIR/report.html; its path."""
        import jinja2
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(os.path.dirname(__file__), "templates")),
                                 autoescape=True, undefined=jinja2.StrictUndefined)
        page = env.get_template(TEMPLATE).render(
            title=self.title, kind=self.kind, ran=self.ran(), sections=self.sections, images=self.images,
            verdict=self.verdict, verdict_ok=self.verdict_ok)
        path = os.path.join(out_dir, "report.html")
        with open(path, "w") as f:
            f.write(page)
        return path


def to_html(text):
    """Markdown (the tools' tables and notes) as HTML, its own text escaped first: a cell such as
    `p99<50ms` stays text, and no tag can come from a measured value."""
    import markdown
    from markupsafe import Markup  # jinja2's own: marks the converted HTML as safe to insert
    return Markup(markdown.markdown(lists_apart(html.escape(text, quote=False)), extensions=["tables"]))


def lists_apart(text):
    """The Markdown with a blank line put before each list that starts right under a line of text
    ("Chosen here:" then "- the load: ..."): the texts are written as CommonMark reads them, where a
    list may follow a paragraph's line, and Python-Markdown would read such a list as more of the
    paragraph. The lines of a list (its items and their continuation lines) are left together."""
    out, in_list = [], False
    for line in text.split("\n"):
        item = LIST_ITEM.match(line)
        if item and not in_list and out and out[-1].strip():
            out.append("")
        in_list = bool(item) or (in_list and bool(line.strip()))
        out.append(line)
    return "\n".join(out)


def fixtures():
    """What the lab's database was seeded with, as infra/lab recorded it (var/fixtures)."""
    path = os.path.join(os.environ.get("SUTLAB_LAB_VAR") or os.path.join(REPO, "var"), "fixtures")
    try:
        with open(path) as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown (the database was not seeded by infra/lab)"


def machine():
    mem = ", %.0f GiB" % (psutil.virtual_memory().total / 1073741824.0)
    return "%s: %s %s, %d cores%s" % (platform.node(), platform.system(), platform.release(), os.cpu_count() or 0,
                                      mem)
