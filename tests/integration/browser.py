"""A page opened in Debian's headless Chromium, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: requests on fd 3, replies and events on fd 4, NUL-terminated JSON), so
the standard library is enough. It records what a reader of a report would see and what a page
must not do: the console's errors, every network request the page asked for (a file:// page that
is self-contained asks for none beyond itself and data: URIs), the body's data-* attributes the
page's own script set, the tables in the DOM, and a screenshot.

A proxy that answers nothing is set for every scheme and host, loopback included, so that even a
request the check failed to see could not leave the machine. A browser made with loopback=True
reaches loopback addresses directly (pages served by a test, and sutlab) and nothing else.
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--window-size=1200,1600"]


class Page:
    """What the browser saw of one page: console errors, requests, body data, tables, screenshot."""

    def __init__(self, errors, requests, data, tables, screenshot):
        self.errors, self.requests, self.data, self.tables, self.screenshot = \
            errors, requests, data, tables, screenshot


class Browser:
    def __init__(self, timeout=60, loopback=False):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="sutlab-chromium-")
        # without <-loopback>, Chromium bypasses the proxy for loopback only
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # the child's fd 3 reads our requests, its fd 4 writes replies: the shell puts the pipes
        # there (subprocess closes every descriptor not passed after a preexec_fn could move them)
        flags = [f for f in FLAGS if not (loopback and f.startswith("--proxy-bypass-list="))]
        argv = [CHROMIUM] + flags + ["--user-data-dir=" + self.profile, "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", 'exec "$@" 3<&%d 4>&%d' % (to_child_r, from_child_w), "sh"] + argv,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf, self._id, self.events = b"", 0, []

    def close(self):
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- the protocol -------------------------------------------------------------------------

    def send(self, method, params=None, session=None):
        """The result of one command; RuntimeError on a protocol error."""
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if any(e.get("method") == method for e in self.events):
                return True
            self.events.append(self._read(end - time.monotonic()))
        return False

    def _read(self, seconds=None):
        end = time.monotonic() + (self.timeout if seconds is None else max(0.0, seconds))
        while b"\0" not in self._buf:
            import select
            left = end - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._from_child, 65536)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    # -- one page -------------------------------------------------------------------------------

    def open(self, path, settle=1.0, until=None):
        """Load the file (or an http:// URL), let its scripts run (until the body's data-UNTIL is
        set, when given), and return a Page."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable", session=session)
        self.events = []
        self.send("Page.navigate", {"url": self._url(path)}, session=session)
        if not self.wait_event("Page.loadEventFired", self.timeout):
            raise TimeoutError("the page did not load: %s" % path)
        time.sleep(settle)
        end = time.monotonic() + self.timeout
        while until and not self.evaluate(session, "document.body.dataset[%s] || ''" % json.dumps(until)):
            if time.monotonic() > end:
                raise TimeoutError("the page never set data-%s: %s" % (until, path))
            time.sleep(0.1)
        data = self.evaluate(session, "JSON.stringify(Object.assign({}, document.body.dataset))")
        tables = self.evaluate(session, "document.querySelectorAll('table').length")
        shot = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                                          session=session)["data"])
        self._drain()
        return Page(self._errors(), self._requests(path), json.loads(data), tables, shot)

    def evaluate(self, session, expr):
        return self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                         session=session)["result"].get("value")

    def _drain(self):
        try:
            while True:
                self.events.append(self._read(0.2))
        except TimeoutError:
            pass

    def _errors(self):
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", ""))
            elif e.get("method") == "Runtime.exceptionThrown":
                out.append(p.get("exceptionDetails", {}).get("text", "exception"))
        return out

    @staticmethod
    def _url(path):
        return path if path.startswith(("http://", "https://")) else "file://" + os.path.abspath(path)

    def _requests(self, path):
        """Every URL the page asked for but itself and data: URIs."""
        me = self._url(path)
        urls = [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]
        return [u for u in urls if u != me and not u.startswith("data:")]
