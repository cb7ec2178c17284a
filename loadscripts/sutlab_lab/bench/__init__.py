"""loadscripts/bench's suites, each in its module with a run(ctx) that measures and returns its
results and a report(ctx, results) that prints them: static (sutlab vs nginx), delivery (the
store listing vs pgbench and redis-benchmark), dbmode (sync vs async), board (the article read
and index vs pgbench; --count-pagination off vs on). common holds what they share, services the
private PostgreSQL and Redis."""
