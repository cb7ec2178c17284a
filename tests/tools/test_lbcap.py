"""A balancer's capacity (loadscripts/sutlab_lab/lbcap.py): its CPU budget, the nginx workers or
HAProxy threads it runs capped by its cpuset, not the workers that happened to run in a step."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import lbcap, verdict  # noqa: E402,I100

# what /proc/PID/cmdline reads for nginx (it rewrites its argv, NULs after) and HAProxy
MASTER = ["nginx: master process nginx -p /v/scale/nginx/ -c /v/scale/nginx/nginx.conf", "", ""]
WORKER = ["nginx: worker process", "", "", ""]
HAPROXY = ["haproxy", "-f", "/v/scale/haproxy.cfg", "-db"]


def capacity(procs, allowed):
    """procs: {pid: (argv, threads)}."""
    return lbcap.capacity(list(procs), lambda p: procs[p][0], lambda p: procs[p][1], allowed)


class Declared(unittest.TestCase):
    def test_nginx_workers_count_its_master_does_not(self):
        self.assertEqual(lbcap.declared(WORKER, 1), 1)
        self.assertEqual(lbcap.declared(MASTER, 1), 0)
        self.assertEqual(lbcap.declared(["nginx: cache manager process"], 1), 0)

    def test_haproxy_is_its_threads(self):
        self.assertEqual(lbcap.declared(HAPROXY, 2), 2)
        self.assertEqual(lbcap.declared(["/usr/sbin/haproxy", "-f", "x"], 1), 1)
        self.assertEqual(lbcap.declared(HAPROXY, 0), 1)  # read as it exited: never 0

    def test_others_declare_nothing(self):
        for argv in (["sutlab", "serve"], ["postgres: writer"], [], ["nginxish"]):
            self.assertIsNone(lbcap.declared(argv, 4), argv)


class Capacity(unittest.TestCase):
    def test_budget_of_one_core_is_one_whatever_ran(self):
        # `infra/lab up --lb-cpus 1`: one worker on one core
        self.assertEqual(capacity({1: (MASTER, 1), 2: (WORKER, 1)}, allowed=1), 1)

    def test_doubled_budget_is_two(self):
        # --lb-cpus 0-1: two workers on two cores, both counted even if one idled through the step
        self.assertEqual(capacity({1: (MASTER, 1), 2: (WORKER, 1), 3: (WORKER, 1)}, allowed=2), 2)

    def test_capped_by_the_cpuset(self):
        # worker_processes 2 pinned to one core (taskset -c 0): one core's worth
        self.assertEqual(capacity({1: (MASTER, 1), 2: (WORKER, 1), 3: (WORKER, 1)}, allowed=1), 1)
        self.assertEqual(capacity({1: (HAPROXY, 4)}, allowed=2), 2)
        self.assertEqual(capacity({1: (HAPROXY, 2)}, allowed=2), 2)
        self.assertEqual(capacity({1: (HAPROXY, 1)}, allowed=2), 1)

    def test_unknown_or_gone_is_none(self):
        self.assertIsNone(capacity({1: (["sutlab", "serve"], 3)}, allowed=2))
        self.assertIsNone(capacity({1: (None, 0)}, allowed=2))
        self.assertEqual(capacity({1: (None, 0), 2: (WORKER, 1)}, allowed=2), 1)


class Verdict(unittest.TestCase):
    """The balancer's busy share against its budget names it as the limit."""

    @staticmethod
    def row(lb_cpu_s, capacity, web_cpu_s=1.0):
        tiers = {"lb": {"cpu_s": lb_cpu_s, "wait_s": 0.0, "elapsed_s": 10.0, "capacity": capacity,
                        "busy": lb_cpu_s / 10.0 / capacity},
                 "web": {"cpu_s": web_cpu_s, "wait_s": 0.0, "elapsed_s": 10.0, "capacity": 2,
                         "busy": web_cpu_s / 10.0 / 2}}
        return {"level": 64, "rps": 5000.0, "tiers": tiers, "outside_cores": 0.0}

    def test_one_core_budget_full_is_lb(self):
        self.assertEqual(verdict.verdict(self.row(9.5, 1))[0], "lb")

    def test_same_cpu_on_a_doubled_budget_is_not(self):
        # 0.95 of a core against two: 48 %, not the limit (the write-up's 98 % -> 59 % + 57 %)
        self.assertNotEqual(verdict.verdict(self.row(9.5, 2))[0], "lb")


if __name__ == "__main__":
    unittest.main()
