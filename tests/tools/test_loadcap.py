"""A load tool's capacity from its command line (loadscripts/sutlab_lab/loadcap.py), for every tool the
lab runs: the cores it was told to use, not the threads that happened to run."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import loadcap  # noqa: E402,I100


class Declared(unittest.TestCase):
    def test_wrk_threads_in_every_spelling(self):
        for argv, n in ((["wrk", "-t1", "-c", "8", "http://x/"], 1),
                        (["/usr/bin/wrk", "-t", "3", "http://x/"], 3),
                        (["wrk", "--threads", "4", "http://x/"], 4),
                        (["wrk", "--threads=5", "http://x/"], 5),
                        (["wrk", "-t2", "-t6", "http://x/"], 6),      # the last one wins
                        (["wrk", "-c", "8", "http://x/"], 2),         # wrk's own default
                        (["wrk", "-tx", "http://x/"], 2)):            # wrk refuses it; never 0
            self.assertEqual(loadcap.declared(argv, 8), n, argv)

    def test_ab_and_httperf_are_one_thread(self):
        self.assertEqual(loadcap.declared(["ab", "-c", "64", "-t", "3", "http://x/"], 2), 1)
        self.assertEqual(loadcap.declared(["httperf", "--rate", "100", "--num-conns", "300"], 2), 1)

    def test_sprays_attacker_is_one_thread(self):
        argv = ["/usr/bin/python3", "/x/loadscripts/sutlab_lab/attacker.py", "--host", "::1", "--rate", "100"]
        self.assertEqual(loadcap.declared(argv, 2), 1)

    def test_hey_uses_cpus_or_every_allowed_core(self):
        self.assertEqual(loadcap.declared(["hey", "-c", "8", "-z", "3s", "http://x/"], 2), 2)
        self.assertEqual(loadcap.declared(["hey", "-c", "8", "http://x/"], 1), 1)  # pinned to one
        self.assertEqual(loadcap.declared(["hey", "-cpus", "1", "http://x/"], 2), 1)
        self.assertEqual(loadcap.declared(["hey", "-cpus=3", "http://x/"], 4), 3)
        self.assertEqual(loadcap.declared(["hey", "--cpus", "1", "http://x/"], 4), 1)

    def test_locust_counts_the_processes_that_make_requests(self):
        py = ["/usr/bin/python3", "/usr/bin/locust", "-f", "locustfile.py"]
        self.assertEqual(loadcap.declared(py + ["--headless", "-u", "8"], 2), 1)
        self.assertEqual(loadcap.declared(py + ["--worker", "--master-host", "127.0.0.1"], 2), 1)
        self.assertEqual(loadcap.declared(py + ["--master", "--headless", "--expect-workers", "2"], 2), 0)
        # the interpreter's own options before the script
        self.assertEqual(loadcap.declared(["python3", "-u", "/usr/bin/locust", "--headless"], 2), 1)

    def test_spray_only_starts_httperf(self):
        self.assertEqual(loadcap.declared(["/usr/bin/python3", "/x/loadscripts/spray", "--rate", "50"], 2), 0)

    def test_unknown_programs_declare_nothing(self):
        for argv in (["/usr/bin/python3", "-c", "pass"], ["sh", "-c", "wrk -t4"], ["postgres"], ["k6", "run"]):
            self.assertIsNone(loadcap.declared(argv, 2), argv)


class Capacity(unittest.TestCase):
    """capacity() over a process tree, with /proc replaced by a table."""

    def capacity(self, procs):
        argv = {pid: a for pid, (_, a) in procs.items()}
        parent = {pid: p for pid, (p, _) in procs.items()}
        real = loadcap.argv_of
        loadcap.argv_of = argv.get
        try:
            return loadcap.capacity(list(procs), lambda pid: 2, parent.get)
        finally:
            loadcap.argv_of = real

    def test_distributed_locust_is_its_workers(self):
        master = ["/usr/bin/python3", "/usr/bin/locust", "--master", "--headless"]
        worker = ["/usr/bin/python3", "/usr/bin/locust", "--worker"]
        self.assertEqual(self.capacity({10: (1, master), 11: (1, worker), 12: (1, worker)}), 2)

    def test_spray_is_its_httperf_processes(self):
        spray = ["/usr/bin/python3", "/x/spray", "--rate", "900"]
        procs = {10: (1, spray)}
        procs.update({11 + i: (10, ["httperf", "--rate", "300"]) for i in range(3)})
        self.assertEqual(self.capacity(procs), 3)

    def test_a_forked_child_is_not_counted_twice(self):
        locust = ["/usr/bin/python3", "/usr/bin/locust", "--headless"]
        self.assertEqual(self.capacity({10: (1, locust), 11: (10, locust)}), 1)

    def test_a_tree_of_unknown_programs_has_no_declared_capacity(self):
        self.assertIsNone(self.capacity({10: (1, ["sh", "-c", "x"]), 11: (10, ["k6", "run"])}))
        self.assertIsNone(self.capacity({}))


if __name__ == "__main__":
    unittest.main()
