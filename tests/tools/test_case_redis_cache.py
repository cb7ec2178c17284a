"""loadscripts/sutlab_lab/cases/redis_cache.py: 001's first step predicted by the write-up's scale
model (delivery001.py, fitted on 001 L79), on tables shaped as its run() gives them ({"Redis": rows,
"PostgreSQL": rows}): the write-up's figures in the model give "reproduced"; each counted check
fails alone in a run of its own; the "1,800 range" is a figure in the default band, not a range the
lab read into the word."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, model, row  # noqa: E402,I100
from sutlab_lab.cases import checks, redis_cache as rc  # noqa: E402

S = rc.S


def runs(redis=1800, db=1000, errors=("0", "read timeout:400"), verdicts=("web", "web", "db")):
    cache = [dict(row(1000, redis * S, 1000 / (redis * S) * 1000, 0.1, 0.9, 0.3, verdicts[0]), errors=errors[0]),
             dict(row(3000, redis * S, 3000 / (redis * S) * 1000, 0.1, 0.99, 0.3, verdicts[1]), errors=errors[1])]
    return {"Redis": cache, "PostgreSQL": [dict(row(1000, db * S, 1000 / (db * S) * 1000, 0.9, 0.5, 0.2, verdicts[2]))]}


def made(**kw):
    return rc.checks(runs(**kw), model(rc, S))


def matching_checks():
    return made()


def alone_checks():
    return {"from Redis, 1,000 users: TPS": made(redis=1800 * 1.6, db=1000 * 1.45),     # the ratio in its band
            "from the database, 1,000 users: TPS": made(redis=1800 * 0.7, db=1000 * 0.65),
            "errors a request, 1,000 -> 3,000 users": made(errors=("0", "0")),
            "Redis / database: TPS": made(redis=1800 * 1.4, db=1000 * 0.7),
            "3,000 users: the tier that limits": made(verdicts=("web", "lb", "db")),
            "every step: not the load tool": made(verdicts=("web", "web", "load"))}


class RedisCache(unittest.TestCase):
    def test_the_write_ups_figures_in_the_model_are_reproduced(self):
        cs = matching_checks()
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())

    def test_the_range_words_are_figures_in_the_default_band(self):
        cs = {c.what: c for c in matching_checks()}
        self.assertEqual(cs["Redis / database: TPS"].band, "1.20x-2.70x")   # 1,800 / 1,000 = 1.8x, x/÷ 1.5
        self.assertEqual(cs["from Redis, 1,000 users: TPS"].band, "144-324 req/s")  # 1,800 x 0.12, x/÷ 1.5


if __name__ == "__main__":
    unittest.main()
