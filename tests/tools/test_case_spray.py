"""loadscripts/sutlab_lab/cases/spray.py's checks against the spray write-up's figures (003 L2-L30), on
rows shaped as steps.csv gives them: every figure matching is "reproduced"; the Future no better
than blocking is "not reproduced" (the bottleneck part); each counted check fails alone in a run of
its own, so loosening any check to always-true fails a test here."""

import copy
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, failing  # noqa: E402,I100
from sutlab_lab.cases import checks, spray  # noqa: E402


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


# each counted check, and a change to the matching run that misses it alone
MISSES = {
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
    # a handler that did not block: as many answered as the Future's (the blocking share is shown only)
    "the Future against blocking: success %": lambda r: r[(None, "inline")].update(success=0.311),
}


def verdict(results):
    return checks.verdict(spray.checks(results))


def changed(what):
    r = copy.deepcopy(matching())
    MISSES[what](r)
    return r


def matching_checks():
    return spray.checks(matching())


def alone_checks():
    return {what: spray.checks(changed(what)) for what in MISSES}


class SprayChecks(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        cs = matching_checks()
        self.assertEqual(verdict(matching())[0], "reproduced", [(c.what, c.measured) for c in cs if not c.ok])
        self.assertEqual(len([c for c in cs if c.role != "set"]), len(MISSES))
        self.assertTrue(all(c.cite.startswith("003 L") for c in cs))

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())

    def test_the_direction_is_the_bottleneck_and_no_tier_is_counted(self):
        cs = matching_checks()
        self.assertEqual([c.what for c in cs if c.part == "bottleneck"], ["the Future against blocking: success %"])
        self.assertFalse([c for c in cs if c.role == "tier"])
        # a verdict other than the write-up's none: not the write-up's figure (L2 is the symptom
        # under an unstated load), so not counted
        r = matching()
        r[(None, "inline")]["verdict"] = "web"
        self.assertEqual(verdict(r)[0], "reproduced")

    def test_the_future_no_better_than_blocking_is_not_reproduced(self):
        r = matching()
        r[(None, spray.POOL)] = dict(r[(None, "inline")])  # the flag made no difference
        word, line = verdict(r)
        self.assertEqual(word, "not reproduced")
        self.assertIn("the Future against blocking: success % [bottleneck]", line)

    def test_the_future_answering_all_misses_the_profile_only(self):
        # the lab's 2000 threads answer every request where the write-up's answered 31 %: the
        # bottleneck (the Future answers more) holds, its share does not
        r = matching()
        r[(None, spray.POOL)]["success"] = 1.0
        self.assertEqual(failing(spray.checks(r)), ["Future: success"])
        self.assertIn("bottleneck 1 of 1", verdict(r)[1])

    def test_the_blocking_share_is_shown_with_its_arithmetic(self):
        c = {x.what: x for x in matching_checks()}["blocking: success"]
        self.assertEqual((c.role, c.measured, c.cite), ("set", "0.00 %", "003 L26, L28"))
        self.assertIn("at most 1 % answered", c.band)

    def test_no_pool_is_fitted_and_the_localhost_rows_are_not_counted(self):
        cs = spray.checks(matching())
        self.assertEqual([c.what for c in cs if c.role == "set"], ["blocking: success", "requests, rate"])
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
