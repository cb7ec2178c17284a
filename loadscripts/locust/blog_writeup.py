"""sutlab: a blog scenario that puts its pressure on the database, as the Laravel blog write-up's
`scenario.py` did (000 L165-L169: 8 and 32 users, the database's CPU at 47 % and 99 %).

    locust -f loadscripts/locust/blog_writeup.py --headless --host http://127.0.0.1:8080 \
        -u 32 -r 32 -t 1m --fixture-users 10000 --csv var/locust/blog
    loadscripts/steps --tool locust --scenario blog-writeup --levels 8,32

What the write-up shows of its scenario: the index page (`articles.index`, with the paginator's
count, L173-L175) and something that reads its users by name (L183); its app had login/logout,
articles CRUD, likes and a user page (L13-L19). It publishes neither the scenario's code, its
weights, nor a password scheme. Everything below is **the lab's choice**:

- one request per task, weights out of 20: the index page 6 (GET /api/articles, the count with
  `--count-pagination`), an article 4, its comments 2, a user by name 4 (GET
  /api/profiles/:username, case-insensitive through lower(username), the lookup that
  idx_users_username_lower serves, db/migrations/004), a like or an unlike 2, a comment 1, a new
  article 1;
- login once per Locust user at its start, the token kept for the whole run and no logout when it
  stops: a login runs bcrypt on the server, and logging in at every session (scenario.py) makes
  the lab web-bound; the fixture users' hashes have the cost `sutlab db seed --bcrypt-cost` gave
  them (10 unless told), whatever the server's --bcrypt-cost, so a level's logins need a warm-up
  long enough for them (steps --warmup) to stay out of its measured seconds;
- the think time between tasks: **derived, not published**: the median over the write-up's seven
  scenario rows of users / rps - latency (blog_think.py, 000 D-L), 0.372 s;
  `--think-time` (or SUTLAB_THINK_TIME) overrides it. One request per task keeps it a wait per
  request, as the rows measure it.
"""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from locust import task  # noqa: E402

from blog_think import THINK_S  # noqa: E402
from sutlab_locust import SutlabUser  # noqa: E402


class BlogWriteupUser(SutlabUser):
    needs_login = True
    default_think = str(THINK_S)

    def on_start(self):
        super().on_start()
        self.liked = set()

    def on_stop(self):
        """No logout: the session is set-up, not part of the mix (a logout at the end of a level
        would fall into its measured seconds)."""

    @task(6)
    def index_page(self):
        self.list_articles()

    @task(4)
    def article(self):
        self.show_article()

    @task(2)
    def comments(self):
        self.show_comments()

    @task(4)
    def user_by_name(self):
        self.profile()

    @task(2)
    def like_or_unlike(self):
        """One request: unlike an article this user liked, else like a new one (the pair would be
        two requests under one wait)."""
        if self.liked and random.random() < 0.5:
            self.unlike(self.liked.pop())
            return
        slug = self.random_slug()
        self.like(slug)
        self.liked.add(slug)

    @task(1)
    def write_comment(self):
        self.comment()

    @task(1)
    def post_article(self):
        self.store_article()
