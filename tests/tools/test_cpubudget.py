"""sutlab_lab/cpubudget.py on hand-made /proc and cgroup trees: which hierarchy it finds (v1's cpu
controller, v2's unified one), a pid's CFS quota read back in cores from either (the sampler caps a
tier's capacity with it) and the periods it ran out of it, a budget set up and taken down in a fabricated v2 tree (the parent's
+cpu, the child's cpu.max, each pid moved in and back where it came from), and a budget that is
no budget refused."""

import os
import shutil
import tempfile
import unittest
from unittest import mock

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import cpubudget  # noqa: E402,I100
from sutlab_lab.services import procs  # noqa: E402,I100


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


class Trees(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="sutlab-cgroup-")
        self.addCleanup(lambda: os.system("rm -rf '%s'" % self.d))
        self.proc, self.cg = os.path.join(self.d, "proc"), os.path.join(self.d, "cgroup")

    def proc_cgroup(self, pid, text):
        write(os.path.join(self.proc, str(pid), "cgroup"), text)

    def v1(self, group, quota, period=100000):
        self.proc_cgroup(42, "5:memory:/other\n4:%s\n1:cpuacct:/\n" % group)
        for name, v in (("cpu.cfs_quota_us", quota), ("cpu.cfs_period_us", period)):
            write(os.path.join(self.cg, "cpu", "lab-db", name), "%d\n" % v)
        write(os.path.join(self.cg, "cpu", "cgroup.procs"), "")

    def v2(self, cpu_max=None, path="/sutlab-lab/db-1"):
        write(os.path.join(self.cg, "cgroup.controllers"), "cpuset cpu io memory pids\n")
        write(os.path.join(self.cg, "cgroup.subtree_control"), "cpu memory\n")
        self.proc_cgroup(42, "0::%s\n" % path)
        if cpu_max is not None:
            write(os.path.join(self.cg, path.lstrip("/"), "cpu.max"), cpu_max + "\n")

    def quota(self):
        return cpubudget.quota_cores(42, root=self.cg, proc=self.proc)


class V1(Trees):
    def test_found_and_half_a_core_and_two(self):
        self.v1("cpu:/lab-db", 50000)
        self.assertEqual(cpubudget.detect(self.cg).version, 1)
        self.assertAlmostEqual(self.quota(), 0.5)
        self.v1("cpu,cpuacct:/lab-db", 400000, 200000)
        self.assertAlmostEqual(self.quota(), 2.0)

    def test_no_quota(self):
        self.v1("cpu:/lab-db", -1)   # the group has no limit
        self.assertIsNone(self.quota())
        self.v1("cpu:/", 50000)      # the root group
        self.assertIsNone(self.quota())
        self.v1("cpu:/absent", 50000)
        self.assertIsNone(self.quota())
        self.assertIsNone(cpubudget.quota_cores(42, root="/nonexistent", proc="/nonexistent"))


    def test_throttled_periods_in_seconds(self):
        self.v1("cpu:/lab-db", 5000, 10000)
        write(os.path.join(self.cg, "cpu", "lab-db", "cpu.stat"),
              "nr_periods 400\nnr_throttled 150\nthrottled_time 9000000\n")
        self.assertAlmostEqual(cpubudget.throttled_s(42, root=self.cg, proc=self.proc), 1.5)  # 150 x 10 ms
        self.v1("cpu:/lab-db", -1)  # no quota: nothing to run out of
        self.assertIsNone(cpubudget.throttled_s(42, root=self.cg, proc=self.proc))


class V2(Trees):
    def test_throttled_periods_in_seconds(self):
        self.v2("2500 10000")
        write(os.path.join(self.cg, "sutlab-lab", "db-1", "cpu.stat"),
              "usage_usec 10\nnr_periods 9\nnr_throttled 7\nthrottled_usec 50\n")
        self.assertAlmostEqual(cpubudget.throttled_s(42, root=self.cg, proc=self.proc), 0.07)

    def test_found_and_read_back(self):
        self.v2("25000 10000")
        h = cpubudget.detect(self.cg)
        self.assertEqual((h.version, h.parent), (2, "sutlab-lab"))
        self.assertAlmostEqual(self.quota(), 2.5)

    def test_no_quota(self):
        self.v2("max 100000")
        self.assertIsNone(self.quota())
        self.v2(None, path="/")
        self.assertIsNone(self.quota())

    def test_a_delegated_subtree_from_the_environment(self):
        self.v2()
        with mock.patch.dict(os.environ, {"SUTLAB_LAB_CGROUP": "/user.slice/lab.scope"}):
            self.assertEqual(cpubudget.detect(self.cg).parent, "user.slice/lab.scope")

    def test_a_budget_set_up_and_taken_down(self):
        self.v2(path="/user.slice/session-1.scope")
        write(os.path.join(self.cg, "user.slice", "session-1.scope", "cgroup.procs"), "42\n")
        h = cpubudget.V2(self.cg)
        # procs.tree_pids: the root pid and its live children; here pid 42 alone, at home in its session
        home = os.path.join(self.cg, "user.slice", "session-1.scope")
        self.assertEqual(cpubudget.cgroup_path(42, 2, self.proc), "/user.slice/session-1.scope")
        with mock.patch.object(cpubudget.procs, "tree_pids", lambda pid: [pid]), \
                mock.patch.object(h, "home", lambda pid: home):
            with cpubudget.budget({"db": [42], "web": []}, {"db": 0.5, "web": 0.5}, hierarchy=h) as groups:
                self.assertEqual(list(groups), ["db"])       # a tier with no process is left alone
                group = groups["db"]
                self.assertEqual(os.path.dirname(group), os.path.join(self.cg, "sutlab-lab"))
                self.assertEqual(read(os.path.join(group, "cpu.max")), "5000 10000\n")
                self.assertEqual(read(os.path.join(group, "cgroup.procs")), "42\n")
                self.assertEqual(read(os.path.join(self.cg, "sutlab-lab", "cgroup.subtree_control")), "+cpu\n")
        self.assertFalse(os.path.exists(group))
        self.assertEqual(read(os.path.join(self.cg, "user.slice", "session-1.scope", "cgroup.procs")), "42\n")


class Refused(unittest.TestCase):
    def test_a_budget_of_nothing_is_refused(self):
        for cores in (0, -1):
            with self.assertRaises(ValueError):
                with cpubudget.budget({"db": [1]}, {"db": cores}, root="/nonexistent"):
                    pass

    def test_no_hierarchy_is_an_error_before_anything_moves(self):
        with self.assertRaises(OSError):
            with cpubudget.budget({"db": [1]}, {"db": 0.5}, root="/nonexistent"):
                pass

    def test_a_tiny_budget_keeps_a_millisecond(self):
        self.assertEqual(cpubudget.quota_us(0.01), 1000)
        self.assertEqual(cpubudget.quota_us(0.5), 5000)


class MachineCpu(unittest.TestCase):
    def test_the_machines_cpu_from_the_root_cgroup_v1_then_v2_then_proc_stat(self):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        os.makedirs(os.path.join(root, "cpuacct"))
        with open(os.path.join(root, "cpu.stat"), "w") as f:
            f.write("usage_usec 7500000\nuser_usec 5000000\nsystem_usec 2500000\n")
        self.assertAlmostEqual(cpubudget.machine_cpu_s(root), 7.5)  # v2: no cpuacct.usage
        with open(os.path.join(root, "cpuacct", "cpuacct.usage"), "w") as f:
            f.write("12345000000\n")
        self.assertAlmostEqual(cpubudget.machine_cpu_s(root), 12.345)  # v1 first
        ticks = cpubudget.machine_cpu_s(os.path.join(root, "none"))  # neither: /proc/stat's ticks
        self.assertAlmostEqual(ticks, procs.cpu_stat()[0] / procs.CLK_TCK, delta=5.0)


if __name__ == "__main__":
    unittest.main()
