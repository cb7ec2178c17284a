"""sutlab: the store-browsing scenario of the make-delivery write-up: open the category list,
list the stores of a random category (the endpoint --redis-cache caches), open a few stores of
that listing, go to another category.

    locust -f loadscripts/locust/stores.py --headless --host http://127.0.0.1:8080 \
        -u 50 -r 10 -t 1m --csv var/locust/stores

Weights (out of 10): listing 5, store detail 4, category list 1. No login. Step load: add
stepload.py last to -f.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from locust import task  # noqa: E402

from sutlab_locust import SutlabUser  # noqa: E402


class StoreBrowser(SutlabUser):
    def on_start(self):
        super().on_start()
        self.category = None

    @task(1)
    def categories(self):
        self.stores_categories()

    @task(5)
    def listing(self):
        self.category = self.stores_listing()

    @task(4)
    def open_store(self):
        if self.category is None:
            self.category = self.stores_listing()
        self.store_detail(self.random_store(self.category))
