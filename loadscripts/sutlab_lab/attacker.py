"""spray's own attacker, for what httperf cannot reach: an IPv6 address or a host name. An open
model as vegeta runs it (the spray write-up's tool, not in Debian), on asyncio:

- arrivals: request i starts at i/rate s whether or not earlier ones were answered; one started
  more than LATE_S behind its time is counted late (the attacker's own limit, steps' shortfall);
- connections: kept alive and reused, the most recently idle first (Go's transport); a reused
  connection that the server had closed is replaced by a new one once, as Go retries a GET;
- dialling: every address the host resolves to, in getaddrinfo's order (::1 before 127.0.0.1
  for `localhost`), each given its slice of what is left of the timeout, at least 2 s (Go's
  dialSerial and partialDeadline); when all fail the first address's error is the one reported;
- the timeout covers the whole request, dial and reply (vegeta's client timeout);
- every request has a latency, the failed ones too, as vegeta counts them in its mean.

Error kinds: refused (RST to the SYN), connect-timeout, reset, EOF (closed before a full reply),
reply-timeout; each also kept with the address it happened on (vegeta's "Error Set").

Run as a script (`python3 attacker.py --host ::1 --port 8080 ...`): a progress line a second on
stdout, then the report as one JSON line (spray.py reads both)."""

import argparse
import asyncio
import errno
import json
import resource
import socket
import sys

LATE_S = 0.05
GO_SLICE_MIN_S = 2.0  # Go's dialer: "saneMinimum", the least time one address is given
HEAD_LIMIT = 64 * 1024  # a reply head longer than this is a bad reply, not a buffer to grow


def addresses(host, port, given=None):
    """[(family, (ip, port))] of `host`, in getaddrinfo's order, each once; `given`, a list of IP
    addresses, stands for what the name resolves to (as curl's --resolve: a machine whose
    /etc/hosts names 127.0.0.1 alone still dials `localhost` as one that lists ::1 first)."""
    if given:
        return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, (ip, port)) for ip in given]
    out = []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        entry = (family, sockaddr[:2])
        if entry not in out:
            out.append(entry)
    return out


def slice_end(now, deadline, left):
    """When the next of `left` addresses must give up (Go's partialDeadline), or None if no time
    is left."""
    remaining = deadline - now
    if remaining <= 0:
        return None
    share = remaining / left
    if share < GO_SLICE_MIN_S:
        share = min(remaining, GO_SLICE_MIN_S)
    return now + share


def shown(addr):
    return "[%s]:%d" % addr if ":" in addr[0] else "%s:%d" % addr


def kind_of(exc, stage):
    """The error kind of an exception raised while dialling (stage "connect") or reading."""
    if isinstance(exc, asyncio.TimeoutError):
        return stage + "-timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError)):
        return "reset"
    if isinstance(exc, asyncio.IncompleteReadError):
        return "EOF"
    if isinstance(exc, OSError) and exc.errno:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return "bad reply"


async def dial(addrs, deadline):
    """(reader, writer) of the first address that answers, else (None, (kind, address)) of the
    first failure."""
    loop = asyncio.get_running_loop()
    first = None
    for i, (family, addr) in enumerate(addrs):
        now = loop.time()
        until = slice_end(now, deadline, len(addrs) - i)
        if until is None:
            first = first or ("connect-timeout", addr)
            break
        try:
            conn = await asyncio.wait_for(asyncio.open_connection(addr[0], addr[1], family=family,
                                                                 limit=HEAD_LIMIT), until - now)
            return conn, None
        except (OSError, asyncio.TimeoutError) as e:
            first = first or (kind_of(e, "connect"), addr)
    return None, first


async def read_reply(reader):
    """(status code, keep-alive) of one HTTP/1.1 reply, its body read and dropped."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ValueError("not an HTTP reply")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip().lower()
    keep = fields.get("connection") != "close" and parts[0] == "HTTP/1.1"
    if "chunked" in fields.get("transfer-encoding", ""):
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif "content-length" in fields:
        await reader.readexactly(int(fields["content-length"]))
    else:
        await reader.read()
        keep = False
    return int(parts[1]), keep


class Attack:
    """One attack's state: the addresses, the idle connections, and the tallies of the report."""

    def __init__(self, host, port, path, timeout, given=None):
        self.addrs, self.timeout = addresses(host, port, given), timeout
        hostname = "[%s]" % host if ":" in host else host
        self.request = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: sutlab-spray\r\n\r\n"
                        % (path, hostname, port)).encode()
        self.idle = []  # (reader, writer, address), the most recently idle last
        self.codes, self.errors, self.error_set, self.lat = {}, {}, {}, {}
        self.late = self.done = 0

    def tally(self, started, code, error=None):
        loop = asyncio.get_running_loop()
        ms = round((loop.time() - started) * 1000.0)
        self.lat[ms] = self.lat.get(ms, 0) + 1
        self.done += 1
        if error is None:
            self.codes[code] = self.codes.get(code, 0) + 1
            return
        kind, addr = error
        self.errors[kind] = self.errors.get(kind, 0) + 1
        key = "%s: %s" % (shown(addr), kind)
        self.error_set[key] = self.error_set.get(key, 0) + 1

    async def one(self):
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self.timeout
        for reused in (True, False):
            if reused and not self.idle:
                continue
            if reused:
                reader, writer, addr = self.idle.pop()
            else:
                conn, error = await dial(self.addrs, deadline)
                if conn is None:
                    return self.tally(started, 0, error)
                reader, writer = conn
                addr = writer.get_extra_info("peername")[:2]
            try:
                writer.write(self.request)
                code, keep = await asyncio.wait_for(read_reply(reader), max(0.0, deadline - loop.time()))
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    ValueError) as e:
                writer.close()
                kind = kind_of(e, "reply")
                if reused and kind in ("EOF", "reset") and getattr(e, "partial", b"") == b"":
                    continue  # the server closed it while idle: a new connection, once
                return self.tally(started, 0, (kind, addr))
            if keep:
                self.idle.append((reader, writer, addr))
            else:
                writer.close()
            return self.tally(started, code)

    def report(self, sent, seconds):
        """The report in the shape of spray.merge's: requests, codes, errors, latencies (every
        request's, so spray adds no timeouts to them), the seconds until the last reply."""
        replies = sum(self.codes.values())
        classes = {}
        for code, n in self.codes.items():
            classes["%dxx" % (code // 100)] = classes.get("%dxx" % (code // 100), 0) + n
        return {"connections": sent, "requests": sent, "replies": replies, "status": classes,
                "codes": self.codes, "errors": self.errors, "error_set": self.error_set, "lifetimes_ms": self.lat,
                "latencies_complete": True, "late": self.late, "duration_s": seconds, "processes": 1,
                "addresses": [shown(a) for _, a in self.addrs]}


async def ticker(attack, total):
    while True:
        await asyncio.sleep(1.0)
        print("progress: %d of %d done, %d replies, %d errors" % (attack.done, total, sum(attack.codes.values()),
                                                                  sum(attack.errors.values())), flush=True)


async def run(host, port, path, rate, duration, timeout, given=None):
    """The attack to its end: every request answered, failed or timed out. given: see addresses."""
    attack = Attack(host, port, path, timeout, given)
    loop = asyncio.get_running_loop()
    total = max(1, int(round(rate * duration)))
    tick = asyncio.create_task(ticker(attack, total))
    t0, tasks = loop.time(), []
    for i in range(total):
        behind = loop.time() - (t0 + i / rate)
        if behind < 0:
            await asyncio.sleep(-behind)
        elif behind > LATE_S:
            attack.late += 1
        tasks.append(asyncio.create_task(attack.one()))
    await asyncio.gather(*tasks)
    tick.cancel()
    for _, writer, _ in attack.idle:
        writer.close()
    return attack.report(total, loop.time() - t0)


def command(python, host, port, path, rate, duration, timeout, given=None):
    """The attacker's command line (spray.py starts it); given: the addresses `host` stands for."""
    argv = [python, __file__, "--host", host, "--port", str(port), "--path", path, "--rate", "%g" % rate,
            "--duration", str(duration), "--timeout", str(timeout)]
    return argv + (["--addresses", ",".join(given)] if given else [])


def main(argv):
    p = argparse.ArgumentParser(prog="attacker.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--timeout", type=float, required=True)
    p.add_argument("--addresses", help="IP,IP...: what --host resolves to, in this order (default: getaddrinfo)")
    args = p.parse_args(argv)
    # one descriptor per request in flight: rate x timeout of them
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    need = int(args.rate * args.timeout) + 64
    if hard < need:
        print("attacker.py: %d requests may be in flight but only %d descriptors are allowed (ulimit -n)"
              % (need, hard), file=sys.stderr)
        return 1
    try:
        report = asyncio.run(run(args.host, args.port, args.path, args.rate, args.duration, args.timeout,
                                     args.addresses.split(",") if args.addresses else None))
    except socket.gaierror as e:
        print("attacker.py: cannot resolve %s: %s" % (args.host, e), file=sys.stderr)
        return 1
    print(json.dumps(report, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
