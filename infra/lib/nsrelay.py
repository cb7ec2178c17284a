#!/usr/bin/python3
"""nsrelay: TCP relays from 127.0.0.1 of this (the root) network namespace into named network
namespaces, for the netns lab's monitoring (infra/lib/monitoring.sh): Prometheus runs in the root
namespace, where a person's browser reaches it, and scrapes what listens only inside the lab's
namespaces through these relays.

usage: nsrelay.py PORT=NAMESPACE:HOST:TPORT ...
  every PORT is a listener on 127.0.0.1 here; each connection to it is joined to HOST:TPORT as seen
  from the namespace NAMESPACE (/run/netns/NAMESPACE, made by `ip netns add`).

Every listener is made before anything else; then each connection gets a thread that enters the
namespace (setns applies to the calling thread only) before it makes its socket and connects.
Stops on SIGTERM or SIGINT.
"""

import ctypes
import os
import select
import signal
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "setns: " + os.strerror(err))


def pump(a, b):
    """Copy both ways until either side closes."""
    socks = [a, b]
    try:
        while True:
            ready, _, _ = select.select(socks, [], [], 60)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return


def serve_one(conn, nsfd, host, port):
    out = None
    try:
        setns(nsfd)   # this thread only
        out = socket.create_connection((host, port), timeout=2)
        out.settimeout(None)
        conn.settimeout(None)
        pump(conn, out)
    except OSError:
        pass
    finally:
        for s in (conn, out):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


def accept_loop(listener, nsfd, host, port):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=serve_one, args=(conn, nsfd, host, port), daemon=True).start()


def main(argv):
    if not argv or any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0 if argv else 2
    routes = []
    for spec in argv:
        try:
            lport, rest = spec.split("=", 1)
            ns, host, tport = rest.rsplit(":", 2)
            routes.append((int(lport), ns, host, int(tport)))
        except ValueError:
            print("nsrelay: bad relay %r (PORT=NAMESPACE:HOST:PORT)" % spec, file=sys.stderr)
            return 2
    threads = []
    for lport, ns, host, tport in routes:
        nsfd = os.open(os.path.join("/run/netns", ns), os.O_RDONLY)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", lport))
        listener.listen(64)
        threads.append(threading.Thread(target=accept_loop, args=(listener, nsfd, host, tport), daemon=True))
    for t in threads:
        t.start()
    print("nsrelay: %s" % ", ".join("127.0.0.1:%d -> %s %s:%d" % r for r in routes), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(3600):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
