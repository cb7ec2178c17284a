"""sutlab's /metrics, read: the Prometheus text exposition format 0.0.4, parsed by
prometheus_client's parser (python3-prometheus-client), and what the tooling reads from it:
counters, and the flags in force, which sutlab_build_info carries in its `flags` label
(--name=value ...).

prometheus_client's parser is lax by its own account ("successful parsing does not imply that
the parsed text meets the specification"): a bad escape, an unquoted label value or a family
split in two pass through it. A malformed /metrics is a failure of the server under test, so
parse_metrics first checks every line (check_format) and only then reads the samples; callers
that look at a few families only (a lenient test helper) pass check=False.

    m = scrape("http://127.0.0.1:8080")
    m.value("cache_local_hits_total"), m.total("cache_requests_total", result="hit")
"""

import re
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


class MetricsFormatError(AssertionError):
    """Not the text format. An AssertionError: in a test, a malformed /metrics is a failure of
    the server under test, not an error of the test."""


class Metrics(dict):
    """(name, frozenset(labels.items())) -> float, plus `types`: {family: its TYPE}."""

    def get_value(self, name, **labels):
        return self.get((name, frozenset(labels.items())))

    def value(self, name, default=0.0, **labels):
        v = self.get((name, frozenset(labels.items())))
        return default if v is None else v

    def samples(self, name, **match):
        """[(labels dict, value)] for `name` whose labels include every item of `match`."""
        out = []
        for (n, lbls), v in self.items():
            if n != name:
                continue
            d = dict(lbls)
            if all(d.get(k) == mv for k, mv in match.items()):
                out.append((d, v))
        return out

    def total(self, name, **match):
        return sum(v for _, v in self.samples(name, **match))


_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
_FLOAT = r"[+-]?(?:Inf|inf|NaN|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
# a label value: any character but '"', '\' and newline, or one of the three escapes \\ \" \n
_PAIR = r'[ \t]*(%s)[ \t]*=[ \t]*"(?:[^"\\\n]|\\[\\"n])*"[ \t]*' % _LABEL_NAME
_LABELS = r"\{(?:%s(?:,%s)*,?)?[ \t]*\}" % (_PAIR, _PAIR)
_SAMPLE_RE = re.compile(r"^(%s)(%s)?[ \t]+%s(?:[ \t]+-?[0-9]+)?[ \t]*$" % (_NAME, _LABELS, _FLOAT))
_PAIR_RE = re.compile(_PAIR)
_TYPE_RE = re.compile(r"^#[ \t]+TYPE[ \t]+(%s)[ \t]+(counter|gauge|histogram|summary|untyped)[ \t]*$" % _NAME)
_HELP_RE = re.compile(r"^#[ \t]+HELP[ \t]+(%s)(?:[ \t]+(.*))?$" % _NAME)
_TYPE_LINE_RE = re.compile(r"^#[ \t]+TYPE[ \t]+(\S+)[ \t]+(\S+)", re.M)


def parse_float(s):
    """A sample value or an `le` as the format writes it (+Inf, -Inf, NaN included)."""
    return float(s)


def _family_of(name, types):
    if name in types:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and (types.get(base) == "histogram" or
                                      (types.get(base) == "summary" and suffix != "_bucket")):
            return base
    return name


def _line_family(line, lineno, types, helps, seen_samples):
    """The family a non-blank line belongs to (None for a plain comment), checking its syntax and
    the rules on TYPE and HELP lines; records TYPEs, HELPs and families that had samples."""
    if line.startswith("#"):
        if re.match(r"^#[ \t]+TYPE\b", line):
            m = _TYPE_RE.match(line)
            if not m:
                raise MetricsFormatError("line %d: malformed %r" % (lineno, line))
            family = m.group(1)
            if family in types:
                raise MetricsFormatError("line %d: second TYPE for %s" % (lineno, family))
            if family in seen_samples:
                raise MetricsFormatError("line %d: TYPE for %s after its samples" % (lineno, family))
            types[family] = m.group(2)
            return family
        if re.match(r"^#[ \t]+HELP\b", line):
            m = _HELP_RE.match(line)
            if not m:
                raise MetricsFormatError("line %d: malformed %r" % (lineno, line))
            if m.group(1) in helps:
                raise MetricsFormatError("line %d: second HELP for %s" % (lineno, m.group(1)))
            helps.add(m.group(1))
            return m.group(1)
        return None
    m = _SAMPLE_RE.match(line)
    if not m:
        raise MetricsFormatError("line %d: malformed sample %r" % (lineno, line))
    names = [p.group(1) for p in _PAIR_RE.finditer(m.group(2) or "")]
    if len(set(names)) != len(names):
        raise MetricsFormatError("line %d: duplicate label in %r" % (lineno, line))
    family = _family_of(m.group(1), types)
    seen_samples.add(family)
    return family


def check_format(text):
    """Raise MetricsFormatError unless text is the text format 0.0.4, every line checked: sample,
    HELP, TYPE, comment and blank line syntax, label syntax and escapes, float values, at most
    one TYPE and one HELP per family, a TYPE line before every sample of its family, the lines of
    a family contiguous. (Duplicate samples and buckets without `le` parse_metrics finds.)"""
    if text and not text.endswith("\n"):
        raise MetricsFormatError("exposition does not end with a newline")
    types, helps, seen_samples, finished, current = {}, set(), set(), set(), None
    for lineno, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        if line.strip() == "":
            continue
        family = _line_family(line, lineno, types, helps, seen_samples)
        if family is None or family == current:
            continue
        if family in finished:
            raise MetricsFormatError("line %d: lines of %s are not contiguous" % (lineno, family))
        if current is not None:
            finished.add(current)
        current = family


def _sample_name(family, name, types):
    """The name a sample has in the text. prometheus_client names a counter family without its
    `_total` and gives the samples of a counter whose TYPE line has no `_total` one."""
    if family.type == "counter" and types.get(family.name) == "counter" and name == family.name + "_total":
        return family.name
    return name


def parse_metrics(text, check=True):
    """A /metrics text as Metrics: {(name, frozenset(labels.items())): value}, `types` {family:
    its TYPE}. check (the default): check_format first, for a test of the server's exposition;
    check=False reads whatever prometheus_client can. MetricsFormatError on a malformed text,
    on two samples of one name and labels, and on a histogram bucket without a numeric `le`."""
    if check:
        check_format(text)
    result = Metrics()
    result.types = {m.group(1): m.group(2) for m in _TYPE_LINE_RE.finditer(text)}
    try:
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                key = (_sample_name(family, s.name, result.types), frozenset(s.labels.items()))
                if key in result:
                    raise MetricsFormatError("duplicate sample %s%s" % (key[0], s.labels))
                result[key] = s.value
    except (ValueError, IndexError) as e:  # what prometheus_client raises on a line it cannot read
        raise MetricsFormatError("not the text format: %s" % e)
    for (name, labels), _ in result.items():
        if name.endswith("_bucket") and result.types.get(name[:-7]) == "histogram":
            le = dict(labels).get("le")
            try:
                parse_float(le)
            except (TypeError, ValueError):
                raise MetricsFormatError("histogram bucket %s%s without a numeric le" % (name, dict(labels)))
    return result


def scrape(url, timeout=5, check=True):
    """GET URL/metrics (URL = the server's base URL), parsed (check: as parse_metrics). OSError
    when it does not answer, MetricsFormatError when the answer is not the format."""
    with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=timeout) as r:
        return parse_metrics(r.read().decode("utf-8"), check=check)


def fetch_flags(url, timeout=3):
    """The flags in force at URL (sutlab_build_info's flags label), or None when URL is no
    sutlab answering /metrics."""
    try:
        samples = scrape(url, timeout).samples("sutlab_build_info")
    except (OSError, ValueError, MetricsFormatError):
        return None
    return samples[0][0].get("flags") if samples else None
