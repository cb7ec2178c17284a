"""What the tests of loadscripts/sutlab_lab share: the library on sys.path, the captured tool
outputs, a loopback server of a fabricated /metrics."""

import http.server
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "loadscripts"))
DATA = os.path.join(ROOT, "tests", "data", "loadtools")  # captured by its `capture` script


def data(name):
    return os.path.join(DATA, name)


def read(name):
    with open(data(name)) as f:
        return f.read()


def text_server(test, text):
    """A loopback HTTP server answering every GET with text() (a fabricated /metrics page), shut
    down when the test ends; its base URL."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = text().encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    test.addCleanup(srv.server_close)
    test.addCleanup(srv.shutdown)
    return "http://127.0.0.1:%d" % srv.server_address[1]
