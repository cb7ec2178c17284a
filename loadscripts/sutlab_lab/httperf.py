"""httperf: the open-model load (requests arrive at a fixed rate whether or not earlier ones were
answered, as vegeta's -rate does), and its report parsed.

httperf is select()-based and polls its timers: it shows as busy on its core whatever the rate, so
its CPU says nothing about saturation. What does is the arrivals it could not send (fd-unavail:
more connections in flight than select() holds). loadscripts/spray (sutlab_lab/spray.py) runs it.
"""

import re

# Errors httperf counts, by the names of its report ("Errors: total N client-timo N ...").
ERROR_KINDS = ("client-timo", "socket-timo", "connrefused", "connreset", "fd-unavail", "addrunavail",
               "ftab-full", "other")


def command(host, port, uri, rate, duration, timeout, detail=False, client=None, num=None):
    """The httperf command line: `rate` new connections per second, one request each, for
    `duration` seconds; a request unanswered after `timeout` seconds is a client timeout.
    detail: also the lifetime histogram (-v -v: 1 ms bins, the latencies) and every reply's
    status line (--print-reply=header: the codes, where the report has only classes).
    client (I, N): this is process I of N sharing the load (httperf --client); num: its share of
    the connections, when not rate x duration."""
    num = num or max(1, int(round(rate * duration)))
    argv = ["httperf", "--hog", "--server", host, "--port", str(port), "--uri", uri, "--rate", "%g" % rate,
            "--num-conns", str(num), "--num-calls", "1", "--timeout", str(timeout)]
    if detail:
        argv += ["-v", "-v", "--print-reply=header"]
    if client is not None:
        argv += ["--client", "%d/%d" % client]
    return argv


def _num(pattern, text, cast=float):
    m = re.search(pattern, text)
    return cast(m.group(1)) if m else None


def parse(text):
    """The figures of an httperf report: requests and replies, the reply rate over the test, mean
    reply time (ms), status classes, and the error counts by kind. Raises ValueError if the text
    is not a report."""
    total = re.search(r"Total: connections (\d+) requests (\d+) replies (\d+) test-duration ([\d.]+) s", text)
    if total is None:
        raise ValueError("not an httperf report (no 'Total:' line)")
    conns, requests, replies, duration = (int(total.group(1)), int(total.group(2)), int(total.group(3)),
                                          float(total.group(4)))
    status = {}
    m = re.search(r"Reply status: (.*)", text)
    if m:
        for cls, n in re.findall(r"(\dxx)=(\d+)", m.group(1)):
            status[cls] = int(n)
    errors = {}
    for line in re.findall(r"^Errors: (.*)$", text, re.M):
        for name, n in re.findall(r"([a-z-]+) (\d+)", line):
            if name != "total":
                errors[name] = int(n)
    return {
        "lifetimes_ms": _histogram(text),
        "codes": status_codes(text),
        "connections": conns,
        "requests": requests,
        "replies": replies,
        "duration_s": duration,
        "rps": replies / duration if duration > 0 else 0.0,
        "request_rate": _num(r"Request rate: ([\d.]+) req/s", text),
        "connection_rate": _num(r"Connection rate: ([\d.]+) conn/s", text),
        "reply_ms": _num(r"Reply time \[ms\]: response ([\d.]+)", text),
        "status": status,
        "errors": errors,
    }


def _histogram(text):
    """{bin centre in ms: connections} of the "Connection lifetime histogram" (-v -v): the
    connections that got their reply, in 1 ms bins; {} without it."""
    head = text.find("Connection lifetime histogram")
    if head < 0:
        return {}
    out = {}
    for line in text[head:].splitlines()[1:]:
        m = re.match(r"^\s+([\d.]+) (\d+)$", line)
        if m:
            out[float(m.group(1))] = out.get(float(m.group(1)), 0) + int(m.group(2))
        elif line.strip() not in ("", ":"):
            break
    return out


def status_codes(text):
    """{status code: replies} from the status lines --print-reply=header prints ("RH12:HTTP/1.1
    200 OK"); {} without them."""
    out = {}
    for code in re.findall(r"^RH\d+:HTTP/\d\.\d (\d{3})", text, re.M):
        out[int(code)] = out.get(int(code), 0) + 1
    return out

