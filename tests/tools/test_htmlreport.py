"""report.html's Markdown (loadscripts/sutlab_lab/htmlreport.py, through python3-markdown): a list
written right under a line of text, as the cases' texts and case.md write them, is a list."""

import re
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import htmlreport  # noqa: E402,I100
from sutlab_lab.cases import CASES  # noqa: E402


def items(html):
    return re.findall(r"<li>(.*?)</li>", str(html), re.S)


class Lists(unittest.TestCase):
    def test_a_list_under_a_line_of_text(self):
        html = str(htmlreport.to_html("Chosen here, not published by the write-up:\n- the load: wrk;\n- the size: "
                                      "`small`,\n  10,000 articles.\n\nverdict: reproduced"))
        self.assertIn("<p>Chosen here, not published by the write-up:</p>", html)
        self.assertEqual(items(html), ["the load: wrk;", "the size: <code>small</code>,\n  10,000 articles."])
        self.assertIn("<p>verdict: reproduced</p>", html)

    def test_an_ordered_list_and_one_after_a_blank_line(self):
        self.assertEqual(items(htmlreport.to_html("Steps:\n1. up\n2. flip")), ["up", "flip"])
        self.assertEqual(items(htmlreport.to_html("Steps:\n\n- up\n- flip")), ["up", "flip"])

    def test_text_that_is_no_list_is_left_as_it_is(self):
        self.assertEqual(htmlreport.lists_apart("a - b\n-1 c\n2. d\n    - code"), "a - b\n-1 c\n2. d\n    - code")
        # a list's own lines stay together: no blank line between items (a loose list of <p>s)
        self.assertEqual(htmlreport.lists_apart("x:\n- a\n  more of a\n- b"), "x:\n\n- a\n  more of a\n- b")

    def test_every_cases_lists_render_as_lists(self):
        """Each case's texts as case.md has them (a line of text, then the text): every line that
        starts an item is an item of the page."""
        for name, case in sorted(CASES.items()):
            for heading, text in (("## The write-up", case.WRITEUP),
                                  ("Chosen here, not published by the write-up:", case.INVENTED)):
                starts = [ln for ln in text.split("\n") if re.match(r"- ", ln)]
                with self.subTest(case=name, heading=heading):
                    self.assertEqual(len(items(htmlreport.to_html(heading + "\n" + text))), len(starts))


if __name__ == "__main__":
    unittest.main()
