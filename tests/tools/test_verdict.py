"""The verdict rules of loadscripts/sutlab_lab/verdict.py on rows recorded from real steps (values as the
sampler reported them on this machine), one per conclusion the write-ups drew."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import stepped, verdict  # noqa: E402,I100


def row(level, rps, send_q=0, **busy):
    return {"level": level, "rps": rps, "send_q_max": send_q,
            "tiers": {t: {"busy": b} for t, b in busy.items()}}


class NetworkTier(unittest.TestCase):
    """steps' network tier (stepped.py): the link's bytes a second against its capacity, in its
    table, its CSV and its verdict, on fabricated samples."""

    def step(self, rx, tx, cap):
        return dict(row(100, 6000, web=0.3, load=0.5), net_iface="to-web", net_rx_Bps=rx, net_tx_Bps=tx,
                    net_capacity_Bps=cap)

    def test_the_writeups_share_of_its_link(self):
        # 004 L26: 1 Gbps (125 MB/s) used at 0.01 %, (1000/8) * 0.01 % = 12.5 KB/s; the busier
        # direction counts
        r = self.step(12.5e3, 2e3, 125e6)
        self.assertAlmostEqual(verdict.net_share(r), 0.0001)
        self.assertEqual(stepped._net_cell(r), "0.01 of 125.00 (0.01%)")
        self.assertEqual(stepped._net_cell(self.step(2e3, 30e6, 125e6)), "30.00 of 125.00 (24%)")
        self.assertEqual(verdict.verdict(r)[0], "below limits")

    def test_a_link_used_90_percent_is_the_network_tier(self):
        v, reason = verdict.verdict(self.step(112.5e6, 1e6, 125e6))
        self.assertEqual(v, "network")
        self.assertIn("90% of its 125.00 MB/s", reason)
        self.assertEqual(verdict.verdict(self.step(100e6, 1e6, 125e6))[0], "below limits")  # 80 %

    def test_loopback_has_no_capacity(self):
        r = self.step(24e6, 1e6, None)
        self.assertIsNone(verdict.net_share(r))
        self.assertEqual(stepped._net_cell(r), "24.00 (not capped)")

    def test_steps_csv_carries_the_share(self):
        import csv
        import os
        import tempfile
        rows = [self.step(12.5e3, 2e3, 125e6), self.step(24e6, 1e6, None)]
        for r in rows:
            r["tiers"] = {}
        path = os.path.join(tempfile.mkdtemp(prefix="sutlab-verdict-"), "steps.csv")
        stepped.write_csv(rows, [], path)
        with open(path, newline="") as f:
            got = [(r["net_rx_Bps"], r["net_capacity_Bps"], r["net_share"]) for r in csv.DictReader(f)]
        self.assertEqual(got, [("12500.0", "125000000.0", "0.0001"), ("24000000.0", "", "")])


class Rules(unittest.TestCase):
    def test_a_saturated_server_tier_wins(self):
        # /work/cpu?ms=5 inline, 2 workers: web at 98 %, ab at 31 %
        self.assertEqual(verdict.verdict(row(8, 395, web=0.98, db=0.0, load=0.31))[0], "web")
        # the database tier saturated while the web waits on it
        self.assertEqual(verdict.verdict(row(32, 900, web=0.40, db=0.93, load=0.2))[0], "db")
        # two saturated: the more saturated one
        self.assertEqual(verdict.verdict(row(32, 900, web=0.88, db=0.97, load=0.9))[0], "db")
        self.assertEqual(verdict.verdict(row(4, 60000, web=0.5, redis=0.9, load=0.4))[0], "redis")

    def test_network_when_the_capped_link_is_full(self):
        # the gzip case's 10 Mbit/s link (1.25 MB/s): full while every tier idles
        full = dict(row(8, 60, web=0.05, load=0.1), net_iface="to-web", net_capacity_Bps=1.25e6,
                    net_rx_Bps=1.21e6, net_tx_Bps=0.02e6)
        v, reason = verdict.verdict(full)
        self.assertEqual(v, "network")
        self.assertIn("97%", reason)
        # a saturated server tier still wins, and without a capacity nothing is said of the link
        self.assertEqual(verdict.verdict(dict(full, tiers={"web": {"busy": 0.95}}))[0], "web")
        self.assertNotEqual(verdict.verdict(dict(full, net_capacity_Bps=None))[0], "network")
        self.assertNotEqual(verdict.verdict(dict(full, net_rx_Bps=0.5e6))[0], "network")

    def test_load_when_only_the_client_is_saturated(self):
        # the 000 write-up: Locust at 90-100 %, the web at 10 %
        v, reason = verdict.verdict(row(50, 700, web=0.10, db=0.02, load=0.97))
        self.assertEqual(v, "load")
        self.assertIn("97%", reason)

    def test_client_not_reading(self):
        # the 004 write-up: the server idle, its Send-Q backed up
        v, _ = verdict.verdict(row(10, 150, send_q=3 * 1024 * 1024, web=0.05, load=0.3))
        self.assertEqual(v, "client not reading")
        # the same Send-Q with a busy web tier is not that
        self.assertNotEqual(verdict.verdict(row(10, 150, send_q=3 << 20, web=0.70, load=0.3))[0],
                            "client not reading")

    def test_many_sockets_each_holding_a_response_are_not_a_client_not_reading(self):
        # think time delays each ACK: 100 connections x 4 KiB unacknowledged is 400 KiB summed,
        # but no socket holds more than one response
        r = row(100, 4000, web=0.3, load=0.5)
        r["send_q"] = 400 * 1024
        r["send_q_max"] = 4 * 1024
        self.assertEqual(verdict.verdict(r)[0], "below limits")

    def test_none_when_an_open_model_step_is_mostly_unanswered(self):
        # the spray write-up: 100 arrivals/s on a blocked loop, nothing busy, 0.5 % answered
        r = row(100, 0.25, web=0.01, load=0.3)
        r["success"] = 0.005
        v, reason = verdict.verdict(r)
        self.assertEqual(v, "none")
        self.assertIn("0% of the arrivals", reason)
        r["success"] = 1.0
        self.assertEqual(verdict.verdict(r)[0], "below limits")

    def test_none_when_flat_and_nothing_saturated(self):
        # the 000 write-up: web 40 %, db 21 %, locust 16 %, rps flat as users grow
        rows = [row(2, 180, web=0.40, db=0.21, load=0.16), row(4, 185, web=0.41, db=0.22, load=0.2),
                row(8, 190, web=0.42, db=0.22, load=0.25)]
        self.assertEqual([v for v, _ in verdict.verdicts(rows)], ["below limits", "none", "none"])

    def test_below_limits_while_scaling(self):
        rows = [row(2, 1000, web=0.2, load=0.1), row(4, 1950, web=0.4, load=0.2)]
        self.assertEqual([v for v, _ in verdict.verdicts(rows)], ["below limits", "below limits"])

    def test_level_barely_grew_is_not_flat(self):
        rows = [row(10, 1000, web=0.5), row(12, 1020, web=0.5)]
        self.assertEqual(verdict.verdicts(rows)[1][0], "below limits")

    def test_failed_rows_and_missing_tiers(self):
        rows = [row(2, 100, web=0.2), {"level": 4, "failed": True, "error": "ab exited 1"}, row(8, 104, web=0.2)]
        got = verdict.verdicts(rows)
        self.assertEqual(got[1], ("failed", "ab exited 1"))
        self.assertEqual(got[2][0], "none")  # against the last row that ran
        self.assertEqual(verdict.verdict({"level": 1, "rps": 5})[0], "below limits")

    def test_thresholds_are_printed(self):
        text = "\n".join(verdict.RULES)
        self.assertIn("85%", text)
        self.assertIn("64 KiB", text)


def measured(level, rps, outside, **tiers):
    """A row as the sampler leaves it: per tier (own CPU, waits for a core) as shares of one core
    over a 3 s step, capacity 1; `outside` the cores used beside the tiers."""
    usage = {t: {"cpu_s": c * 3.0, "wait_s": w * 3.0, "writing_s": 0.0, "elapsed_s": 3.0, "capacity": 1,
                 "busy": min(1.0, c + w)} for t, (c, w) in tiers.items()}
    return {"level": level, "rps": rps, "send_q_max": 0, "tiers": usage, "outside_cores": outside}


class Disturbed(unittest.TestCase):
    """Work outside the tiers (a build beside the run) takes cores the tiers wait for (with
    one CPU-bound process beside it, test_steps once read `none` and `below limits` for `load`)."""

    def test_a_tier_saturated_on_its_own_cpu_keeps_its_name(self):
        v, reason = verdict.verdict(measured(8, 700, 1.0, web=(0.02, 0.0), load=(0.9, 0.08)))
        self.assertEqual(v, "load")
        self.assertIn("1.00 cores ran outside the tiers", reason)

    def test_the_only_tier_that_asked_for_cores_keeps_its_name(self):
        # wrk with its slow Lua beside a CPU hog: 79 % of a core, waiting the rest; sutlab idle
        v, reason = verdict.verdict(measured(2, 926, 1.05, web=(0.01, 0.0), load=(0.79, 0.2)))
        self.assertEqual(v, "load")
        self.assertIn("20% of it waiting for a core", reason)

    def test_waits_that_make_a_saturation_while_another_tier_is_busy_are_disturbed(self):
        row = measured(8, 900, 0.9, web=(0.6, 0.3), load=(0.55, 0.1))
        v, reason = verdict.verdict(row)
        self.assertEqual(v, "disturbed")
        self.assertIn("web at 90%", reason)
        self.assertIn("load above 50%", reason)
        row["outside_cores"] = 0.1  # the same tiers on a quiet machine: the web is the limit
        self.assertEqual(verdict.verdict(row)[0], "web")
        row["outside_cores"] = None  # a row from a sampler that did not measure it
        self.assertEqual(verdict.verdict(row)[0], "web")

    def test_flat_growth_with_a_slowed_tier_is_disturbed(self):
        rows = [measured(2, 700, 1.0, web=(0.1, 0.0), load=(0.2, 0.2)),
                measured(8, 730, 1.0, web=(0.1, 0.0), load=(0.2, 0.2))]
        got = verdict.verdicts(rows)
        self.assertEqual([v for v, _ in got], ["below limits", "disturbed"])
        self.assertIn("load waited for a core", got[1][1])
        # the same flatness with tiers that never waited: a concurrency limit, hog or not
        rows = [measured(2, 100, 1.0, web=(0.05, 0.01), load=(0.1, 0.02)),
                measured(8, 100, 1.0, web=(0.05, 0.01), load=(0.1, 0.02))]
        self.assertEqual([v for v, _ in verdict.verdicts(rows)], ["below limits", "none"])
        # slowed, but on a quiet machine: the waits are the tiers' own contention
        rows = [measured(2, 700, 0.05, web=(0.1, 0.0), load=(0.2, 0.2)),
                measured(8, 730, 0.05, web=(0.1, 0.0), load=(0.2, 0.2))]
        self.assertEqual(verdict.verdicts(rows)[1][0], "none")

    def test_a_tier_near_saturation_on_a_busy_machine_is_disturbed(self):
        # test_steps beside 1.4 cores of other work: wrk at 40 % of a core and 41 % waiting (81 %),
        # which a quiet machine saturates; and the same step with its tiers all idle
        v, reason = verdict.verdict(measured(2, 441, 1.45, web=(0.02, 0.04), load=(0.40, 0.41)))
        self.assertEqual(v, "disturbed")
        self.assertIn("load at 81%", reason)
        self.assertEqual(verdict.verdict(measured(2, 441, 0.05, web=(0.02, 0.04), load=(0.40, 0.41)))[0],
                         "below limits")
        self.assertEqual(verdict.verdict(measured(2, 441, 1.45, web=(0.02, 0.04), load=(0.30, 0.10)))[0],
                         "below limits")

    def test_a_saturated_machine_hides_every_limit(self):
        # beside 1.7 cores of other work: wrk at 12 % of a core and hardly waiting, sutlab idle;
        # the machine's two cores all busy
        row = measured(2, 205, 1.76, web=(0.01, 0.0), load=(0.12, 0.05))
        row["machine_busy"] = 0.97
        v, reason = verdict.verdict(row)
        self.assertEqual(v, "disturbed")
        self.assertIn("the machine was saturated (97%", reason)
        row["machine_busy"] = 0.80  # cores to spare: the tiers had what they asked for
        self.assertEqual(verdict.verdict(row)[0], "below limits")
        row["machine_busy"], row["outside_cores"] = 0.97, 0.1  # saturated by the tiers themselves
        self.assertEqual(verdict.verdict(row)[0], "below limits")

    def test_thresholds_are_printed(self):
        self.assertIn("disturbed: >= 0.25 cores", "\n".join(verdict.RULES))


if __name__ == "__main__":
    unittest.main()
