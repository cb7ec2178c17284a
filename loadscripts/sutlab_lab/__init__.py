"""The library of sutlab's load tooling: loadscripts/bench, flip, soak, plot, the Locust files
and the integration tests' sutlab_testlib import it (standard library only; matplotlib only for
the PNGs, imported when one is drawn). Run with Debian's /usr/bin/python3.

  errors    RunError: something failed to run (a tool, a server, a check)
  procs     processes and ports: process trees, pinning, listening pid, clean_env, free_port
  tiers     the per-tier sampler (CPU, capacity, busy, queues) steps, flip and bench read CPU through
  server    ServerProcess: start a server with flags, wait until it answers, stop it, its logs
  client    one HTTP request (header bytes counted), waiting until a server answers 200
  tools     run_tool: one load generator run, bounded, with its own CPU time
  stats     the nearest-rank percentile, on sorted values or on counts
  parsers   wrk, hey, ab, pgbench, redis-benchmark and Locust outputs -> one result shape
  series    per-second series for the plots (Locust CSVs, hey -o csv), and what a file is
  metrics   the Prometheus text format parser, sutlab's /metrics and its flags in force
  report    fmt, ratio, medians, table: None is the one missing value
  driver    contenders alternated in rounds (A B C, then C B A), results as values
  plots     the PNGs (matplotlib, Agg)
  callgrind callgrind files -> self cost per object and function (bench's cost suite)
  bench/    loadscripts/bench's suites;  flip/  loadscripts/flip's targets, load and report

A run's result is a dict: requests, rps, errors (socket_errors + status_errors), p50/p99/...
and percentiles [(p, ms)] in milliseconds, duration_s, bytes; a value that is unknown is None.
"""

import os

LOADSCRIPTS = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
REPO = os.path.dirname(LOADSCRIPTS)
