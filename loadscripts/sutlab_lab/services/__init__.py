"""The services a run needs, below both the lab's tools and the tests: the server tests take
these modules from the package, nothing else.

  private        the private PostgreSQL 15 and Redis 7 of a run: the script with-services (beside
                 this file) starts them for a command; exec_under runs a command again beside them
  server         ServerProcess: start a server (sutlab, nginx) with flags, wait until it answers,
                 stop it and whatever it forked, its logs
  client         one HTTP request on a fresh connection (header bytes counted), waiting until a
                 URL answers 200
  procs          processes and ports: process trees, their CPU time and the pid listening on a
                 port (psutil), thread ids and pinning, pid files, free ports, clean_env (no SUTLAB_*)
  lab            the lab's process roots: the pids of what infra/lab up started (var/*.pid)
  metrics        a server's /metrics (prometheus_client's parser, the format checked) and its
                 flags in force

They import nothing from the rest of sutlab_lab but errors.RunError.
"""
