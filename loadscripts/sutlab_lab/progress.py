"""Progress of a long run, on stderr (stdout keeps the tables): on a terminal one line rewritten in
place; otherwise, as in a CI log, a plain line every EVERY seconds. Each line says what runs, the
seconds elapsed of the total, and what a `sample` callable reads of the run now (the server's
req/s and errors from /metrics, or the replies an open-model tool has had so far).

    with progress.Ticker("step 2/3: wrk at 64", 10, sample=progress.server_rate(url)):
        proc.wait()

A ticker that finds nothing to say stays silent for runs shorter than QUIET seconds.
"""

import sys
import threading
import time

from . import httperf
from .services import metrics

EVERY = 5.0      # seconds between two plain lines
TTY_EVERY = 1.0  # seconds between two rewrites of the terminal line
QUIET = 3.0      # a run this short prints no progress


class Ticker:
    """A thread that prints the progress of the `total_s` seconds that follow, until the block
    ends. sample(): a short text of figures, or None when there is nothing to read yet."""

    def __init__(self, label, total_s, sample=None, stream=None, tty=None):
        self.label, self.total_s, self.sample = label, total_s, sample
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._stop = threading.Event()
        self._width = 0

    def __enter__(self):
        self.t0 = time.monotonic()
        if self.total_s >= QUIET:
            self.line()  # the sample's baseline: rates are read from here on
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        else:
            self._thread = None
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        return False

    def line(self):
        elapsed = time.monotonic() - self.t0
        figures = None
        if self.sample is not None:
            try:
                figures = self.sample()
            except Exception:  # noqa: BLE001 - a progress line must never end the run
                figures = None
        return "%s: %.0f/%.0f s%s" % (self.label, min(elapsed, self.total_s), self.total_s,
                                      ", " + figures if figures else "")

    def _run(self):
        every = TTY_EVERY if self.tty else EVERY
        while not self._stop.wait(every):
            text = self.line()
            if self.tty:
                self.stream.write("\r" + text.ljust(self._width))
                self._width = max(self._width, len(text))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()


def server_rate(url):
    """A sample: the server's req/s since the previous call and its errors (responses of 400 and
    up) since the first, from its /metrics (http_requests_total); None while it cannot be read."""
    state = {}

    def sample():
        try:
            # read every few tenths of a second: the format check (the server tests' job) would
            # cost as much again
            m = metrics.scrape(url, timeout=1, check=False)
        except (OSError, ValueError, metrics.MetricsFormatError):
            return None
        now = time.monotonic()
        total = m.total("http_requests_total")
        errors = sum(v for labels, v in m.samples("http_requests_total") if _status(labels.get("code")) >= 400)
        prev = state.get("prev")
        state["prev"] = (now, total)
        first = state.setdefault("first_errors", errors)
        if prev is None or now <= prev[0]:
            return None
        return "%.0f req/s, %d errors" % ((total - prev[1]) / (now - prev[0]), errors - first)
    return sample


def _status(code):
    try:
        return int(code)
    except (TypeError, ValueError):
        return 0


def replies_in(paths):
    """A sample for httperf runs (--print-reply=header): the replies its processes have had so
    far, and how many were 400 and up, read from their output files."""
    def sample():
        codes = {}
        for path in paths:
            try:
                with open(path, errors="replace") as f:
                    for code, n in httperf.status_codes(f.read()).items():
                        codes[code] = codes.get(code, 0) + n
            except OSError:
                return None
        return "%d replies, %d errors" % (sum(codes.values()), sum(n for c, n in codes.items() if c >= 400))
    return sample


def attacker_progress(paths):
    """A sample for spray's attacker (attacker.py): its last progress line, from its output file."""
    def sample():
        try:
            with open(paths[0], errors="replace") as f:
                lines = [ln for ln in f.read().splitlines() if ln.startswith("progress: ")]
        except OSError:
            return None
        return lines[-1][len("progress: "):] if lines else None
    return sample
