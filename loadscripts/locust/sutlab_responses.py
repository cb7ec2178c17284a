"""--print-responses [FILE|-]: every response the users get, written out as it arrives.

The TPS-trend write-up (JMeter) lost its TPS, 6,000+ down to about 150, to its own load script,
which printed every response synchronously while the server sat idle. This reproduces that script
on the load-generator tier: one line per request, `STATUS BODY` (`200 {"echo":...}`), written
with a blocking write and a flush per response, in the greenlet that made the request, so gevent's
one thread - every user of the process - waits for it. It costs the load generator on purpose;
do not buffer it.

- Every request of a Locust client passes through `events.request` (success or failure, with or
  without catch_response), so that listener sees each one exactly once: the file has as many
  lines as Locust counts requests. Set-up fetches with urllib (sutlab_locust.Pools) are not
  Locust requests and are not written.
- The body is the one Locust read (gunzipped); CR and LF in it are written as \\r and \\n so that a
  response stays one line. No response at all (refused, reset, timeout): status 0 and the error.
- FILE is truncated at start and written with O_APPEND: several worker processes on one machine
  given the same FILE (all started before the run, as each truncates it) add whole lines to it
  instead of overwriting each other's. '-' is stdout
  (Locust writes its own logs and tables to stderr).
- Opened when Locust starts (events.init), so a FILE that cannot be opened stops the start with
  one line and exit 2, as argparse does for a bad option. The master of a distributed run makes no
  requests and opens nothing; each worker writes its own users' responses, so each worker needs
  the option itself: the master's options reach a worker only when the run starts, after that
  check (the worker then warns that it does not print).
- A write that fails (disk full, closed pipe) is logged once, printing stops and Locust exits 1.

Imported (and so registered) by sutlab_locust.py.
"""

import logging
import os
import sys

from locust import events
from locust.runners import MasterRunner, WorkerRunner

from sutlab_options import opt

log = logging.getLogger("sutlab")


def response_line(response, exception):
    """`STATUS BODY\\n` as bytes, for one request event."""
    status = getattr(response, "status_code", 0) or 0
    try:
        body = response.content if response is not None else None
    except Exception:  # noqa: BLE001 - a response Locust itself could not parse: its error says why
        body = None
    if body is None:
        body = repr(exception).encode("utf-8", "replace") if exception is not None else b""
    return b"%d %s\n" % (status, body.replace(b"\r", b"\\r").replace(b"\n", b"\\n"))


def open_target(target):
    """The binary stream for FILE or '-' (stdout); raises OSError when FILE cannot be opened."""
    if target == "-":
        return sys.stdout.buffer
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o666)
    return os.fdopen(fd, "wb")


class ResponsePrinter:
    def __init__(self):
        self.out = None
        self.target = None
        self.environment = None

    def on_init(self, environment, runner=None, **_kw):
        target = opt(environment, "print_responses")
        if isinstance(runner, WorkerRunner) and not target:
            environment.events.test_start.add_listener(self.on_worker_test_start)
        if not target or isinstance(runner, MasterRunner):
            return
        try:
            self.out = open_target(target)
        except OSError as e:
            sys.stderr.write("locust: error: argument --print-responses: cannot open %r: %s\n"
                             % (target, e.strerror or e))
            sys.exit(2)
        self.target, self.environment = target, environment
        environment.events.request.add_listener(self.on_request)
        environment.events.quitting.add_listener(self.on_quitting)

    def on_worker_test_start(self, environment, **_kw):
        # the master's options have just been merged into this worker's parsed_options
        if opt(environment, "print_responses"):
            log.warning("sutlab: the master's --print-responses does not apply to workers: give it "
                        "to each worker")

    def on_request(self, response=None, exception=None, **_kw):
        if self.out is None:
            return
        try:
            # write + flush: one blocking write(2) per response, as the write-up's script did
            self.out.write(response_line(response, exception))
            self.out.flush()
        except OSError as e:
            log.error("sutlab: --print-responses %s: %s; responses are no longer written", self.target, e)
            self.environment.process_exit_code = 1
            self.close()

    def on_quitting(self, **_kw):
        self.close()

    def close(self):
        out, self.out = self.out, None
        if out is not None and out is not sys.stdout.buffer:
            try:
                out.close()
            except OSError:
                pass


PRINTER = ResponsePrinter()
events.init.add_listener(PRINTER.on_init)
