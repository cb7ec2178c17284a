"""The experiment engine: the same load against two or more arms, in alternated rounds (the
machine is noisy, so no arm gets all the quiet minutes), returned as rows that the reports, plots
and checks read. flip, the cases and bench's suites that compare arms run on it.

  Arm        one side: its name, the server's flags for it or its live change, what the table
             says differs, a setup run before each of its runs (rounds.py)
  targets    the server the arms run on, restarted with each arm's flags: the lab, one the engine
             spawns, one its caller builds (bench), one a command restarts (targets.py), with its
             admin listener (live.Admin) when it has one; a case's lab is cases/common.py's
  run_on     for each round, each arm in the round's order: the target takes its flags (or its
             live change), its setup runs, the caller's measure(arm, round, seconds) gives the row
  run_rounds the same for arms that measure themselves (bench's suites: servers side by side)
  run_live   arms whose change is live ({flag: value} through the target's admin listener, no
             restart) as stretches of one load: the first arm's change before it, arm k's at
             k x seconds into it; each arm's row from the server's /metrics scraped throughout
             (live.py; flip --live)
  rows       {arm name: [row of round 1, of round 2, ...]}; a row is a dict, a measured run's
             figures (sutlab_lab's result shape, or a steps.csv row), None where unknown

The load (a tool steps drives, wrk, Locust, spray, s_time) and the samplers (tiers.Sampler) are
the measure's in run_on: flip's is flip/load.measure, a case's a stepped run (stepped.run). In
run_live the load is the caller's (load(seconds) -> its result) and the samplers the engine's
(the /metrics scraper and tiers.Sampler).
"""

from .live import LiveRun, run_live
from .rounds import Arm, round_order, run_on, run_rounds

__all__ = ["Arm", "LiveRun", "round_order", "run_live", "run_on", "run_rounds"]
