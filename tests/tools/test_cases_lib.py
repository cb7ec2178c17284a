"""loadscripts/lib/cases: each case's checks against the write-up's figures, on rows shaped as
steps.csv gives them; the index list read from `sutlab db indexes status`; the verdict line."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/lib on the path
from lib.cases import (CASES, PLANNED, checks, common, keepalive, missing_index, spray,  # noqa: E402,I100
                       tps_trend)


def rows(*pairs, **extra):
    return [dict({"level": float(level), "rps": float(rps)}, **extra) for level, rps in pairs]


class Checks(unittest.TestCase):
    def test_every_case_has_its_texts(self):
        for name, case in CASES.items():
            self.assertEqual(case.NAME, name)
            for text in (case.TITLE, case.WRITEUP, case.INVENTED):
                self.assertTrue(text.strip(), name)
        self.assertFalse(set(CASES) & set(PLANNED))

    def test_tps_trend(self):
        off = rows((1, 55), (2, 109), (10, 524), (100, 3690), busy_web=0.2, verdict="load")
        on = rows((1, 53), (2, 105), (10, 120), (100, 119), busy_web=0.03, verdict="load")
        c = {x.what: x for x in tps_trend.checks(off, on)}
        self.assertTrue(all(x.ok for x in c.values()), [(x.what, x.measured) for x in c.values()])
        self.assertIn("(31x)", c["printing off / on, req/s"].measured)
        # the server busy while printing, or the client not the limit: not reproduced
        on[3]["busy_web"] = 0.9
        on[2]["verdict"] = "web"
        bad = [x for x in tps_trend.checks(off, on) if not x.ok]
        self.assertEqual(len(bad), 2)
        self.assertTrue(checks.verdict(bad)[1].startswith("verdict: "))

    def test_spray(self):
        r = {(None, "inline"): {"success": 0.005, "p99_ms": 30000.0}, (None, "pool 50"): {"success": 0.317},
             (None, "offload"): {"success": 1.0}, ("nginx", "inline"): {"success": 0.005, "errors": "504:2728 timeout:257"}}
        self.assertTrue(all(x.ok for x in spray.checks(r, 30)))
        r[("nginx", "inline")]["errors"] = "timeout:2985"  # no 5xx from the proxy
        r[(None, "pool 50")]["success"] = 0.9               # a pool too big for the write-up's 31 %
        self.assertEqual(sorted(x.what for x in spray.checks(r, 30) if not x.ok),
                         ["Future: success", "blocking behind a proxy: the proxy's 5xx"])

    def test_ratio_cases(self):
        ok = keepalive.checks({"keep-alive": rows((16, 60000)), "close": rows((16, 16000))})
        self.assertTrue(ok[0].ok)
        self.assertFalse(keepalive.checks({"keep-alive": rows((16, 60000)), "close": rows((16, 59000))})[0].ok)


class IndexStatus(unittest.TestCase):
    def test_the_blog_tables_indexes_only(self):
        status = ("on   idx_article_tags_tag_id: CREATE INDEX idx_article_tags_tag_id ON public.article_tags USING btree (tag_id)\n"
                  "     used by GET /api/articles?tag= [board_articles_by_tag]\n"
                  "off  idx_comments_article_id: CREATE INDEX idx_comments_article_id ON public.comments USING btree (article_id, id)\n"
                  "on   idx_menus_store_id: CREATE INDEX idx_menus_store_id ON public.menus USING btree (store_id, id)\n"
                  "10 present, 0 dropped\n")
        self.assertEqual(missing_index.board_indexes(status), ["idx_article_tags_tag_id", "idx_comments_article_id"])


class Cells(unittest.TestCase):
    def test_cells(self):
        r = {"level": 8.0, "rps": 1234.5, "p99_ms": 3.21, "busy_web": 0.456, "verdict": "web", "errors": "0"}
        self.assertEqual(common.cells("x", r, ("rps", "p99_ms", "busy_web", "verdict", "errors", "busy_db")),
                         ["x", "8", "1234", "3.2", "46", "web", "0", "n/a"])


if __name__ == "__main__":
    unittest.main()
