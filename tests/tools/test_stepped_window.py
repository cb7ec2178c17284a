"""sutlab_lab/stepped.py's run_level: the scrapes around the measured seconds (steps' per-route
table) never hold the load's window back. A server that answers /metrics late (sync workers as
slow as PHP) once made the opening scrape wait while a load of fixed length ran out, so the
sampler started after it and every tier read 0 %: here the opening scrape takes longer than the
whole load, and the sampler must still see the load tool's CPU."""

import os
import sys
import tempfile
import time
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import stepped  # noqa: E402,I100

PY = sys.executable


class BurningLoad:
    """A load tool that burns CPU for the seconds asked (the sampler's load tier is its process)."""

    tool = "fake"
    timeout = 5

    def command(self, level, seconds, tag):
        return [PY, "-c", "import time\nt = time.time()\nwhile time.time() - t < %f: pass\nprint('done')" % seconds]

    def result(self, output, tag, level, skip_s=0):
        return {"rps": 1.0}


class Window(unittest.TestCase):
    def test_a_slow_opening_scrape_does_not_move_the_window(self):
        out = tempfile.mkdtemp(prefix="sutlab-window-")
        self.addCleanup(lambda: os.system("rm -rf '%s'" % out))
        calls = []

        def slow_window():
            calls.append(time.monotonic())
            n = len(calls)
            if n == 1:
                time.sleep(3.0)  # longer than the load itself
            return {"scrape": n}

        row = stepped.run_level(BurningLoad(), 1, {}, 2.0, 0, out, None, window=slow_window)
        self.assertFalse(row.get("failed"), row)
        self.assertEqual(row["window"], ({"scrape": 1}, {"scrape": 2}))
        # the load burned for 2 s; a sampler started after the opening scrape would have seen none of it
        self.assertGreater(row["tiers"]["load"]["cpu_s"], 0.5, row["tiers"]["load"])


if __name__ == "__main__":
    unittest.main()
