"""The blog scenario's think time, derived from the write-up's scenario rows (write-up 000): each
row's users / rps - latency computed here by hand from 000's figures, against blog_think.py."""

import importlib.util
import os
import unittest

from toolstest import ROOT  # first: it puts loadscripts/ on the path

# loadscripts/locust is no package: the file is loaded by its path (no sys.path edit)
_SPEC = importlib.util.spec_from_file_location("blog_think", os.path.join(ROOT, "loadscripts", "locust",
                                                                          "blog_think.py"))
blog_think = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(blog_think)

# users / rps - ms / 1000, each row of the write-up (000 line: users, rps, ms), by hand
BY_HAND = {
    "L168": 8 / 17 - 0.098,     # 0.470588 - 0.098 = 0.372588
    "L169": 32 / 32 - 0.628,    # 1.0 - 0.628 = 0.372
    "L180": 8 / 19 - 0.063,     # 0.421053 - 0.063 = 0.358053
    "L181": 32 / 55 - 0.200,    # 0.581818 - 0.2 = 0.381818
    "L186": 32 / 63 - 0.144,    # 0.507937 - 0.144 = 0.363937
    "L221": 32 / 34 - 0.507,    # 0.941176 - 0.507 = 0.434176
    "L227": 64 / 120 - 0.165,   # 0.533333 - 0.165 = 0.368333
}


class Derived(unittest.TestCase):
    def test_each_row(self):
        got = {line: z for line, _, z in blog_think.per_row()}
        self.assertEqual(set(got), set(BY_HAND))
        for line, z in BY_HAND.items():
            self.assertAlmostEqual(got[line], z, places=9, msg=line)

    def test_the_rows_are_the_writeups(self):
        rows = {r[0]: r[2:] for r in blog_think.SCENARIO_ROWS}
        self.assertEqual(rows["L169"], (32, 32, 628))
        self.assertEqual(rows["L186"], (32, 63, 144))
        self.assertEqual(rows["L227"], (64, 120, 165))

    def test_the_think_time_is_the_median(self):
        # sorted: 0.358053 0.363937 0.368333 0.372 0.372588 0.381818 0.434176 -> the 4th, L169's
        self.assertAlmostEqual(blog_think.derived_think_time(), 0.372, places=9)
        self.assertEqual(blog_think.THINK_S, 0.372)
        # every row within the 0.36-0.43 s 000 D-L reads (rounded to 10 ms)
        for line, z in BY_HAND.items():
            self.assertTrue(0.355 <= z <= 0.435, line)

    def test_single_endpoint_rows_leave_no_wait(self):
        # step 9's table (000 L109-L116): 8 users, 230 rps, 36 ms -> 8/230 - 0.036 = -0.0012 s
        self.assertAlmostEqual(blog_think.wait_per_request(8, 230, 36), 8 / 230 - 0.036, places=12)
        self.assertLess(abs(blog_think.wait_per_request(8, 230, 36)), 0.01)
        self.assertRaises(ValueError, blog_think.wait_per_request, 8, 0, 36)


if __name__ == "__main__":
    unittest.main()
