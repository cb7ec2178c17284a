"""The experiment engine: the same load against two or more arms, in alternated rounds (the
machine is noisy, so no arm gets all the quiet minutes), returned as rows that the reports, plots
and checks read. flip, the cases and bench's suites that compare arms run on it.

  Arm        one side: its name, the server's flags for it, what the table says differs, a setup
             run before each of its runs (rounds.py)
  targets    the server the arms run on, restarted with each arm's flags: the lab, one the engine
             spawns, one a command restarts (targets.py); a case's lab is cases/common.py's
  run_on     for each round, each arm in the round's order: the target takes its flags, its setup
             runs, the caller's measure(arm, round, seconds) gives the row
  run_rounds the same for arms that measure themselves (bench's suites: servers side by side)
  rows       {arm name: [row of round 1, of round 2, ...]}; a row is a dict, a measured run's
             figures (sutlab_lab's result shape, or a steps.csv row), None where unknown

The load (a tool steps drives, wrk, Locust, spray, s_time) and the samplers (tiers.Sampler) are
the measure's: flip's is flip/load.measure, a case's a stepped run (stepped.run).
"""

from .rounds import Arm, round_order, run_on, run_rounds

__all__ = ["Arm", "round_order", "run_on", "run_rounds"]
