"""The commands of loadscripts/, one module each; loadscripts/NAME is its entry point (it puts
loadscripts/ on sys.path and calls main), and its usage is the module's docstring.

  steps    stepped runs, a per-tier table and the tier that limits   (loadscripts/steps)
  spray    open-model load at a fixed rate, vegeta's report             (loadscripts/spray)
  flip     the same load with a flag off, then on                       (loadscripts/flip)
  case     one write-up's experiment replayed on the lab                (loadscripts/case)
  bench    sutlab side by side with nginx, pgbench, redis-benchmark     (loadscripts/bench)
  soak     a long Locust run, sutlab's RSS, descriptors and errors      (loadscripts/soak)
  plot     PNGs of a run's series                                       (loadscripts/plot)
  console  a terminal that renders printed output at a set rate         (loadscripts/console)
  jmeter   the JMeter plan run and summarised                           (loadscripts/jmeter/run)
"""
