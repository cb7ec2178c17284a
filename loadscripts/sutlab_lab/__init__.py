"""sutlab_lab: the lab's Python tooling in one package: the commands of loadscripts/ (each
loadscripts/NAME an entry point into commands/NAME.py) and all they share, imported also by the
Locust recorder (locust/sutlab_recorder.py) and the tests (the server tests: services/
only). Standard library only (matplotlib for the PNGs, imported when one is drawn; jinja2 and
markdown for report.html); run with Debian's /usr/bin/python3.

  commands/  the commands: steps, spray, flip, case, bench, soak, plot, console, jmeter (jmeter/run)
  services/  below everything else here and below the tests: private (PostgreSQL and Redis of a run,
             with-services), server (ServerProcess), client (one HTTP request, readiness), procs
             (process trees, pinning, ports, clean_env), lab (the lab's process roots, var/*.pid),
             metrics (a server's /metrics, prometheus_client's parser, and its flags in force)
  entry      how every command starts: a missing module or program is one line naming its package
  errors     RunError: something failed to run (a tool, a server, a check)
  cli        the commands' argument parser: a usage error is one line and exit 2
  tiers      the per-tier sampler (CPU, capacity, busy, queues) steps, flip and bench read CPU through
  cpubudget  a tier's CPU budget: its processes under a CFS quota (cgroup v1 or v2), a case's scale model's
  loadcap    how many cores a load tool can use, from its command line
  verdict    the tier that limits a step, read from its row
  thresholds --fail-if EXPR: the figures a run must meet
  stepped    a stepped run: one load tool held at each level, each step measured and judged
  loads      the load tools of a stepped run: the command that holds one level of each
  loadargv   every load tool's command line (wrk, ab, hey, spray, Locust, s_time, pgbench,
             redis-benchmark), for steps, flip and bench alike
  spray      the open-model load (httperf) reported as vegeta reports it;  httperf  its outputs
  proxybench HAProxy as the subject on a core of its own: its rates, CPU split, memory per connection
  progress   progress lines of a long run, on stderr
  tools      run_tool: one load generator run, bounded, with its own CPU time
  stats      the nearest-rank percentile, on sorted values or on counts
  parsers    wrk, hey, ab, pgbench, redis-benchmark and Locust outputs -> one result shape
  series     per-second series for the plots (Locust CSVs, hey -o csv), and what a file is
  report     fmt, ratio, medians, table: None is the one missing value
  engine/    the experiment engine: arms alternated in rounds (A B C, then C B A) on a target
             (the lab, a spawned server, one its caller builds, one a command restarts), rows as values
  plots      the PNGs (matplotlib, Agg)
  htmlreport report.html of a run (templates/report.html), a page a browser opens offline
  callgrind  callgrind files -> self cost per object and function (bench's cost suite)
  bench/     bench's suites;  flip/  flip's plan, load, live and report;  cases/  case's cases, their
             scale models (scale.py) and calibration (calibrate.py)

A run's result is a dict: requests, rps, errors (socket_errors + status_errors), p50/p99/...
and percentiles [(p, ms)] in milliseconds, duration_s, bytes; a value that is unknown is None.
"""

import os

LOADSCRIPTS = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
REPO = os.path.dirname(LOADSCRIPTS)
