"""loadscripts/flip's parts: targets (the server restarted with each run's flags), plan (the
flag's off and on runs), load (the scenarios, wrk or Locust, one measured run), report (the
table and the PNG)."""

import sys


def log(msg):
    print("flip: " + msg, file=sys.stderr, flush=True)
