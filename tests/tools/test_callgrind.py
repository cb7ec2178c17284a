"""sutlab_lab/callgrind.py on a callgrind file written by hand (tests/data/callgrind/hand.callgrind), whose
totals are worked out below; and the cost suite's pure parts on top of it (objects to columns,
strace -c's table, the kinds)."""

import os
import unittest

from toolstest import ROOT  # first: it puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import callgrind  # noqa: I100
from sutlab_lab.bench import cost

HAND = os.path.join(ROOT, "tests", "data", "callgrind", "hand.callgrind")
EXE = "/opt/x/sutlab"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
H2O = "/usr/lib/x86_64-linux-gnu/libh2o-evloop.so.0.13.5"

# Ir self cost by hand, the cost lines of each function (calls= lines' inclusive costs left out):
#   sutlab main   100 + 20 + 3 (after the position-only line of the jump) + 7 (inlined file)
#                 + 0 = 130 (not the 300 of the call to memcpy)
#   sutlab helper 50 (not the 130 of the call to main)               -> sutlab 180
#   libc memcpy   200 + 100                                          -> libc   300
#   libh2o        0x40 = 64                                          -> libh2o  64
#   ??? new       86                                                 -> ???     86
#                                                                       total  630
# Dr: main 7, memcpy 40 (the other lines have no Dr column)          -> total   47
IR_OBJECTS = {EXE: 180, LIBC: 300, H2O: 64, "???": 86}


class Parse(unittest.TestCase):
    def setUp(self):
        self.p = callgrind.read(HAND)

    def test_objects_by_hand(self):
        self.assertEqual(self.p.objects, IR_OBJECTS)
        self.assertEqual(self.p.total, 630)
        self.assertEqual((self.p.summary, self.p.totals), (630, 630))

    def test_functions_by_hand(self):
        self.assertEqual(self.p.functions, {
            (EXE, "main"): 130, (EXE, "helper"): 50, (LIBC, "memcpy"): 300,
            (H2O, "0x0000000000042220"): 64, ("???", "operator new(unsigned long)"): 86})
        self.assertEqual(self.p.top_functions(2), [(300, LIBC, "memcpy"), (130, EXE, "main")])

    def test_another_event(self):
        p = callgrind.read(HAND, event="Dr")
        self.assertEqual(p.objects, {EXE: 7, LIBC: 40})
        self.assertEqual((p.total, p.totals), (47, 47))

    def test_header(self):
        self.assertEqual(self.p.header["cmd"], "/opt/x/sutlab serve --workers 1")
        self.assertEqual(self.p.header["desc"], "Trigger: dump health_check")

    def test_call_cost_counted_as_self_would_be_wrong(self):
        # the same file with the calls= lines dropped: their inclusive costs become self costs
        with open(HAND) as f:
            text = "".join(line for line in f if not line.startswith("calls="))
        self.assertEqual(callgrind.parse(text).objects[EXE], 180 + 300 + 130)

    def test_bad_files(self):
        with self.assertRaisesRegex(callgrind.FormatError, "not a callgrind file"):
            callgrind.parse("# nothing\n")
        with self.assertRaisesRegex(callgrind.FormatError, "event Bc not in this file"):
            callgrind.read(HAND, event="Bc")
        with self.assertRaisesRegex(callgrind.FormatError, r"line 3: fn=\(7\) used before"):
            callgrind.parse("events: Ir\nob=(1) a\nfn=(7)\n1 5\n")
        with self.assertRaisesRegex(callgrind.FormatError, "line 2: not understood"):
            callgrind.parse("events: Ir\nfoo bar\n")


class CostColumns(unittest.TestCase):
    def test_groups(self):
        for obj, group in ((EXE, "sutlab"), (LIBC, "libc"), (H2O, "libh2o"), ("???", "other"),
                           ("/usr/lib/x86_64-linux-gnu/libpq.so.5.15", "libpq"),
                           ("/usr/lib/x86_64-linux-gnu/libhiredis.so.0.14", "hiredis"),
                           ("/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "libssl/crypto"),
                           ("/usr/lib/x86_64-linux-gnu/libjansson.so.4.14.0", "libjansson"),
                           ("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", "libz"),
                           ("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "ld.so"),
                           ("/usr/libexec/valgrind/vgpreload_core-amd64-linux.so", "other"),
                           ("/usr/lib/x86_64-linux-gnu/libcrypt.so.1", "other")):
            with self.subTest(obj=obj):
                self.assertEqual(cost.group_of(obj, EXE), group)

    def test_split_per_request(self):
        s = cost.split(callgrind.read(HAND), EXE, 10)
        self.assertEqual({k: v for k, v in s.items() if v}, {"sutlab": 18.0, "libc": 30.0, "libh2o": 6.4, "other": 8.6})
        self.assertAlmostEqual(sum(s.values()), 63.0)


STRACE = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 46.66    0.019453           9      2000           writev
 26.37    0.010993           5      2001           epoll_wait
 26.08    0.010871           5      2002         2 read
  0.10    0.000043           7         6         6 newfstatat
------ ----------- ----------- --------- --------- ----------------
100.00    0.041691           6      6009         8 total
"""


class Strace(unittest.TestCase):
    def test_summary(self):
        self.assertEqual(cost.parse_strace_summary(STRACE),
                         {"writev": 2000, "epoll_wait": 2001, "read": 2002, "newfstatat": 6})

    def test_no_syscall_at_all(self):
        self.assertEqual(cost.parse_strace_summary(STRACE.splitlines()[0] + "\n"), {})

    def test_not_a_summary(self):
        self.assertRaises(ValueError, cost.parse_strace_summary, "strace: attach: ptrace(PTRACE_SEIZE, 1): EPERM\n")


class Kinds(unittest.TestCase):
    def test_order_and_aliases(self):
        self.assertEqual(cost.kinds_arg("article,/health_check,cached"), ["health_check", "listing-cached", "article"])
        self.assertEqual(cost.kinds_arg("all"), list(cost.KINDS))
        self.assertRaisesRegex(ValueError, "unknown kind 'x'", cost.kinds_arg, "x")
        self.assertRaisesRegex(ValueError, "no kind", cost.kinds_arg, " , ")


if __name__ == "__main__":
    unittest.main()
