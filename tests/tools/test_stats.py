"""The one percentile rule: nearest rank, against ranks worked out by hand."""

import random
import unittest

import toolstest  # noqa: F401  (first: it puts loadscripts/ on the path, for package sutlab_lab)
from sutlab_lab import stats  # noqa: I100

# (n, q) -> the rank (1-based) of the q-th percentile: ceil(q/100 * n), q = 100 the last
RANKS = {
    (1, 50): 1, (1, 95): 1, (1, 99): 1, (1, 100): 1,
    (2, 50): 1, (2, 95): 2, (2, 99): 2, (2, 100): 2,          # 1.0, 1.9, 1.98
    (10, 50): 5, (10, 95): 10, (10, 99): 10, (10, 100): 10,   # 5.0, 9.5, 9.9
    (100, 50): 50, (100, 95): 95, (100, 99): 99, (100, 100): 100,
    (101, 50): 51, (101, 95): 96, (101, 99): 100, (101, 100): 101,  # 50.5, 95.95, 99.99
}


class NearestRank(unittest.TestCase):
    def test_hand_computed_ranks(self):
        for (n, q), rank in RANKS.items():
            values = [7 * i for i in range(1, n + 1)]  # the value says its rank: 7 * rank
            with self.subTest(n=n, q=q):
                self.assertEqual(stats.nearest_rank(n, q), rank)
                self.assertEqual(stats.percentile(values, q), 7 * rank)

    def test_not_bench_old_rounding(self):
        # bench used round(q/100*n + 0.5), and Python rounds halves to even: with 100 samples its
        # p99 was the maximum, with 10 samples its p50 the 6th value
        self.assertEqual(stats.percentile(list(range(1, 101)), 99), 99)
        self.assertEqual(stats.percentile(list(range(1, 11)), 50), 5)

    def test_decimal_percentile_is_not_a_rank_high(self):
        # 99.9/100*1000 is 999.0000000000001 in floats
        self.assertEqual(stats.nearest_rank(1000, 99.9), 999)
        self.assertEqual(stats.nearest_rank(10000, 99.99), 9999)

    def test_empty_and_out_of_range(self):
        self.assertIsNone(stats.percentile([], 50))
        self.assertIsNone(stats.counts_percentile({}, 50))
        for q in (0, -1, 100.5):
            with self.subTest(q=q):
                self.assertRaises(ValueError, stats.nearest_rank, 10, q)
        self.assertRaises(ValueError, stats.nearest_rank, 0, 50)

    def test_counts_agree_with_the_values_they_count(self):
        rnd = random.Random(13)
        for n in (1, 2, 10, 100, 101, 1000):
            values = sorted(rnd.choice((0.5, 1.0, 1.5, 2.0, 8.0, 30.0)) for _ in range(n))
            counts = {}
            for v in values:
                counts[v] = counts.get(v, 0) + 1
            for q in (1, 50, 66.6, 95, 99, 99.9, 100):
                with self.subTest(n=n, q=q):
                    self.assertEqual(stats.counts_percentile(counts, q), stats.percentile(values, q))

    def test_counts_hand_computed(self):
        self.assertEqual(stats.counts_percentile({1.0: 5, 2.0: 5}, 50), 1.0)  # rank 5 of 10
        self.assertEqual(stats.counts_percentile({1.0: 5, 2.0: 5}, 51), 2.0)  # rank 6
        self.assertEqual(stats.counts_percentile({3.0: 1, 1.0: 98, 9.0: 1}, 100), 9.0)


if __name__ == "__main__":
    unittest.main()
