"""loadscripts/sutlab_lab/cases/delivery_scaleout.py: 001's steps predicted by the write-up's scale
model (delivery001.py, fitted on step 4, 001 L79), on tables shaped as its run() gives them
({stage: rows}): the write-up's figures in the model give "reproduced"; each counted check fails
alone in a run of its own; step 4's row is the anchor, shown and not judged."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, model, row  # noqa: E402,I100
from sutlab_lab.cases import checks, delivery_scaleout as ds  # noqa: E402

S = ds.S
TPS = {0: 1800, 1: 1000, 2: 4152, 3: 6500, 4: 6700, 5: 6600}
VERDICT = {0: "web", 1: "db", 2: "load", 3: "web", 4: "web", 5: "web"}
# (stage, tier): the share a matching run reads; every other tier at 0.3
CPU = {(2, "load"): 0.95, (2, "lb"): 0.63, (2, "web"): 0.575, (4, "web"): 0.8, (4, "lb"): 0.58, (5, "web"): 0.87}


def runs(m=None, cpu=None, verdict=None, errors="read timeout:300"):
    m, cpu, verdict = m or {}, {**CPU, **(cpu or {})}, {**VERDICT, **(verdict or {})}
    out = {}
    for i, (label, _, _, vcpus, users) in enumerate(ds.STAGES):
        for u in users:
            tps = TPS[i] * S * m.get(i, 1.0)
            r = row(u, tps, 1000.0 * u / tps, 0.1, 0.3, 0.3, verdict[i] if u == users[-1] or i else "web",
                    capacity={t: v * S for t, v in vcpus.items() if v})
            for t in ("web", "lb", "load"):
                share = cpu.get((i, t), 0.3)
                r["cpu_%s_pct" % t] = share * 100 * (vcpus.get(t) or 1) * S
                r["capacity_%s" % t] = (vcpus.get(t) or 1) * S
            r["errors"] = errors if (i, u) == (0, 3000) else "0"
            out.setdefault(label, []).append(r)
    return out


def made(**kw):
    return ds.checks(runs(**kw), model(ds, S))


def matching_checks():
    return made()


def alone_checks():
    return {
        "1 server, cache, 1000 users: TPS": made(m={0: 1.6, 1: 1.45, 2: 1.45}),
        "1 server, no cache, 1000 users: TPS": made(m={0: 0.7, 1: 0.6}),
        "nginx + 2 servers, 1000 users: TPS": made(m={0: 1.45, 1: 1.45, 2: 1.6, 3: 1.45}),
        "nginx doubled, 1000 users: TPS": made(m={4: 1.6}),
        "3,000 users, 3000 users: TPS": made(m={5: 1.6}),
        "nginx + 2 servers, 1000 users: load CPU": made(cpu={(2, "load"): 0.5}),
        "nginx + 2 servers, 1000 users: lb CPU": made(cpu={(2, "lb"): 0.2}),
        "nginx + 2 servers, 1000 users: web CPU": made(cpu={(2, "web"): 0.95}),
        "nginx doubled, 1000 users: web CPU": made(cpu={(4, "web"): 0.3}),
        "nginx doubled, 1000 users: lb CPU": made(cpu={(4, "lb"): 0.95}),
        "3,000 users, 3000 users: web CPU": made(cpu={(5, "web"): 0.3}),
        "1 server: errors a request, 1,000 -> 3,000 users": made(errors="0"),
        "the cache: TPS, with / without": made(m={0: 1.4, 1: 0.7}),
        "1 server, 3,000 users: the tier that limits": made(verdict={0: "lb"}),
        "nginx + 2 servers / 1: TPS": made(m={0: 0.7, 1: 0.7, 2: 1.4, 3: 1.4}),
        "nginx + 2 servers: the tier that limits": made(verdict={2: "web"}),
        "the load tool doubled: TPS": made(m={3: 0.6}),
        "3,000 users: the tier that limits": made(verdict={5: "db"}),
        "but where nGrinder limited (L65): not the load tool": made(verdict={4: "load"}),
    }


class DeliveryScaleout(unittest.TestCase):
    def test_the_write_ups_figures_in_the_model_are_reproduced(self):
        cs = matching_checks()
        self.assertEqual(checks.verdict(cs)[0], "reproduced", [(c.what, c.measured, c.band) for c in cs if not c.ok])

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())

    def test_the_anchor_is_shown_not_judged(self):
        cs = {c.what: c for c in matching_checks()}
        self.assertIsNone(cs["load tool doubled, 1000 users: TPS, CPU"].ok)
        self.assertNotIn("load tool doubled, 1000 users: TPS", cs)


if __name__ == "__main__":
    unittest.main()
