"""The rules every case's checks follow (loadscripts/sutlab_lab/cases/checks.py): bands bounded on both
sides unless the write-up's figures are lower bounds, set figures not counted, the checks' two parts
(bottleneck, profile) and the four verdicts."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks  # noqa: E402,I100


class Bands(unittest.TestCase):
    def test_a_ratio_holds_within_its_figure_times_or_over_one_and_a_half(self):
        self.assertTrue(checks.ratio("r", "001 L47", 1.8, 1.8).ok)
        self.assertTrue(checks.ratio("r", "001 L47", 1.8, 1.21).ok)
        self.assertTrue(checks.ratio("r", "001 L47", 1.8, 2.69).ok)
        self.assertFalse(checks.ratio("r", "001 L47", 1.8, 1.19).ok)
        self.assertFalse(checks.ratio("r", "001 L47", 1.8, 2.71).ok)  # bounded above too
        self.assertFalse(checks.ratio("r", "001 L47", 1.8, None).ok)  # not measured
        self.assertEqual(checks.ratio("r", "001 L47", 1.8, 2.0).band, "1.20x-2.70x")

    def test_a_range_of_the_write_up_is_its_band(self):
        c = checks.ratio("r", "002 L20", 3.0, 2.2, low=2.0, high=4.0)
        self.assertTrue(c.ok)
        self.assertEqual(c.band, "2.00x-4.00x")
        with self.assertRaises(ValueError):
            checks.ratio("r", "002 L20", 3.0, 2.2, low=2.0)  # one end only
        with self.assertRaises(ValueError):
            checks.ratio("r", "002 L20", 3.0, 2.2, low=4.0, high=2.0)

    def test_a_ratio_of_lower_bounds_has_no_upper_end(self):
        c = checks.ratio("r", "004 L79", 40, 100.0, open_ended=True)  # 6000-plus / 150-plus
        self.assertEqual((c.band, c.ok), ("26.7x-", True))
        self.assertFalse(checks.ratio("r", "004 L79", 40, 26.0, open_ended=True).ok)
        self.assertFalse(checks.ratio("r", "004 L79", 40, None, open_ended=True).ok)
        self.assertFalse(checks.ratio("r", "004 L79", 40, 100.0).ok)  # closed, it would have a ceiling

    def test_a_rate_is_compared_times_or_over_one_and_a_half(self):
        c = checks.rate("rps", "000 L169", "32 (x0.35: 11.2)", 11.2, 15.0)
        self.assertEqual((c.band, c.ok), ("7.46667-16.8 req/s", True))
        self.assertFalse(checks.rate("rps", "000 L169", "32", 11.2, 17.0).ok)
        self.assertFalse(checks.rate("rps", "000 L169", "32", 11.2, 7.0).ok)

    def test_a_share_at_or_over_the_top_of_its_scale_is_the_top(self):
        # a CFS quota's share reads a little over 100 %: 99 % +/- 15 is 84-100 %, and 1.03 holds
        self.assertTrue(checks.share("db", "000 L169", 99, 1.03).ok)
        self.assertEqual(checks.share("db", "000 L169", 99, 1.03).measured, "103 %")
        self.assertFalse(checks.share("db", "000 L169", 66, 1.03).ok)  # 51-81 %: the top is above it

    def test_a_cpu_share_holds_within_fifteen_points(self):
        self.assertTrue(checks.share("db", "000 L120", 99, 0.86).ok)
        self.assertFalse(checks.share("db", "000 L120", 99, 0.83).ok)
        self.assertTrue(checks.share("web", "000 L120", 33, 0.47).ok)
        self.assertFalse(checks.share("web", "000 L120", 33, 0.49).ok)
        self.assertFalse(checks.share("web", "000 L120", 33, 0.17).ok)
        self.assertFalse(checks.share("web", "000 L120", 33, None).ok)

    def test_value_direction_and_tier(self):
        self.assertTrue(checks.value("tps", "001 L47", "1,800 range", 1850, 1800, 1899).ok)
        self.assertFalse(checks.value("tps", "001 L47", "1,800 range", 1700, 1800, 1899).ok)
        self.assertTrue(checks.direction("fix", "000 L160", "17 -> 19", 17, 19).ok)
        self.assertFalse(checks.direction("fix", "000 L160", "17 -> 19", 19, 17).ok)
        self.assertTrue(checks.direction("p99", "000 L160", "628 -> 300 ms", 628, 300, better="lower").ok)
        self.assertFalse(checks.direction("fix", "000 L160", "17 -> 19", None, 17).ok)
        self.assertTrue(checks.tier("tier", "000 L120", "db", ["db", "db"]).ok)
        self.assertFalse(checks.tier("tier", "000 L120", "db", ["db", "web"]).ok)
        self.assertFalse(checks.tier("tier", "000 L120", "db", ["db", "disturbed"]).ok)
        self.assertFalse(checks.tier("tier", "000 L120", "db", []).ok)

    def test_every_check_cites_a_line(self):
        with self.assertRaises(ValueError):
            checks.ratio("r", "", 1.8, 1.8)

    def test_the_rows_a_cite_names(self):
        self.assertEqual(checks.lines("000 L168, L180"), {("000", "L168"), ("000", "L180")})
        self.assertEqual(checks.lines("000 L168-L170"), {("000", "L168"), ("000", "L169"), ("000", "L170")})
        self.assertEqual(checks.lines("002 L37, L41; 001 L47"), {("002", "L37"), ("002", "L41"), ("001", "L47")})

    def test_the_load_tool_not_limiting(self):
        self.assertTrue(checks.not_limited_by_load("l", "000 L9", ["db", "web", "none", "below limits"]).ok)
        for verdicts in (["db", "load"], ["db", "disturbed"], ["db", None], ["db", ""], []):
            self.assertFalse(checks.not_limited_by_load("l", "000 L9", verdicts).ok, verdicts)
        self.assertEqual(checks.not_limited_by_load("l", "000 L9", ["db"]).part, "bottleneck")


class Declared(unittest.TestCase):
    def test_a_table_row_calls_its_constructor_with_the_measured_value_in_place(self):
        rows = ((checks.ratio, "r", "001 L47", 1.8, checks.Key("x")),
                (checks.direction, "d", "001 L48", "1 -> 2", checks.Key("before"), checks.Key("x")))
        out = checks.declared(rows, {"x": 2.0, "before": 3.0})
        self.assertEqual([(c.what, c.cite, c.measured, c.ok) for c in out],
                         [("r", "001 L47", "2.00x", True), ("d", "001 L48", "3 -> 2", False)])
        with self.assertRaises(KeyError):  # a Key nothing measured is an error, not a silent None
            checks.declared(rows, {"x": 2.0})

    def test_a_quotient_is_a_ratio_of_two_figures(self):
        c = checks.quotient("q", "000 L181, L186", (63, 55), 1.2)
        self.assertEqual((c.writeup, c.band, c.ok), ("63 / 55 = 1.15x", "0.76x-1.72x", True))
        self.assertFalse(checks.quotient("q", "000 L181, L186", (63, 55), 1.8).ok)

    def test_a_latency_in_seconds_holds_a_measure_in_ms_within_the_ratio_band(self):
        c = checks.latency("mean", "003 L28", 7.156, 7000.0)
        self.assertEqual((c.writeup, c.band, c.measured, c.ok), ("7.16 s", "4771-10734 ms", "7000 ms", True))
        self.assertFalse(checks.latency("mean", "003 L28", 7.156, 4700.0).ok)
        self.assertFalse(checks.latency("mean", "003 L28", 7.156, None).ok)


class Verdicts(unittest.TestCase):
    def cs(self, *oks):
        """Profile figures, one a given ok, and a set one."""
        out = [checks.ratio("figure %d" % i, "001 L47", 2.0, 2.0 if ok else 9.0) for i, ok in enumerate(oks)]
        out.append(checks.set_by("cost per request", "000 L80", "47.6 ms", "--app-cpu-us 47600"))
        return out

    def fix(self, ok):
        return checks.ratio("fix", "000 L169, L181", 1.72, 1.7 if ok else 1.0, part="bottleneck")

    def test_the_parts_by_role(self):
        self.assertEqual(checks.ratio("r", "001 L47", 2.0, 2.0).part, "profile")
        self.assertEqual(checks.direction("d", "000 L160", "17 -> 19", 17, 19).part, "bottleneck")
        self.assertEqual(checks.tier("t", "000 L120", "db", ["db"]).part, "bottleneck")
        self.assertIsNone(checks.set_by("s", "000 L80", "47.6 ms", "--app-cpu-us").part)
        with self.assertRaises(ValueError):
            checks.ratio("r", "001 L47", 2.0, 2.0, part="tier")

    def test_reproduced_when_the_bottleneck_holds_and_two_thirds_of_the_profile(self):
        word, line = checks.verdict(self.cs(True, True, False) + [self.fix(True)])
        self.assertEqual(word, "reproduced")
        self.assertIn("bottleneck 1 of 1, profile 2 of 3", line)  # the set figure is not counted
        self.assertIn("missed: figure 2 [profile] (write-up 2.00x, measured 9.00x)", line)
        self.assertEqual(checks.exit_code(word), 0)
        self.assertEqual(checks.verdict(self.cs(True, True))[0], "reproduced")  # no bottleneck check to miss

    def test_partly_names_each_miss_with_its_value(self):
        word, line = checks.verdict(self.cs(True, False, False) + [self.fix(True)])
        self.assertEqual(word, "partly reproduced")
        self.assertIn("bottleneck 1 of 1, profile 1 of 3", line)
        self.assertIn("figure 1 [profile] (write-up 2.00x, measured 9.00x)", line)
        self.assertIn("figure 2 [profile]", line)
        self.assertEqual(checks.exit_code(word), 1)

    def test_a_bottleneck_miss_is_not_reproduced_whatever_the_profile(self):
        word, line = checks.verdict(self.cs(True, True) + [self.fix(False)])
        self.assertEqual(word, "not reproduced")
        self.assertIn("fix [bottleneck] (write-up 1.72x, measured 1.00x)", line)
        cs = self.cs(True, True) + [checks.tier("tier", "000 L120", "db", ["web"])]
        self.assertEqual(checks.verdict(cs)[0], "not reproduced")
        cs = self.cs(True) + [checks.direction("fix", "000 L160", "17 -> 19", 19, 17)]
        self.assertEqual(checks.verdict(cs)[0], "not reproduced")
        self.assertEqual(checks.exit_code("not reproduced"), 1)

    def test_set_figures_alone_are_illustrated(self):
        word, line = checks.verdict([checks.set_by("x", "000 L80", "47.6 ms", "--app-cpu-us")])
        self.assertEqual(word, "illustrated")
        self.assertIn("shown, not reproduced", line)
        self.assertEqual(checks.exit_code(word), 1)

    def test_full_speed_judges_the_bottleneck_alone(self):
        word, line = checks.verdict(self.cs(False, False) + [self.fix(True)], full_speed=True)
        self.assertEqual(word, "reproduced")
        self.assertIn("profile not judged (full speed)", line)
        self.assertEqual(checks.verdict(self.cs(True) + [self.fix(False)], full_speed=True)[0], "not reproduced")
        self.assertEqual(checks.verdict(self.cs(True, True), full_speed=True)[0], "illustrated")

    def test_a_busy_machine_is_said_at_the_end(self):
        word, line = checks.verdict(self.cs(True), warning="the load average before the run was 3.2")
        self.assertEqual(word, "reproduced")
        self.assertTrue(line.endswith("; WARNING: the load average before the run was 3.2"), line)

    def test_the_table_shows_set_and_failed(self):
        text = checks.table(self.cs(True, False))
        self.assertRegex(text, r"\| +set \|")
        self.assertRegex(text, r"\| +\*\*no\*\* \|")
        self.assertRegex(text, r"\| +001 L47 \|")


if __name__ == "__main__":
    unittest.main()
