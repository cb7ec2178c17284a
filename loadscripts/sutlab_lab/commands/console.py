"""A console for the TPS-trend case: reads what a load script prints, as a terminal renders it, and
discards it (or keeps it with --keep FILE): at --rate bytes a second, or, with --pty, as fast as a
terminal's screen takes it, its speed measured rather than set.

The write-up's JMeter script printed every response to its console; the console's speed, not the
server, set the TPS. On a lab machine with no terminal attached the same output goes to a file or
a pipe drained at once, and printing costs next to nothing. This puts the terminal back:

  loadscripts/console --fifo var/console &            # a named pipe, drained at --rate
  locust -f loadscripts/locust/locustfile.py --tags rpc_echo --print-responses var/console ...
  locust ... --print-responses - | loadscripts/console          # or through a plain pipe

  loadscripts/console --pty var/console --counters var/console.csv &    # a terminal, measured
  locust ... --print-responses var/console ...

--pty makes PATH a link to a pseudo-terminal (a tty's line discipline between writer and reader,
as under a terminal window) and lays every line read from it into an 80 x 24 screen (wrapped,
scrolled: what a terminal emulator does before it draws), with no rate cap; --counters FILE gets
a line a second, `unix_time,bytes,lines,cpu_s` (totals so far, cpu_s its own CPU), from which
the case reads the console's bytes and lines a second over any window of its run.

With --fifo it serves one writer after another (each run of a stepped load opens it anew) until
stopped, and prints what it drew each time a writer closes. Exit 0; 2 on bad usage.
"""

import argparse
import codecs
import collections
import os
import select
import re
import signal
import stat
import sys
import threading
import time

from ..cli import Parser

CHUNK = 4096
COLUMNS, ROWS = 80, 24


def rate_of(text):
    """'512k', '1m', '2000' -> bytes a second."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", text.strip())
    if m is None or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError("wants bytes a second above 0, e.g. 512k, 1m, 20000")
    return float(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]


def drain(fd, rate, keep):
    """Reads fd to its end at `rate` bytes a second; (bytes, lines) drawn."""
    total = lines = 0
    start = time.monotonic()
    while True:
        data = os.read(fd, CHUNK)
        if not data:
            return total, lines
        if keep is not None:
            keep.write(data)
        total += len(data)
        lines += data.count(b"\n")
        # ahead of the rate: wait until the bytes drawn so far are due
        ahead = total / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)


class Screen:
    """An 80 x 24 terminal screen: text decoded as UTF-8, each line wrapped at COLUMNS, the screen
    scrolled by a row for every row past the bottom; CR returns to the first column, overwriting."""

    def __init__(self):
        self.rows = collections.deque([""] * ROWS, maxlen=ROWS)
        self.line, self.decoder = "", codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data):
        parts = (self.line + self.decoder.decode(data)).split("\n")
        for text in parts[:-1]:
            for piece in self._wrapped(text):
                self.rows.append(piece)
        self.line = parts[-1]

    @staticmethod
    def _wrapped(text):
        shown = ""
        for over in text.split("\r"):  # each CR starts the row again
            shown = over + shown[len(over):]
        return [shown[i:i + COLUMNS] for i in range(0, len(shown), COLUMNS)] or [""]


def serve_pty(link, counters, keep=None, every=1.0):
    """A pseudo-terminal behind the symlink `link`, read with no rate cap into a Screen, until
    SIGTERM; a line of totals into `counters` (a file object) every `every` seconds."""
    master, slave = os.openpty()  # this end of the slave stays open: writers come and go
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(os.ttyname(slave), link)
    screen, total, lines, last = Screen(), 0, 0, 0.0
    try:
        while True:
            if select.select([master], [], [], every)[0]:
                data = os.read(master, 65536)
                screen.feed(data)
                if keep is not None:
                    keep.write(data)
                total, lines = total + len(data), lines + data.count(b"\n")
            now = time.time()
            if now - last >= every:
                t = os.times()
                counters.write("%.3f,%d,%d,%.3f\n" % (now, total, lines, t.user + t.system))
                counters.flush()
                last = now
    finally:
        os.unlink(link)


def serve_fifo(path, rate, keep, stop=None, say=print):
    """Drains every writer of the named pipe at `path` in turn, until stop (a threading.Event) is
    set and the pipe is opened once more (Fifo.close does both), or for ever."""
    if os.path.exists(path) and not stat.S_ISFIFO(os.stat(path).st_mode):
        raise SystemExit("loadscripts/console: %s exists and is not a named pipe" % path)
    if not os.path.exists(path):
        os.mkfifo(path, 0o600)
    say("console: draining %s at %.0f bytes/s (Ctrl-C stops)" % (path, rate))
    while stop is None or not stop.is_set():
        fd = os.open(path, os.O_RDONLY)  # blocks until a writer opens it
        t0 = time.monotonic()
        try:
            total, lines = drain(fd, rate, keep)
        finally:
            os.close(fd)
        took = time.monotonic() - t0
        if total or stop is None or not stop.is_set():
            say("console: %d lines, %d bytes in %.1f s (%.0f lines/s)"
                % (lines, total, took, lines / took if took > 0 else 0))


class Fifo:
    """The console on a named pipe, in a thread of the calling process (the tps-trend case's):
    what it says goes to log_path; close() stops it and removes the pipe."""

    def __init__(self, path, rate, log_path):
        self.path, self.stop = path, threading.Event()
        self.log = open(log_path, "w")
        if not os.path.exists(path):
            os.mkfifo(path, 0o600)
        self.thread = threading.Thread(target=serve_fifo, args=(path, rate_of(rate), None, self.stop, self.say),
                                       daemon=True)
        self.thread.start()

    def say(self, line):
        self.log.write(line + "\n")
        self.log.flush()

    def close(self):
        self.stop.set()
        for _ in range(100):  # a reader waiting for a writer: this open is its last
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # none waiting yet (ENXIO): draining, or about to wait
            self.thread.join(0.1)
            if not self.thread.is_alive():
                break
        self.log.close()
        if os.path.exists(self.path):
            os.unlink(self.path)


def main(argv):
    p = Parser(prog="loadscripts/console", description=__doc__.split("\n\n")[0])
    p.add_argument("--rate", type=rate_of, default=rate_of("512k"),
                   help="bytes a second the console renders (default 512k: a remote terminal's order "
                        "of magnitude; k and m are KiB and MiB)")
    p.add_argument("--fifo", metavar="PATH", help="make PATH a named pipe and drain every writer of it")
    p.add_argument("--pty", metavar="PATH", help="make PATH a link to a pseudo-terminal and render every "
                   "writer of it on an 80 x 24 screen, with no rate cap (--rate does not apply)")
    p.add_argument("--counters", metavar="FILE", help="with --pty: a line of totals a second into FILE")
    p.add_argument("--keep", metavar="FILE", help="write what was drawn to FILE (default: discard)")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    keep = open(args.keep, "ab") if args.keep else None
    try:
        if args.pty:
            with open(args.counters or os.devnull, "w") as counters:
                counters.write("unix_time,bytes,lines,cpu_s\n")
                serve_pty(args.pty, counters, keep)
        if args.fifo:
            serve_fifo(args.fifo, args.rate, keep, say=lambda line: print(line, flush=True))
        total, lines = drain(sys.stdin.fileno(), args.rate, keep)
        print("console: %d lines, %d bytes" % (lines, total), file=sys.stderr)
    except KeyboardInterrupt:
        pass
    finally:
        if keep is not None:
            keep.close()
    return 0
