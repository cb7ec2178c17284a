"""The php-fpm stages of the Laravel blog write-up (000, steps 4-14 and 21-22), as case php-fpm replays
them: each stage's lab settings and the write-up's rows, and the fits of its scale model (each PHP
variant's CPU a request on its first row; show_articles' web, database and wait on its first row).
"""

from . import blog000 as b
from .scale import Fit, Topology

STEP_SECONDS, SYNC, TWO = 10, ["--db-mode", "sync"], ("--instances", "2", "--lb", "haproxy")
PHP = "--app-cpu-us, PHP"
# stage: (workers, PHP knob, tool and levels, lab options, web vCPU, {level: (line, rps, web CPU %, db CPU %)})
STAGES = {
    "2 children": (2, PHP, ("ab", "2,4,8"), (), 2, {2: ("L59", 21, 99, None), 4: ("L60", 21, 99, None),
                                                      8: ("L61", 21, 99, None)}),
    "4 children": (4, PHP, ("ab", "2,4,8"), (), 2, {2: ("L67", 22, 98, None), 4: ("L68", 21, 100, None),
                                                      8: ("L69", 21, 100, None)}),
    "caches": (2, PHP + ", caches", ("ab", "2,4,8"), (), 2, {2: ("L79", 25, 98, None), 4: ("L80", 24, 99, None),
                                                               8: ("L81", 24, 99, None)}),
    "OPcache": (2, PHP + ", OPcache", ("ab", "2,4,8"), (), 2, {2: ("L96", 237, 96, None), 4: ("L97", 235, 96, None),
                                                                 8: ("L98", 223, 96, None)}),
    "Locust": (2, PHP + ", OPcache", ("health_check", "2,4,8"), (), 2, {2: ("L113", 200, 75, None),
                                                                        4: ("L114", 226, 94, None), 8: ("L115", 230, 94, None)}),
    "1 server, ALB": (2, PHP + ", OPcache", ("health_check", "2,8"), ("--instances", "1", "--lb", "haproxy"), 2,
                      {2: ("L202", 166, 60, None), 8: ("L203", 220, 99, None)}),
    "2 servers, ALB": (2, PHP + ", OPcache", ("health_check", "8,16"), TWO, 4, {8: ("L209", 335, 65, None),
                                                                               16: ("L210", 425, 90, None)})}
for n, rows in ((2, {2: ("L123", 55, 36, 20), 4: ("L124", 63, 40, 21), 8: ("L125", 62, 40, 21)}),
                (4, {4: ("L132", 93, 60, 32), 8: ("L133", 99, 65, 33)}), (8, {8: ("L138", 118, 85, 41), 16: ("L139", 120, 86, 42)}),
                (16, {16: ("L144", 125, 88, 45)}), (32, {32: ("L149", 130, 92, 47)})):
    STAGES["show_articles, %d" % n] = (n, "--app-cpu-us, show_articles", ("show_articles", ",".join(map(str, rows))),
                                       (), 2, rows)
ANCHORS = {"L59", "L79", "L96", "L123"}
ANCHOR_STAGE = "show_articles, 2"  # L123's: the --db-work unit is read on it (calibrate.on_anchor)


def _php(line, rps, cpu):
    def compute(f, model):
        return int(round(f["cpu"] / 100.0 * b.VCPU / f["rps"] * 1e6)), "%g %% x %d vCPU / %g req/s (sutlab's own " \
            "few us of /health_check left in)" % (f["cpu"], b.VCPU, f["rps"])
    return Fit(PHP + {"L59": "", "L79": ", caches", "L96": ", OPcache"}[line], "000 " + line, dict(rps=rps, cpu=cpu),
               compute, " us")


def _latency(f, model):
    """What a show_articles request waited beyond both tiers' CPU, a statement, in the model's clock."""
    own = model.measured["own"]
    wait = f["ms"] * 1000.0 - b.per_request_us(f["rps"], f["web"]) - b.per_request_us(f["rps"], f["db"])
    return max(0, int(round(model.time(wait / own.statements / 1000.0)))), "%d ms - web %.1f - db %.1f = %.1f ms; " \
        "over %.2f statements; / s" % (f["ms"], b.per_request_us(f["rps"], f["web"]) / 1000.0,
                                       b.per_request_us(f["rps"], f["db"]) / 1000.0, wait / 1000.0, own.statements)


FITS = [_php("L59", 21, 99), _php("L79", 25, 98), _php("L96", 237, 96),
        b.app_cpu_fit("000 L123", 55, 36, "--app-cpu-us, show_articles"), b.db_work_fit("000 L123", 55, 20),
        Fit("--db-latency-ms", "000 L123", dict(rps=55, ms=35, web=36, db=20), _latency, " ms")]
TOPOLOGY = Topology([b.WEB, b.DB, b.LOAD], "ab on the web server itself, then from the attack server; Locust "
                    "`app.py --tags` from the attack server, no think time (000 D-L); levels as the write-up's", b.UNSTATED)
S, WHY_S = 1.4 / 6, "1.4 cores for the 6 vCPU of its largest stage: two web servers and the database"

