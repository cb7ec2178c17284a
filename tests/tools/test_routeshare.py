"""Where the time went, per route (sutlab_lab/routeshare.py): two hand-written /metrics scrapes,
the shares computed here by hand."""

import os
import tempfile
import unittest

from toolstest import ROOT  # noqa: F401  first: it puts loadscripts/ on the path
from sutlab_lab import routeshare  # noqa: I100
from sutlab_lab.services import metrics

HEAD = """\
# HELP http_request_duration_seconds Time from routing a request to the end of its response.
# TYPE http_request_duration_seconds histogram
"""
DB_HEAD = """\
# HELP http_request_db_seconds_total Time requests waited on PostgreSQL (Server-Timing's db), by route template.
# TYPE http_request_db_seconds_total counter
"""
INFO = """\
# HELP sutlab_build_info Version and the flags in force (always 1).
# TYPE sutlab_build_info gauge
sutlab_build_info{version="t",flags="--count-pagination=on"} 1
"""


def histogram(route, count, total):
    return ('http_request_duration_seconds_bucket{route="%s",le="+Inf"} %d\n'
            'http_request_duration_seconds_sum{route="%s"} %s\n'
            'http_request_duration_seconds_count{route="%s"} %d\n' % (route, count, route, total, route, count))


def scrape(series, db):
    text = HEAD + "".join(histogram(*s) for s in series)
    text += DB_HEAD + "".join('http_request_db_seconds_total{route="%s"} %s\n' % d for d in db)
    return text + INFO


BEFORE = scrape([("/api/articles", 100, 1.0), ("/api/profiles/:username", 50, 0.5), ("/metrics", 3, 0.01)],
                [("/api/articles", 0.8), ("/api/profiles/:username", 0.1)])
# over the stage: articles 400 requests, 9.0 s, db 7.2 s; profiles 200, 1.5 s, db 0.6 s;
# comments new: 100 requests, 0.5 s, db 0.2 s; /metrics grows too and is left out
AFTER = scrape([("/api/articles", 500, 10.0), ("/api/profiles/:username", 250, 2.0),
                ("/api/articles/:slug/comments", 100, 0.5), ("/metrics", 5, 0.02), ("unmatched", 4, 0.001)],
               [("/api/articles", 8.0), ("/api/profiles/:username", 0.7), ("/api/articles/:slug/comments", 0.2)])


class Shares(unittest.TestCase):
    def test_by_hand(self):
        rows = routeshare.shares(BEFORE, AFTER)
        self.assertEqual([r["route"] for r in rows],
                         ["/api/articles", "/api/profiles/:username", "/api/articles/:slug/comments"])
        a, p, c = rows
        # server: 9.0 + 1.5 + 0.5 = 11.0 s; db: 7.2 + 0.6 + 0.2 = 8.0 s
        self.assertEqual(a["requests"], 400)
        self.assertAlmostEqual(a["server_share"], 9.0 / 11.0)
        self.assertAlmostEqual(a["db_share"], 7.2 / 8.0)
        self.assertAlmostEqual(p["server_share"], 1.5 / 11.0)
        self.assertAlmostEqual(p["db_share"], 0.6 / 8.0)
        self.assertAlmostEqual(c["db_share"], 0.2 / 8.0)
        self.assertAlmostEqual(a["mean_ms"], 9000.0 / 400)
        self.assertAlmostEqual(a["db_ms"], 7200.0 / 400)
        self.assertAlmostEqual(c["mean_ms"], 5.0)

    def test_parsed_scrapes_too_and_the_table(self):
        rows = routeshare.shares(metrics.parse_metrics(BEFORE), metrics.parse_metrics(AFTER))
        text = routeshare.markdown(rows)
        lines = text.splitlines()
        self.assertEqual(len(lines), 2 + 3)
        self.assertIn("/api/articles ", lines[2])
        self.assertIn("81.8", lines[2])   # 9.0 / 11.0 = 81.8 %
        self.assertIn("90.0", lines[2])   # 7.2 / 8.0 = 90.0 %
        self.assertNotIn("/metrics", text)

    def test_levels_in_one_table(self):
        rows = routeshare.shares(BEFORE, AFTER)
        lines = routeshare.markdown_levels([(8, rows), (32, rows[:1])]).splitlines()
        self.assertEqual(len(lines), 2 + 3 + 1)
        self.assertTrue(lines[0].startswith("| level | route"), lines[0])
        self.assertTrue(lines[2].startswith("| 8 "), lines[2])
        self.assertTrue(lines[5].startswith("| 32 "), lines[5])
        self.assertIn("/api/articles ", lines[5])

    def test_csv_and_back(self):
        rows = routeshare.shares(BEFORE, AFTER)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "routes.csv")
            routeshare.write_csv([(8.0, rows), (32.0, rows[1:])], path)
            back = routeshare.read_csv(path)
            self.assertEqual(routeshare.read_csv(os.path.join(d, "absent.csv")), {})
        self.assertEqual(sorted(back), [8.0, 32.0])
        self.assertEqual([r for r, _ in back[8.0]],
                         ["/api/articles", "/api/profiles/:username", "/api/articles/:slug/comments"])
        self.assertAlmostEqual(back[8.0][0][1], 9.0 / 11.0)
        self.assertEqual(back[32.0][0][0], "/api/profiles/:username")

    def test_no_database_no_share(self):
        rows = routeshare.shares(scrape([("/a", 1, 1.0), ("/b", 1, 1.0)], []),
                                 scrape([("/a", 3, 2.0), ("/b", 2, 4.0)], []))
        self.assertEqual([r["route"] for r in rows], ["/b", "/a"])
        self.assertIsNone(rows[0]["db_share"])
        self.assertAlmostEqual(rows[0]["server_share"], 3.0 / 4.0)

    def test_a_restart_is_refused(self):
        self.assertRaises(ValueError, routeshare.shares, AFTER, BEFORE)

    def test_sutlab_or_not(self):
        self.assertTrue(routeshare.is_sutlab(AFTER))
        self.assertFalse(routeshare.is_sutlab(HEAD + histogram("/a", 1, 1.0)))
        self.assertFalse(routeshare.is_sutlab(None))


if __name__ == "__main__":
    unittest.main()
