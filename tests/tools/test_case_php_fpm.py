"""loadscripts/sutlab_lab/cases/php_fpm.py: its scale model's fits (each PHP variant's CPU a request
on its first row, show_articles' costs on L123) and its checks on every other row, on tables
shaped as its run() gives them ({stage: rows}): the write-up's figures in the model give
"reproduced"; each counted check fails alone in a run of its own; a row changed moves its fit."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, model, row  # noqa: E402,I100
from sutlab_lab.cases import calibrate, checks, php_fpm as pf  # noqa: E402

S = pf.S
TIER_WEB = ("4 children", "show_articles, 32")


def figures():
    return {(name, level): dict(rps=rps * S, mean_ms=1000.0 * level / (rps * S), web=web / 100.0,
                                db=(db or 5) / 100.0, load=0.1, verdict="web" if name in TIER_WEB else "db")
            for name, (*_, rows) in pf.STAGES.items() for level, (_, rps, web, db) in rows.items()}


def made(change=None):
    f = figures()
    if change:
        change(f)
    runs = {}
    for (name, level), v in sorted(f.items(), key=lambda kv: kv[0][1]):
        runs.setdefault(name, []).append(row(level, capacity={"web": 2 * S, "db": 2 * S}, **v))
    return pf.checks(runs, model(pf, S))


def setter(key, field, value):
    return lambda f: f[key].__setitem__(field, value)


def scaled(name, k):
    def change(f):
        for key in f:
            if key[0] == name:
                f[key]["rps"] *= k
    return change


# the rows a ratio reads (each stage's best, or the level itself), and the row on the ratio's other side
PARTNER = {("2 children", 8): ("4 children", 8), ("show_articles, 32", 32): ("show_articles, 2", 4),
           ("2 servers, ALB", 16): ("1 server, ALB", 8)}
PARTNER.update({v: k for k, v in PARTNER.items()})


def alone_rps(key, rps):
    """A row's req/s out of its band and nothing else: a row a ratio reads goes up just past its band
    with its partner up just inside its own, so the ratio stays in; any other row goes down (a
    stage's best stays where it was)."""
    if key not in PARTNER:
        return setter(key, "rps", 0.6 * rps * S)
    partner = PARTNER[key]
    return lambda f: [f[key].__setitem__("rps", f[key]["rps"] * 1.55),
                      f[partner].__setitem__("rps", f[partner]["rps"] * 1.45)]


def matching_checks():
    return made()


def alone_checks():
    out = {}
    for name, (*_, rows) in pf.STAGES.items():
        for level, (line, rps, web, db) in rows.items():
            if line in pf.ANCHORS:
                continue
            what = "%s, %d: " % (name, level)
            out[what + "req/s"] = made(alone_rps((name, level), rps))
            out[what + "web CPU"] = made(setter((name, level), "web", 0.2 if web > 50 else 0.9))
            if db is not None:
                out[what + "db CPU"] = made(setter((name, level), "db", 0.9))
    # the ratios: the run of the numerator stage faster at every level, but the row checked ...
    # each ratio reads a level the per-row checks read too: change another measure of it instead
    out["4 / 2 children, 8 clients: req/s"] = made(lambda f: [f[("4 children", 8)].__setitem__("rps", 21 * S * 1.4),
                                                              f[("2 children", 8)].__setitem__("rps", 21 * S * 0.7)])
    out["show_articles, 32 / 2 children (32 and 4 users): req/s"] = made(
        lambda f: [f[("show_articles, 32", 32)].__setitem__("rps", 130 * S * 1.49),
                   f[("show_articles, 2", 4)].__setitem__("rps", 63 * S * 0.7)])
    out["2 / 1 servers behind the ALB, the best req/s"] = made(
        lambda f: [f[("2 servers, ALB", 16)].__setitem__("rps", 425 * S * 0.7),
                   f[("1 server, ALB", 8)].__setitem__("rps", 220 * S * 1.45)])
    out["4 children: the tier that limits"] = made(setter(("4 children", 4), "verdict", "db"))
    out["show_articles, 32 children: the tier that limits"] = made(setter(("show_articles, 32", 32), "verdict", "db"))
    out["every step: not the load tool"] = made(setter(("OPcache", 2), "verdict", "load"))
    return out


class PhpFpm(unittest.TestCase):
    def test_the_write_ups_figures_in_the_model_are_reproduced(self):
        cs = matching_checks()
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())


class Fits(unittest.TestCase):
    def test_php_cpu_a_request(self):
        m = model(pf, S)
        fit = pf.FITS[0]
        self.assertEqual(fit.value(m), round(0.99 * 2 / 21 * 1e6))           # 94,286 us
        self.assertEqual(fit.with_figures(rps=42).value(m), round(0.99 * 2 / 42 * 1e6))

    def test_the_wait_a_statement(self):
        m = model(pf, S, own=calibrate.Own(100.0, 100.0, 2.0, {}, 100.0))
        fit = pf.FITS[5]
        wait = 35.0 - 0.36 * 2 / 55 * 1000 - 0.20 * 2 / 55 * 1000               # 14.6 ms beyond both tiers' CPU
        self.assertEqual(fit.value(m), round(wait / 2.0 / S))
        self.assertEqual(fit.with_figures(ms=45).value(m), round((wait + 10) / 2.0 / S))


if __name__ == "__main__":
    unittest.main()
