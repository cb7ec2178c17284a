"""loadscripts/flip's parts: plan (the flag's off and on runs, as the engine's arms), load (the
scenarios, wrk or Locust, one measured run), live (--live: off and on as live arms, the change at
the half through the admin listener; the halves' rows and the curve), report (the table and the
PNG). The rounds, the live run and the targets (the server restarted with each run's flags, or
changed through its admin listener) are the engine's (sutlab_lab/engine)."""

import sys


def log(msg):
    print("flip: " + msg, file=sys.stderr, flush=True)
