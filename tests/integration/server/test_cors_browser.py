#!/usr/bin/python3
"""--cors-origin in a real browser: Debian's headless Chromium (tests/integration/browser.py) loads
a page from one origin (a loopback HTTP server of this test) whose script calls sutlab, on another
port and so another origin, as a RealWorld frontend does: it registers (a JSON POST: preflighted),
reads the user back with its token (Authorization: preflighted) and reads the index's
X-Total-Count-Kind (an exposed header). Without --cors-origin the browser refuses: the preflight is
sutlab's 405, the POST is never sent and no user is made. With the page's origin listed, or `*`,
every call succeeds; with another origin listed, the browser refuses again.
"""

import http.server
import threading
import unittest
import uuid

import browser
from boardlib import BoardCase, sql_lit
from sutlab_testlib import free_port

# The frontend: ?api=PORT names sutlab's port; the outcome lands in the body's data-* attributes.
PAGE = b"""<!doctype html><html><head><title>front</title></head><body><script>
(async () => {
  const api = "http://127.0.0.1:" + new URLSearchParams(location.search).get("api") + "/api";
  const name = new URLSearchParams(location.search).get("user");
  const d = document.body.dataset;
  try {
    const reg = await fetch(api + "/users", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({user: {username: name, email: name + "@example.org", password: "pw-" + name}})});
    d.registered = reg.status;
    const token = (await reg.json()).user.token;
    const me = await fetch(api + "/user", {headers: {"Authorization": "Token " + token}});
    d.me = (await me.json()).user.username;
    const list = await fetch(api + "/articles?limit=1");
    d.kind = list.headers.get("X-Total-Count-Kind");
    d.result = "ok";
  } catch (e) {
    d.result = "refused: " + e;
  }
  d.done = "1";
})();
</script></body></html>"""


class Front(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


class FrontendCase(BoardCase):
    """One sutlab per class, with CORS(origin of the page) as its --cors-origin (None: no flag)."""

    CORS = None

    @classmethod
    def setUpClass(cls):
        cls.front = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Front)
        cls.front_origin = "http://127.0.0.1:%d" % cls.front.server_address[1]
        threading.Thread(target=cls.front.serve_forever, daemon=True).start()
        try:
            super().setUpClass()
        except BaseException:
            cls.front.shutdown()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.front.shutdown()
        cls.front.server_close()
        super().tearDownClass()

    @classmethod
    def server_args(cls):
        cors = cls.CORS(cls.front_origin) if cls.CORS else None
        return super().server_args() + (["--cors-origin", cors] if cors else [])

    def run_page(self):
        """(the page's data-*, the username it tried) from one visit in a fresh browser."""
        name = "b" + uuid.uuid4().hex[:12]
        url = "%s/front.html?api=%d&user=%s" % (self.front_origin, self.server.port, name)
        with browser.Browser(timeout=30, loopback=True) as b:
            page = b.open(url, settle=0.2, until="done")
        return page.data, name

    def assert_refused(self):
        data, name = self.run_page()
        self.assertTrue(data.get("result", "").startswith("refused: TypeError"), data)
        self.assertNotIn("registered", data, "the browser sent the POST: %r" % data)
        self.assertEqual(self.count("users", "username = %s" % sql_lit(name)), 0, "the preflight stopped it")

    def assert_works(self):
        data, name = self.run_page()
        self.assertEqual(data.get("result"), "ok", data)
        self.assertEqual((data.get("registered"), data.get("me")), ("201", name), data)
        self.assertIn(data.get("kind"), ("exact", "lower-bound"), data)
        self.assertEqual(self.count("users", "username = %s" % sql_lit(name)), 1)


class WithoutTheFlag(FrontendCase):
    def test_the_browser_refuses(self):
        self.assert_refused()


class WithThePagesOrigin(FrontendCase):
    CORS = staticmethod(lambda origin: "http://127.0.0.1:1, " + origin)

    def test_the_browser_lets_the_page_read(self):
        self.assert_works()


class WithAnyOrigin(FrontendCase):
    CORS = staticmethod(lambda origin: "*")

    def test_the_browser_lets_the_page_read(self):
        self.assert_works()


class WithAnotherOrigin(FrontendCase):
    CORS = staticmethod(lambda origin: origin.rsplit(":", 1)[0] + ":1")

    def test_the_browser_refuses(self):
        self.assert_refused()


if __name__ == "__main__":
    unittest.main()
