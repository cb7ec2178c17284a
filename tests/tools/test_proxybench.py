"""loadscripts/sutlab_lab/proxybench.py: the HAProxy configuration it writes (HAProxy itself checks
it when installed) and how a row's runs become one row."""

import os
import subprocess
import tempfile
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import proxybench  # noqa: E402,I100


def ports():
    return {name: 20000 + i for i, (name, *_) in enumerate(proxybench.FRONTENDS)}


class Config(unittest.TestCase):
    def test_every_row_and_memory_mode_has_its_frontend(self):
        text = proxybench.config(ports(), "/x/cert.pem", 9000, 9443, "/x/stats.sock")
        names = [ln.split()[1] for ln in text.splitlines() if ln.startswith("frontend ")]
        self.assertEqual(sorted(set(f for f, _ in proxybench.ROWS.values()) | set(proxybench.MEMORY.values())),
                         sorted(names))
        blocks = {b.split("\n", 1)[0]: b for b in text.split("frontend ")[1:]}
        self.assertIn("option httpclose", blocks["close"])
        self.assertIn("option http-server-close", blocks["server-close"])
        self.assertNotIn("option", blocks["keep-alive"])
        # a full handshake every time: no tickets on its frontend, no session cache anywhere
        self.assertIn("no-tls-tickets", blocks["tls-full"])
        self.assertNotIn("no-tls-tickets", blocks["tls"])
        self.assertIn("tune.ssl.cachesize 0", text)
        self.assertIn("server s1 127.0.0.1:9443 ssl verify none", text)  # end to end: TLS to sutlab too
        self.assertIn("nbthread 1", text)

    @unittest.skipUnless(os.access(proxybench.HAPROXY, os.X_OK), "haproxy not installed")
    def test_haproxy_accepts_it(self):
        with tempfile.TemporaryDirectory() as d:
            cert = os.path.join(d, "cert.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                            "/CN=localhost", "-keyout", cert + ".key", "-out", cert + ".crt"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            with open(cert, "w") as f:
                f.write(open(cert + ".crt").read() + open(cert + ".key").read())
            cfg = os.path.join(d, "haproxy.cfg")
            with open(cfg, "w") as f:
                f.write(proxybench.config(ports(), cert, 9000, 9443, os.path.join(d, "stats.sock")))
            p = subprocess.run([proxybench.HAPROXY, "-c", "-f", cfg], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout)


class Combine(unittest.TestCase):
    def test_the_mean_of_each_figure_but_the_lowest_busy(self):
        row = proxybench.combine([{"rps": 100.0, "busy": 0.95, "kernel": 0.8, "resumed": None},
                                  {"rps": 200.0, "busy": 0.85, "kernel": 0.6, "resumed": None}])
        self.assertEqual(row["rps"], 150.0)
        self.assertEqual(row["busy"], 0.85)  # one run the subject did not limit is enough
        self.assertAlmostEqual(row["kernel"], 0.7)
        self.assertIsNone(row["resumed"])


class Rates(unittest.TestCase):
    def test_every_row_in_order_then_reversed_each_combined(self):
        """The engine's alternated rounds: a drift of the machine weighs on both ends alike."""
        bench = proxybench.Bench(tempfile.mkdtemp(prefix="sutlab-proxybench-"), "/bin/false")
        calls = []

        def rate(row, seconds):
            calls.append((row, seconds))
            return {"rps": float(len(calls)), "busy": 1.0 - len(calls) / 100.0}
        bench.rate = rate
        rates = bench.rates(3)
        rows = list(proxybench.ROWS)
        self.assertEqual(calls, [(r, 3) for r in rows + rows[::-1]])
        n = len(rows)
        first = rates[rows[0]]  # runs 1 and 2n: the mean of rps, the lowest busy
        self.assertEqual(first["rps"], (1 + 2 * n) / 2)
        self.assertAlmostEqual(first["busy"], 1.0 - 2 * n / 100.0)


if __name__ == "__main__":
    unittest.main()
