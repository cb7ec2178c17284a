"""httperf: the open-model load (requests arrive at a fixed rate whether or not earlier ones were
answered, as vegeta's -rate does), and its report parsed.

httperf is select()-based and polls its timers: it shows as busy on its core whatever the rate, so
its CPU says nothing about saturation. What does is the rate it achieved against the rate it was
asked for (`shortfall`).
"""

import re

# Errors httperf counts, by the names of its report ("Errors: total N client-timo N ...").
ERROR_KINDS = ("client-timo", "socket-timo", "connrefused", "connreset", "fd-unavail", "addrunavail",
               "ftab-full", "other")


def command(host, port, uri, rate, duration, timeout):
    """The httperf command line: `rate` new connections per second, one request each, for
    `duration` seconds; a request unanswered after `timeout` seconds is a client timeout."""
    num = max(1, int(round(rate * duration)))
    return ["httperf", "--hog", "--server", host, "--port", str(port), "--uri", uri, "--rate", str(rate),
            "--num-conns", str(num), "--num-calls", "1", "--timeout", str(timeout)]


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


def shortfall(report, rate):
    """How far the achieved connection rate fell short of the asked one (0 = kept up, 1 = none)."""
    achieved = report.get("connection_rate") or 0.0
    return max(0.0, 1.0 - achieved / rate) if rate > 0 else 0.0
