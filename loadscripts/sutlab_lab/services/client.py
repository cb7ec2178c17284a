"""One HTTP request at a time, for checks and readiness (the load itself is the tools' job): a
fresh connection closed after the response, whose header bytes are counted as they came."""

import re
import socket
import time
import urllib.parse

from ..errors import RunError


class Response:
    def __init__(self, status, headers, body, header_bytes):
        self.status = status              # 0: not an HTTP response
        self.headers = headers            # lower-case name -> value
        self.body = body                  # bytes, de-chunked
        self.header_bytes = header_bytes  # status line and headers, as received


class NotReady(RunError):
    """A server did not answer 200 in time, or its process went away meanwhile."""


def request(url, method="GET", body=None, headers=None, timeout=5):
    """One request to an http:// URL; OSError when the connection fails or times out."""
    u = urllib.parse.urlsplit(url)
    port = u.port or 80
    target = (u.path or "/") + ("?" + u.query if u.query else "")
    lines = ["%s %s HTTP/1.1" % (method, target), "Host: %s:%d" % (u.hostname, port), "Connection: close"]
    lines += ["%s: %s" % kv for kv in (headers or {}).items()]
    if body is not None:
        if not any(k.lower() == "content-type" for k in (headers or {})):
            lines.append("Content-Type: application/json")
        lines.append("Content-Length: %d" % len(body))
    with socket.create_connection((u.hostname, port), timeout=timeout) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return _parse(b"".join(chunks))


def _parse(raw):
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return Response(0, {}, b"", len(raw))
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    if "chunked" in hdrs.get("transfer-encoding", "").lower():
        body = _dechunk(body)
    return Response(int(m.group(1)) if m else 0, hdrs, body, len(head) + 4)


def _dechunk(data):
    out, pos = bytearray(), 0
    while True:
        end = data.find(b"\r\n", pos)
        size = int(data[pos:end].split(b";")[0], 16) if end >= 0 else 0
        if size == 0:
            return bytes(out)
        out += data[end + 2:end + 2 + size]
        pos = end + 2 + size + 2


def wait_until_ok(url, timeout, hits=1, alive=None):
    """GET url until it answers 200 `hits` times in a row (sutlab's /readyz answers per worker:
    asking a few times covers them); NotReady after `timeout` seconds, or as soon as alive()
    says the server's process is gone. Returns how many requests got an answer."""
    deadline = time.monotonic() + timeout
    answered = streak = 0
    last = "no answer"
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            raise NotReady("the server exited")
        try:
            status = request(url, timeout=2).status
            answered += 1
            last = "HTTP %d" % status
        except OSError as e:
            status, last = None, str(e)
        streak = streak + 1 if status == 200 else 0
        if streak >= hits:
            return answered
        if status != 200:
            time.sleep(0.05)
    raise NotReady("%s did not answer 200 within %.0f s (%s)" % (url, timeout, last))
