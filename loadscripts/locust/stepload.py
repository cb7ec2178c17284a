"""sutlab: a step-load shape: --step-size N users are added at each step, each step is held
--step-hold seconds, --steps steps, then the run stops (users: N, 2N, ..., steps x N).

Give it LAST to -f, after the file with the users (Locust 2.12 takes the shape of the last file):

    locust -f loadscripts/locust/locustfile.py,loadscripts/locust/stepload.py --headless \
        --host http://127.0.0.1:8080 --tags show_articles \
        --step-size 10 --step-hold 30 --steps 5 --csv var/locust/step
    loadscripts/plot var/locust/step_stats_history.csv

With a shape, Locust ignores -u, -r and -t (and refuses -t). Environment variables
SUTLAB_STEP_SIZE, SUTLAB_STEP_HOLD, SUTLAB_STEPS, SUTLAB_STEP_RATE set the defaults.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from locust import LoadTestShape  # noqa: E402

from sutlab_options import opt, parse_seconds  # noqa: E402


class StepLoadShape(LoadTestShape):
    def tick(self):
        env = self.runner.environment
        users = max(1, int(opt(env, "step_size")))
        hold = parse_seconds(opt(env, "step_hold"))
        steps = max(1, int(opt(env, "steps")))
        rate = float(opt(env, "step_rate")) or float(users)
        run_time = self.get_run_time()
        if hold <= 0 or run_time >= hold * steps:
            return None
        step = min(steps - 1, int(math.floor(run_time / hold)))
        return (step + 1) * users, rate
