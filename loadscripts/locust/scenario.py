"""sutlab: a weighted user scenario in the place of the Laravel blog write-up's scenario.py, whose
contents the write-up does not publish (it shows only that the index and something reading
users.name were in it, 000 L173, L183), on the RealWorld API: log in as a fixture user, browse the
index, open articles (with their comments), like and unlike, post an article or a comment, and log
out after a session of 10-30 actions (then log in again as another random user).

    locust -f loadscripts/locust/scenario.py --headless --host http://127.0.0.1:8080 \
        -u 50 -r 10 -t 2m --think-time 1-3 --fixture-users 1000 --csv var/locust/scenario

Weights (out of 20): index 6, article 6, like+unlike 3, comment 2, post 1, profile 2, and every
login running bcrypt on the server (at the fixture users' hash's cost, the seed's: sutlab db seed
--bcrypt-cost, default 10) are the lab's choices: the write-up names neither weights nor a
password hash. Step load: add stepload.py last to -f.
"""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from locust import task  # noqa: E402

from sutlab_locust import SutlabUser  # noqa: E402
from sutlab_options import opt  # noqa: E402


class ScenarioUser(SutlabUser):
    needs_login = True

    def on_start(self):
        super().on_start()
        self.actions_left = random.randint(10, 30)

    def _session_step(self):
        """Counts actions; at the end of a session, log out and in again as another user."""
        self.actions_left -= 1
        if self.actions_left <= 0:
            if self.token:
                self.logout()
            if opt(self.environment, "login") != "never":
                self.login()
            self.actions_left = random.randint(10, 30)

    @task(6)
    def browse_index(self):
        self.list_articles()
        self._session_step()

    @task(6)
    def read_article(self):
        slug = self.random_slug()
        self.show_article(slug)
        self.show_comments(slug)
        self._session_step()

    @task(3)
    def like_and_unlike(self):
        slug = self.random_slug()
        self.like(slug)
        self.unlike(slug)
        self._session_step()

    @task(2)
    def write_comment(self):
        slug = self.random_slug()
        self.comment(slug)
        self._session_step()

    @task(1)
    def post_article(self):
        self.store_article()
        self._session_step()

    @task(2)
    def author_profile(self):
        self.profile()
        self._session_step()
