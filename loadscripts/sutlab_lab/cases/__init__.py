"""loadscripts/case's cases: each replays one write-up's experiment through loadscripts/steps (or
spray) on the lab, with the write-up's load model and levels, and sets the write-up's figures next
to the measured ones.

A case module has NAME, TITLE, WRITEUP (what the write-up did and saw, a few lines), INVENTED (the
details sutlab had to choose because the write-up did not publish them; both read by texts.py from
the module's NAME.md beside it), and run(ctx), which
returns (sections, checks): Markdown sections to print, and the checks made with checks.py's
constructors (each citing the write-up's line, with its band stated before the run), from which
checks.verdict gives one of three verdicts. common.py holds the context: the lab, steps (its
Python API, in this process), the settings flipped as the engine's arms (flipped, sweep), the
output directory.
"""

from . import (blog_scenario, count_pagination, delivery_scaleout, gzip, haproxy, keepalive, missing_index, php_fpm,
               redis_cache, spray, tps_trend)

CASES = {m.NAME: m for m in (spray, tps_trend, keepalive, count_pagination, redis_cache, gzip, missing_index,
                             php_fpm, haproxy, delivery_scaleout, blog_scenario)}
# write-up cases that are not a case of their own: TLS is `flip
# --tls-resumption off` (a handshake per request is not a steps load), scale-out php-fpm's last stage
PLANNED = ("tls", "scale-out")
