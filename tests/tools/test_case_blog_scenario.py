"""loadscripts/sutlab_lab/cases/blog_scenario.py: every stage's rows but the 8-user anchors predicted
by the scenario's model (blog000.py) at the scale of its largest stage, each stage's ratio, the
tiers the write-up names and the route its APM named, on tables shaped as its run() gives them
({stage: rows}): the write-up's figures in the model give "reproduced"; each counted check fails
alone in a run of its own."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, model, row  # noqa: E402,I100
from sutlab_lab.cases import blog_scenario as bs, checks  # noqa: E402

S = 1.4 / 12
ROUTES = [("/api/articles", 0.8), ("/api/profiles/:username", 0.1)]
ORDER = ["baseline", "count removed", "name index", "two web", "db x4"]


def figures():
    out = {}
    for (stage, users), w in bs.ROWS.items():
        web = sum(w["web"]) / 200.0 if isinstance(w["web"], tuple) else w["web"] / 100.0
        out[(stage, users)] = dict(rps=w["rps"] * S, mean_ms=w["ms"] / S, db=w["db"] / 100.0, web=web, load=0.1,
                                   verdict="db")
    out[("db x2", 32)] = dict(rps=40 * S, mean_ms=500 / S, db=1.0, web=0.3, load=0.1, verdict="db")
    return out


def runs(f):
    out = {}
    for (stage, users), v in sorted(f.items(), key=lambda kv: kv[0][1]):
        out.setdefault(stage, []).append(row(users, capacity={"web": 0.47, "db": 0.23}, **v))
    return out


def made(change=None, routes=ROUTES):
    f = figures()
    if change:
        change(f)
    return bs.checks(runs(f), routes, model(bs, S))


def setter(key, field, value):
    return lambda f: f[key].__setitem__(field, value)


def from_stage(stage, k):
    """Every row of `stage` and the stages after it (in the STEPS chain) k times faster: only the
    ratio into `stage` moves."""
    def change(f):
        for key in f:
            if key[0] in ORDER[ORDER.index(stage):] or (key[0] == "db x2" and ORDER.index(stage) <= 3):
                f[key]["rps"] *= k
    return change


def matching_checks():
    return made()


def alone_checks():
    out = {}
    for key, w in bs.ROWS.items():
        if key[1] == 8:
            continue
        what = "%s, %d users: " % key
        out[what + "mean latency"] = made(setter(key, "mean_ms", 10 * w["ms"] / S))
        out[what + "db CPU of its budget"] = made(setter(key, "db", 0.2 if w["db"] > 50 else 0.9))
        out[what + "web CPU of its budget"] = made(setter(key, "web", 0.99 if key[0] != "count removed" else 0.1))
    for a, z in bs.STEPS:
        out["%s %d -> %s %d: req/s" % (a + z)] = made(from_stage(z[0], 2.0 if z[0] != "two web" else 0.5))
    out["count removed 32 -> name index 32: req/s up"] = made(from_stage("name index", 0.8))  # 0.92x: in its band, a fall
    for key, _ in bs.TIERS:
        out["%s, %d users: the tier that limits" % key] = made(setter(key, "verdict", "web"))
    out["baseline 32: the route with the most server time"] = made(routes=[("/api/profiles/:username", 0.6)])
    out["every step: not the load tool"] = made(setter(("baseline", 8), "verdict", "load"))
    return out


class BlogScenario(unittest.TestCase):
    def test_the_write_ups_figures_in_the_model_are_reproduced(self):
        cs = matching_checks()
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())

    def test_two_web_servers_falling_is_the_write_ups_figure(self):
        cs = {c.what: c for c in matching_checks()}
        self.assertEqual(cs["name index 32 -> two web 32: req/s"].band, "0.36x-0.81x")  # 34 / 63 = 0.54x
        self.assertEqual(cs["two web, 32 users: db CPU of its budget"].band, "85-100 %")
        self.assertEqual(cs["db x4, 64 users: mean latency"].cite, "000 L227")


if __name__ == "__main__":
    unittest.main()
