"""loadscripts/sutlab_lab/attacker.py (spray's own attacker for IPv6 and names): Go's dialer
arithmetic, the reply reader on bytes written here, the error kinds, and its report through
spray's summary. The attacker against a real server is in tests/integration/tooling/test_spray.py."""

import asyncio
import socket
import unittest

import toolstest  # noqa: F401  first: it puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import attacker, spray  # noqa: I100


def reply(data):
    """read_reply on a stream that holds `data` and then ends."""
    async def go():
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        code, keep = await attacker.read_reply(reader)
        return code, keep, await reader.read()  # what is left after the reply
    return asyncio.run(go())


class Dialling(unittest.TestCase):
    def test_each_address_gets_its_share_of_what_is_left(self):
        # Go's partialDeadline: 30 s over 2 addresses is 15 s for the first
        self.assertEqual(attacker.slice_end(100.0, 130.0, 2), 115.0)
        self.assertEqual(attacker.slice_end(100.0, 130.0, 1), 130.0)

    def test_a_share_is_at_least_two_seconds_but_never_past_the_deadline(self):
        self.assertEqual(attacker.slice_end(100.0, 103.0, 2), 102.0)  # 1.5 s raised to 2
        self.assertEqual(attacker.slice_end(100.0, 101.0, 3), 101.0)  # 1 s left: all of it
        self.assertIsNone(attacker.slice_end(100.0, 100.0, 1))
        self.assertIsNone(attacker.slice_end(100.0, 99.0, 2))

    def test_given_addresses_keep_their_order_and_family(self):
        got = attacker.addresses("localhost", 8080, ["::1", "127.0.0.1"])
        self.assertEqual(got, [(socket.AF_INET6, ("::1", 8080)), (socket.AF_INET, ("127.0.0.1", 8080))])

    def test_a_literal_resolves_to_itself(self):
        self.assertEqual(attacker.addresses("127.0.0.1", 9), [(socket.AF_INET, ("127.0.0.1", 9))])

    def test_an_address_is_shown_as_vegeta_shows_it(self):
        self.assertEqual(attacker.shown(("::1", 80)), "[::1]:80")
        self.assertEqual(attacker.shown(("127.0.0.1", 80)), "127.0.0.1:80")


class Kinds(unittest.TestCase):
    def test_each_failure_has_its_kind(self):
        self.assertEqual(attacker.kind_of(asyncio.TimeoutError(), "connect"), "connect-timeout")
        self.assertEqual(attacker.kind_of(asyncio.TimeoutError(), "reply"), "reply-timeout")
        self.assertEqual(attacker.kind_of(ConnectionRefusedError(111, "x"), "connect"), "refused")
        self.assertEqual(attacker.kind_of(ConnectionResetError(104, "x"), "reply"), "reset")
        self.assertEqual(attacker.kind_of(asyncio.IncompleteReadError(b"", 10), "reply"), "EOF")
        self.assertEqual(attacker.kind_of(OSError(101, "x"), "connect"), "ENETUNREACH")
        self.assertEqual(attacker.kind_of(ValueError("x"), "reply"), "bad reply")


class Replies(unittest.TestCase):
    def test_a_sized_body_is_read_and_the_connection_kept(self):
        code, keep, rest = reply(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT")
        self.assertEqual((code, keep, rest), (200, True, b"NEXT"))

    def test_a_chunked_body_is_read_to_its_last_chunk(self):
        data = b"HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\nNEXT"
        self.assertEqual(reply(data), (502, True, b"NEXT"))

    def test_close_or_http_1_0_does_not_keep_it(self):
        self.assertEqual(reply(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")[:2], (200, False))
        self.assertEqual(reply(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")[:2], (200, False))
        self.assertEqual(reply(b"HTTP/1.1 200 OK\r\n\r\nto the end")[:2], (200, False))

    def test_not_http_is_a_bad_reply_and_a_short_one_is_eof(self):
        with self.assertRaises(ValueError):
            reply(b"SSH-2.0-OpenSSH\r\n\r\n")
        with self.assertRaises(asyncio.IncompleteReadError):
            reply(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort")


class Report(unittest.TestCase):
    TEXT = ('progress: 3 of 4 done, 1 replies, 2 errors\n'
            '{"addresses": ["[::1]:80", "127.0.0.1:80"], "codes": {"200": 1}, "connections": 4, "duration_s": 2.0,'
            ' "error_set": {"[::1]:80: refused": 2, "127.0.0.1:80: reply-timeout": 1},'
            ' "errors": {"refused": 2, "reply-timeout": 1}, "late": 1, "latencies_complete": true,'
            ' "lifetimes_ms": {"3": 2, "10": 1, "1000": 1}, "processes": 1, "replies": 1, "requests": 4,'
            ' "status": {"2xx": 1}}\n')

    def test_the_last_json_line_is_the_report(self):
        r = spray.parse_attacker(self.TEXT)
        self.assertEqual(r["codes"], {200: 1})
        self.assertEqual(r["lifetimes_ms"], {3.0: 2, 10.0: 1, 1000.0: 1})

    def test_no_report_is_an_error_that_shows_the_output(self):
        with self.assertRaisesRegex(ValueError, "cannot resolve"):
            spray.parse_attacker("attacker.py: cannot resolve nowhere\n")

    def test_the_summary_takes_every_latency_as_it_is(self):
        s = spray.summary(spray.merge([spray.parse_attacker(self.TEXT)]), 2, 2, 1)
        # the failures' latencies are in the histogram already: none added at the timeout
        self.assertEqual(s["mean"], (3 + 3 + 10 + 1000) / 4.0)
        self.assertEqual(s["max"], 1000.0)
        self.assertEqual(s["codes"], {200: 1, 0: 3})
        self.assertEqual(s["success"], 0.25)
        self.assertEqual(s["unsent"], 1)  # a late arrival is the attacker's shortfall
        text = spray.text(s, 2)
        self.assertIn("  [::1]:80: refused: 2", text)
        self.assertIn("dialling [::1]:80, 127.0.0.1:80 in this order", text)

    def test_a_target_is_plain_http_with_ipv6_in_brackets(self):
        self.assertEqual(spray.target("http://[::1]:8080"), ("::1", 8080))
        self.assertEqual(spray.target("http://localhost"), ("localhost", 80))
        self.assertEqual(spray.target("http://127.0.0.1:9/"), ("127.0.0.1", 9))
        for bad in ("https://127.0.0.1:1", "http://::1:80", "http://[nope]:80", "http://h:1/p", None):
            with self.assertRaises(ValueError, msg=bad):
                spray.target(bad)

    def test_httperf_chooses_itself_for_ipv4_alone(self):
        self.assertEqual(spray.attacker_for("127.0.0.1"), "httperf")
        self.assertEqual(spray.attacker_for("10.9.1.2"), "httperf")
        for host in ("::1", "localhost", "fe80::1"):
            self.assertEqual(spray.attacker_for(host), "asyncio", host)


if __name__ == "__main__":
    unittest.main()
