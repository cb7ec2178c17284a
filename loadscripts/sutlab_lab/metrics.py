"""The Prometheus text exposition format 0.0.4, parsed strictly (every line checked), and what
the tooling reads from sutlab's /metrics: counters, and the flags in force, which sutlab_build_info
carries in its `flags` label (--name=value ...).

    m = scrape("http://127.0.0.1:8080")
    m.value("cache_local_hits_total"), m.total("cache_requests_total", result="hit")
"""

import math
import re
import urllib.request


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
_SAMPLE_RE = re.compile(r"^(%s)(?:\{(.*)\})?[ \t]+(%s)(?:[ \t]+(-?[0-9]+))?[ \t]*$" % (_NAME, _FLOAT))
_TYPE_RE = re.compile(r"^#[ \t]+TYPE[ \t]+(%s)[ \t]+(counter|gauge|histogram|summary|untyped)[ \t]*$" % _NAME)
_LABEL_NAME_RE = re.compile(_LABEL_NAME)
_HELP_RE = re.compile(r"^#[ \t]+HELP[ \t]+(%s)(?:[ \t]+(.*))?$" % _NAME)


def parse_float(s):
    t = s.lower()
    if t in ("+inf", "inf"):
        return math.inf
    if t == "-inf":
        return -math.inf
    if t in ("nan", "+nan", "-nan"):
        return math.nan
    return float(s)


def _parse_labels(text, lineno):
    labels = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            break
        m = _LABEL_NAME_RE.match(text, i)
        if not m:
            raise MetricsFormatError("line %d: bad label name at %r" % (lineno, text[i:]))
        lname = m.group(0)
        i = m.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != "=":
            raise MetricsFormatError("line %d: expected '=' after label %s" % (lineno, lname))
        i += 1
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != '"':
            raise MetricsFormatError("line %d: label %s value not quoted" % (lineno, lname))
        i += 1
        val = []
        while True:
            if i >= n:
                raise MetricsFormatError("line %d: unterminated value for label %s" % (lineno, lname))
            c = text[i]
            if c == "\\":
                if i + 1 >= n:
                    raise MetricsFormatError("line %d: dangling backslash" % lineno)
                e = text[i + 1]
                if e == "n":
                    val.append("\n")
                elif e in '\\"':
                    val.append(e)
                else:
                    raise MetricsFormatError("line %d: bad escape \\%s in label %s" % (lineno, e, lname))
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                val.append(c)
                i += 1
        if lname in labels:
            raise MetricsFormatError("line %d: duplicate label %s" % (lineno, lname))
        labels[lname] = "".join(val)
        while i < n and text[i] in " \t":
            i += 1
        if i < n:
            if text[i] != ",":
                raise MetricsFormatError("line %d: expected ',' between labels, got %r" % (lineno, text[i:]))
            i += 1
    return labels


def _family_of(name, types):
    if name in types:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
            if types.get(base) in ("histogram", "summary"):
                if suffix == "_bucket" and types[base] != "histogram":
                    continue
                return base
    return name


def parse_metrics(text):
    """Parse Prometheus text exposition format 0.0.4, checking every line is well-formed.

    Checks: sample/HELP/TYPE/comment/blank syntax, label syntax and escapes, float values,
    at most one TYPE and one HELP per family, a TYPE line comes before every sample of its family,
    the lines of a family are contiguous, no duplicate (name, labels), histogram buckets carry `le`.
    Returns a Metrics dict.
    """
    if text and not text.endswith("\n"):
        raise MetricsFormatError("exposition does not end with a newline")
    result = Metrics()
    types = {}
    helps = set()
    seen_samples = set()       # families that had samples
    finished = set()           # families whose group has ended
    current = None
    for lineno, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        if line.strip() == "":
            continue
        family = None
        if line.startswith("#"):
            m = _TYPE_RE.match(line)
            if m:
                family = m.group(1)
                if family in types:
                    raise MetricsFormatError("line %d: second TYPE for %s" % (lineno, family))
                if family in seen_samples:
                    raise MetricsFormatError("line %d: TYPE for %s after its samples" % (lineno, family))
                types[family] = m.group(2)
            elif re.match(r"^#[ \t]+TYPE\b", line):
                raise MetricsFormatError("line %d: malformed %r" % (lineno, line))
            elif re.match(r"^#[ \t]+HELP\b", line):
                m = _HELP_RE.match(line)
                if not m:
                    raise MetricsFormatError("line %d: malformed %r" % (lineno, line))
                family = m.group(1)
                if family in helps:
                    raise MetricsFormatError("line %d: second HELP for %s" % (lineno, family))
                helps.add(family)
            else:
                continue  # plain comment
        else:
            m = _SAMPLE_RE.match(line)
            if not m:
                raise MetricsFormatError("line %d: malformed sample %r" % (lineno, line))
            name, label_text, value = m.group(1), m.group(2), m.group(3)
            labels = _parse_labels(label_text, lineno) if label_text else {}
            family = _family_of(name, types)
            ftype = types.get(family)
            if ftype == "histogram" and name == family + "_bucket":
                if "le" not in labels:
                    raise MetricsFormatError("line %d: histogram bucket without le" % lineno)
                parse_float(labels["le"])
            key = (name, frozenset(labels.items()))
            if key in result:
                raise MetricsFormatError("line %d: duplicate sample %r" % (lineno, line))
            result[key] = parse_float(value)
            seen_samples.add(family)
        if family != current:
            if family in finished:
                raise MetricsFormatError("line %d: lines of %s are not contiguous" % (lineno, family))
            if current is not None:
                finished.add(current)
            current = family
    result.types = types
    return result



def scrape(url, timeout=5):
    """GET URL/metrics (URL = the server's base URL), parsed. OSError when it does not answer,
    MetricsFormatError when the answer is not the format."""
    with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=timeout) as r:
        return parse_metrics(r.read().decode("utf-8"))


def fetch_flags(url, timeout=3):
    """The flags in force at URL (sutlab_build_info's flags label), or None when URL is no
    sutlab answering /metrics."""
    try:
        samples = scrape(url, timeout).samples("sutlab_build_info")
    except (OSError, ValueError, MetricsFormatError):
        return None
    return samples[0][0].get("flags") if samples else None
