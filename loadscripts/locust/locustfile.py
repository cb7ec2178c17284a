"""sutlab: one tagged task per endpoint, so `--tags show_articles` loads that endpoint alone.

    locust -f loadscripts/locust/locustfile.py --headless --host http://127.0.0.1:8080 \
        --tags show_articles -u 20 -r 20 -t 30s --csv var/locust/show

Tags: health_check, static, show_articles, list_articles, store_article, like, comment, profile,
stores, stores_categories, store_detail, rpc_echo, work_cpu. Without --tags every task runs, with
equal weights. Users log in as a random fixture user (user<N>@example.com / password, N in
1..--fixture-users) in on_start when a selected task needs a token (store_article, like, comment;
--login always|never overrides). Options: `locust -f loadscripts/locust/locustfile.py --help`
(group "sutlab"). Step load: add loadscripts/locust/stepload.py last to -f. See
loadscripts/README.md.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from locust import tag, task  # noqa: E402

from sutlab_locust import SutlabUser  # noqa: E402


class EndpointUser(SutlabUser):
    """One task per endpoint, each tagged with its name."""

    @tag("health_check")
    @task
    def t_health_check(self):
        self.health_check()

    @tag("static")
    @task
    def t_static(self):
        self.static_file()

    @tag("show_articles")
    @task
    def t_show_articles(self):
        self.show_article()

    @tag("list_articles")
    @task
    def t_list_articles(self):
        self.list_articles()

    @tag("store_article")
    @task
    def t_store_article(self):
        self.store_article()

    @tag("like")
    @task
    def t_like(self):
        # like and unlike: the pair leaves the counts as they were
        slug = self.random_slug()
        self.like(slug)
        self.unlike(slug)

    @tag("comment")
    @task
    def t_comment(self):
        self.comment()

    @tag("profile")
    @task
    def t_profile(self):
        self.profile()

    @tag("stores")
    @task
    def t_stores(self):
        self.stores_listing()

    @tag("stores_categories")
    @task
    def t_stores_categories(self):
        self.stores_categories()

    @tag("store_detail")
    @task
    def t_store_detail(self):
        self.store_detail()

    @tag("rpc_echo")
    @task
    def t_rpc_echo(self):
        self.rpc_echo()

    @tag("work_cpu")
    @task
    def t_work_cpu(self):
        self.work_cpu()
