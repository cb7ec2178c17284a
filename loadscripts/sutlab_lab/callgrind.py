"""A reader of callgrind's output files (valgrind --tool=callgrind): the self cost of one event
(instructions, Ir, by default) per object (executable or shared library) and per function.

The format (valgrind's "Callgrind Format Specification"): header lines (`events:`, `positions:`,
`summary:`, `totals:`, `cmd:`, ...), then body lines. `ob=`, `fl=`, `fi=`, `fe=` and `fn=` set the
object, file, inlined file and function that the cost lines after them belong to; `cob=`, `cfi=`,
`cfl=` and `cfn=` name the target of the next `calls=` line, whose following cost line is the
*inclusive* cost of those calls, already counted as self cost inside the callee: it is skipped
here. Names are compressed: `(id) name` defines an id, `(id)` alone refers to it, with one id
space for objects (ob, cob), one for files (fl, fi, fe, cfi, cfl, jfi) and one for functions (fn,
cfn, jfn). A cost line is one subposition per `positions:` column (a number, `+N`/`-N` relative to
the previous one, or `*` the same) followed by the costs in `events:` order, missing ones zero.
`jump=`/`jcnd=` lines (--collect-jumps) are ignored, and the position-only line after them costs
nothing.
"""

import re

_SPEC = re.compile(r"^(ob|fl|fi|fe|fn|cob|cfi|cfl|cfn|jfi|jfn)=(.*)$")
_NAME = re.compile(r"^\((\d+)\)\s*(.*)$")
_SPACE = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
          "jfi": "fl", "fn": "fn", "cfn": "fn", "jfn": "fn"}
_HEADER = re.compile(r"^([a-z]+):\s*(.*)$")


class FormatError(ValueError):
    """Not a callgrind file, or a line this reader does not understand."""


class Profile:
    """What one callgrind file holds for one event.

    objects:   {object path: self cost}
    functions: {(object path, function name): self cost}
    total:     the sum of every self cost (= sum(objects.values()))
    summary, totals: the file's own `summary:` and `totals:` for the event (None if absent)
    header:    {key: value} of the other header lines (cmd, pid, part, ...; the last wins)
    """

    def __init__(self, event):
        self.event = event
        self.objects, self.functions, self.header = {}, {}, {}
        self.total, self.summary, self.totals = 0, None, None

    def top_functions(self, n):
        """The n functions of highest self cost: [(cost, object, function)], highest first."""
        ranked = sorted(((c, ob, fn) for (ob, fn), c in self.functions.items()),
                        key=lambda t: (-t[0], t[1], t[2]))
        return ranked[:n]


def _number(tok):
    return int(tok, 16) if tok[:2].lower() == "0x" else int(tok)


class _Reader:
    def __init__(self, event):
        self.profile = Profile(event)
        self.names = {"ob": {}, "fl": {}, "fn": {}}
        self.events = None       # names, from `events:`
        self.npos = 1            # subpositions per cost line, from `positions:`
        self.ob = self.fn = ""
        self.in_call = False     # the next cost line is a call's inclusive cost

    def name(self, kind, text, lineno):
        m = _NAME.match(text)
        if not m:
            return text.strip()
        ids, name = self.names[_SPACE[kind]], m.group(2).strip()
        if name:
            ids[m.group(1)] = name
            return name
        if m.group(1) not in ids:
            raise FormatError("line %d: %s=(%s) used before it is defined" % (lineno, kind, m.group(1)))
        return ids[m.group(1)]

    def column(self, lineno):
        if self.events is None:
            raise FormatError("line %d: cost line before any 'events:' line" % lineno)
        if self.profile.event not in self.events:
            raise FormatError("event %s not in this file (events: %s)"
                              % (self.profile.event, " ".join(self.events)))
        return self.events.index(self.profile.event)

    def header(self, key, value, lineno):
        p = self.profile
        if key == "events":
            self.events = value.split()
        elif key == "positions":
            self.npos = len(value.split()) or 1
        elif key in ("summary", "totals"):
            costs = value.split()
            col = self.column(lineno)
            setattr(p, key, (getattr(p, key) or 0) + (_number(costs[col]) if col < len(costs) else 0))
        else:
            p.header[key] = value

    def cost(self, line, lineno):
        toks = line.split()
        if len(toks) < self.npos:
            raise FormatError("line %d: cost line with fewer than %d positions: %r" % (lineno, self.npos, line))
        if self.in_call:  # a call's inclusive cost: counted in the callee already
            self.in_call = False
            return
        col = self.npos + self.column(lineno)
        try:
            c = _number(toks[col]) if col < len(toks) else 0
        except ValueError:
            raise FormatError("line %d: not a cost line: %r" % (lineno, line))
        if c:
            p = self.profile
            p.objects[self.ob] = p.objects.get(self.ob, 0) + c
            key = (self.ob, self.fn)
            p.functions[key] = p.functions.get(key, 0) + c
            p.total += c

    def line(self, line, lineno):
        line = line.strip()
        if not line or line.startswith("#"):
            return
        m = _SPEC.match(line)
        if m:
            kind = m.group(1)
            name = self.name(kind, m.group(2), lineno)
            if kind == "ob":
                self.ob = name
            elif kind == "fn":
                self.fn = name
            return
        if line.startswith("calls="):
            self.in_call = True
            return
        if line.startswith(("jump=", "jcnd=")):
            return
        if line[0].isdigit() or line[0] in "+-*":
            self.cost(line, lineno)
            return
        h = _HEADER.match(line)
        if h:
            self.header(h.group(1), h.group(2).strip(), lineno)
            return
        raise FormatError("line %d: not understood: %r" % (lineno, line[:80]))


def parse(text, event="Ir"):
    """A Profile of `text` (a callgrind file's content) for `event`. FormatError if it is not a
    callgrind file or has a line this reader does not understand."""
    r = _Reader(event)
    for i, line in enumerate(text.splitlines(), 1):
        r.line(line, i)
    if r.events is None:
        raise FormatError("no 'events:' line: not a callgrind file")
    if event not in r.events:
        raise FormatError("event %s not in this file (events: %s)" % (event, " ".join(r.events)))
    return r.profile


def read(path, event="Ir"):
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse(f.read(), event)
