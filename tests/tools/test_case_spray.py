"""loadscripts/sutlab_lab/cases/spray.py's checks against the spray write-up's figures (003 L2-L30), on
rows shaped as steps.csv gives them: every figure matching is "reproduced"; the Future no better
than blocking, or another tier limiting, is "not reproduced"; each figure missed alone is
"partly reproduced" naming it, so loosening any check to always-true fails a test here."""

import copy
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, spray  # noqa: E402,I100


def matching():
    """A run where every figure of the write-up holds: blocking answers none, 7.2 s on average,
    refusals among its failures; the Future (the 2000-thread pool) answers 31 %; each proxy 502."""
    return {
        (None, "inline"): {"level": 100.0, "rps": 0.0, "success": 0.0, "mean_ms": 7156.0, "p50_ms": 4390.0,
                           "p95_ms": 22700.0, "p99_ms": 30000.0, "errors": "connect-timeout:2100 refused:900",
                           "verdict": "none", "busy_web": 0.01},
        (None, spray.POOL): {"level": 100.0, "rps": 31.0, "success": 0.311, "mean_ms": 6768.0, "p50_ms": 2182.0,
                             "p95_ms": 30000.0, "errors": "EOF:100 refused:600 reply-timeout:1067 reset:300",
                             "verdict": "none", "busy_web": 0.04},
        ("localhost", "inline"): {"level": 100.0, "success": 0.0, "errors": "refused:2990", "verdict": "none"},
        ("localhost", spray.POOL): {"level": 100.0, "success": 1.0, "errors": "0", "verdict": "below limits"},
        (None, "offload"): {"level": 100.0, "rps": 100.0, "success": 1.0, "mean_ms": 2000.0, "errors": "0",
                            "verdict": "below limits", "busy_web": 0.03},
        ("nginx", "inline"): {"level": 100.0, "success": 0.0, "errors": "502:2728 timeout:272", "verdict": "none"},
        ("haproxy", "inline"): {"level": 100.0, "success": 0.0, "errors": "502:2745 timeout:255", "verdict": "none"},
    }


# each counted figure, and a change to the matching run that misses it alone
MISSES = {
    "blocking: success": lambda r: r[(None, "inline")].update(success=0.2),
    "blocking: mean": lambda r: r[(None, "inline")].update(mean_ms=29930.0),  # the lab's dropped SYNs
    "blocking: p50": lambda r: r[(None, "inline")].update(p50_ms=30000.0),
    "blocking: p95": lambda r: r[(None, "inline")].update(p95_ms=8000.0),
    "blocking: refused": lambda r: r[(None, "inline")].update(errors="connect-timeout:2999 reset:1"),
    "blocking: timeout": lambda r: r[(None, "inline")].update(errors="refused:900 reply-timeout:2100"),  # not at connect
    "Future: success": lambda r: r[(None, spray.POOL)].update(success=1.0),  # a pool as big as the rate needs
    "Future: mean": lambda r: r[(None, spray.POOL)].update(mean_ms=2001.0),
    "Future: p50": lambda r: r[(None, spray.POOL)].update(p50_ms=30000.0),
    "Future: refused": lambda r: r[(None, spray.POOL)].update(errors="EOF:100 reply-timeout:1667 reset:300"),
    "Future: reset/EOF": lambda r: r[(None, spray.POOL)].update(errors="refused:600 reply-timeout:1467"),
    "blocking behind nginx (the lab's proxy): 502 answers":
        lambda r: r[("nginx", "inline")].update(errors="504:2728 timeout:272"),
    "blocking behind haproxy (the lab's proxy): 502 answers":
        lambda r: r[("haproxy", "inline")].update(errors="503:2745 timeout:255"),
}


def verdict(results):
    return checks.verdict(spray.checks(results))


class SprayChecks(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        cs = spray.checks(matching())
        self.assertEqual(verdict(matching())[0], "reproduced", [(c.what, c.measured) for c in cs if not c.ok])
        counted = [c for c in cs if c.role != "set"]
        self.assertEqual(len(counted), len(MISSES) + 2)  # the figures, the direction and the tier
        self.assertTrue(all(c.cite.startswith("003 L") for c in cs))

    def test_the_future_no_better_than_blocking_is_not_reproduced(self):
        r = matching()
        r[(None, spray.POOL)] = dict(r[(None, "inline")])  # the flag made no difference
        word, line = verdict(r)
        self.assertEqual(word, "not reproduced")
        self.assertIn("the Future against blocking", line)

    def test_another_tier_limiting_is_not_reproduced(self):
        r = matching()
        r[(None, "inline")]["verdict"] = "web"  # the write-up's CPU was not used up (L2)
        word, line = verdict(r)
        self.assertEqual(word, "not reproduced")
        self.assertIn("blocking: the tier that limits", line)

    def test_each_figure_missed_alone_is_partly_reproduced(self):
        n = len(MISSES) + 2
        for what, miss in MISSES.items():
            r = copy.deepcopy(matching())
            miss(r)
            word, line = verdict(r)
            self.assertEqual(word, "partly reproduced: %d of %d" % (n - 1, n), (what, line))
            self.assertIn(what + " (write-up", line)

    def test_no_pool_is_fitted_and_the_localhost_rows_are_not_counted(self):
        cs = spray.checks(matching())
        self.assertEqual([c.what for c in cs if c.role == "set"], ["requests, rate"])
        r = matching()
        r[("localhost", "inline")].update(success=1.0, errors="0")  # shown beside, never judged
        self.assertEqual(verdict(r)[0], "reproduced")

    def test_httperfs_kinds_in_the_netns_lab_count_alike(self):
        # IPv4 alone there: httperf's "timeout" (connect or reply, it cannot tell) and "reset/EOF"
        r = matching()
        r[(None, "inline")]["errors"] = "refused:900 timeout:2100"
        r[(None, spray.POOL)]["errors"] = "refused:600 reset/EOF:400 timeout:1067"
        self.assertEqual(verdict(r)[0], "reproduced")

    def test_no_check_on_the_timeout(self):
        # p99 and max sit at the client's timeout in any run with timeouts: no check holds them
        self.assertFalse([c for c in spray.checks(matching()) if "p99" in c.what or "max" in c.what])

    def test_a_quick_look_has_no_proxy_checks(self):
        r = matching()
        del r[("nginx", "inline")], r[("haproxy", "inline")]
        self.assertFalse([c for c in spray.checks(r) if "502" in c.what])
        self.assertEqual(verdict(r)[0], "reproduced")

    def test_count_reads_the_errors_cell(self):
        row = {"errors": "502:3 refused:2 reset/EOF:7 timeout:9"}
        self.assertEqual([spray.count(row, k) for k in ("502", "refused", "reset/EOF", "timeout", "503")],
                         [3, 2, 7, 9, 0])
        self.assertEqual(spray.count({"errors": "EOF:1 reset:4 reply-timeout:2"}, "reset", "EOF"), 5)
        self.assertEqual(spray.count({"errors": "0"}, "refused"), 0)
        self.assertEqual(spray.count({}, "refused"), 0)


if __name__ == "__main__":
    unittest.main()
