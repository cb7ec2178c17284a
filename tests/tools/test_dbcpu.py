"""sutlab_lab/dbcpu.py: a pid's CFS quota read back in cores from a hand-made /proc and cgroup
tree (the sampler caps the db tier's capacity with it), and a budget that is no budget refused."""

import os
import tempfile
import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import dbcpu  # noqa: E402,I100


def tree(d, cgroup_line, quota, period=100000):
    os.makedirs(os.path.join(d, "proc", "42"))
    with open(os.path.join(d, "proc", "42", "cgroup"), "w") as f:
        f.write("5:memory:/other\n%s\n1:cpuacct:/\n" % cgroup_line)
    os.makedirs(os.path.join(d, "cpu", "lab-db"))
    for name, v in (("cpu.cfs_quota_us", quota), ("cpu.cfs_period_us", period)):
        with open(os.path.join(d, "cpu", "lab-db", name), "w") as f:
            f.write("%d\n" % v)


def quota(cgroup_line, q, period=100000):
    with tempfile.TemporaryDirectory() as d:
        tree(d, cgroup_line, q, period)
        return dbcpu.quota_cores(42, mounts=os.path.join(d, "cpu"), proc=os.path.join(d, "proc"))


class Quota(unittest.TestCase):
    def test_half_a_core_and_two(self):
        self.assertAlmostEqual(quota("4:cpu:/lab-db", 50000), 0.5)
        self.assertAlmostEqual(quota("4:cpu,cpuacct:/lab-db", 400000, 200000), 2.0)

    def test_no_quota(self):
        self.assertIsNone(quota("4:cpu:/lab-db", -1))  # the group has no limit
        self.assertIsNone(quota("4:cpu:/", 50000))     # the root group
        self.assertIsNone(quota("4:cpu:/absent", 50000))
        self.assertIsNone(dbcpu.quota_cores(42, mounts="/nonexistent", proc="/nonexistent"))

    def test_a_budget_of_nothing_is_refused(self):
        for cores in (0, -1):
            with self.assertRaises(ValueError):
                with dbcpu.budget(1, cores, root="/nonexistent"):
                    pass


if __name__ == "__main__":
    unittest.main()
