"""bench's board suite, part 3: how far --count-pagination estimate's articlesCount is from the
exact count, per filter (all, a tag, an author, a fan's favorites, a follower's feed: the most
common value of each and a median one), at each of --estimate-sizes. Printed, never judged: the
planner's estimate is as good as PostgreSQL's statistics, and that is what a lab reads here.

Each size: seeded (replacing the data; the size the database holds first), VACUUM (FREEZE,
ANALYZE) as for part 2, a sutlab with --count-pagination estimate asked for the first page of one
row of each filter (the page proves 2 rows, so articlesCount is the estimate unless that is
below 2), and PostgreSQL's count(*) of the same rows."""

import json
import urllib.parse

from ..errors import RunError
from ..services import client
from . import board_sql
from .common import log

FIXTURE_PASSWORD = "password"  # every fixture user: user<N>@example.com (README.md)

# filter -> (the SQL of its values, most common first: value|count), the count of one value
VALUES = {
    "tag": "SELECT t.name, count(*) FROM article_tags at JOIN tags t ON t.id = at.tag_id GROUP BY t.name"
           " ORDER BY 2 DESC, 1",
    "author": "SELECT u.username, count(*) FROM articles a JOIN users u ON u.id = a.author_id GROUP BY u.username"
              " ORDER BY 2 DESC, 1",
    "favorited": "SELECT u.username, count(*) FROM favorites f JOIN users u ON u.id = f.user_id GROUP BY u.username"
                 " ORDER BY 2 DESC, 1",
    "feed": "SELECT u.email, count(*) FROM follows fo JOIN users u ON u.id = fo.follower_id"
            " JOIN articles a ON a.author_id = fo.followee_id GROUP BY u.email ORDER BY 2 DESC, 1",
}


def cases(svc):
    """(filter, which, value, exact count) of each filter: all, then the most common and the
    median value of the others."""
    out = [("all", "-", None, int(svc.sql("SELECT count(*) FROM articles")))]
    for name, query in VALUES.items():
        rows = [line.rsplit("|", 1) for line in svc.sql(query, timeout=600).splitlines() if line]
        if not rows:
            continue
        for which, (value, count) in (("most", rows[0]), ("median", rows[len(rows) // 2])):
            out.append((name, which, value, int(count)))
    return out


def token_of(port, email):
    body = json.dumps({"user": {"email": email, "password": FIXTURE_PASSWORD}}).encode()
    r = client.request("http://127.0.0.1:%d/api/users/login" % port, method="POST", body=body, timeout=30)
    if r.status != 200:
        raise RunError("estimate: login as %s returned %s %r" % (email, r.status, r.body[:200]))
    return json.loads(r.body)["user"]["token"]


def answer(port, name, value):
    """(articlesCount, X-Total-Count-Kind) of the first one-row page of the filter."""
    if name == "feed":
        path, headers = "/api/articles/feed?limit=1", {"Authorization": "Token " + token_of(port, value)}
    else:
        query = {} if value is None else {name: value}
        path, headers = "/api/articles?" + urllib.parse.urlencode(dict(query, limit=1)), None
    r = client.request("http://127.0.0.1:%d%s" % (port, path), headers=headers, timeout=30)
    try:
        return json.loads(r.body)["articlesCount"], r.headers.get("x-total-count-kind", "")
    except (ValueError, KeyError, TypeError):
        raise RunError("estimate: GET %s returned %s %r" % (path, r.status, r.body[:200]))


def one_size(ctx, size, new_server):
    """The rows of one size: (size, filter, which, value, exact, articlesCount, kind)."""
    svc = ctx.svc
    board_sql.prepare_db(svc, size)
    server = new_server("sutlab-estimate-" + size, ["--count-pagination", "estimate"])
    rows = []
    try:
        server.start()
        for name, which, value, exact in cases(svc):
            got, kind = answer(server.port, name, value)
            shown = value.split("@")[0] if name == "feed" else (value or "-")
            rows.append((size, name, which, shown, exact, got, kind))
            log("bench: board: estimate %s %s %s %s: exact %d, articlesCount %d (%s)"
                % (size, name, which, shown, exact, got, kind))
    finally:
        server.stop()
    return rows


def run(ctx, new_server):
    """Every size of --estimate-sizes, the one the database holds first (no reseed for it)."""
    sizes = sorted(ctx.args.estimate_sizes, key=lambda s: s != ctx.svc.size)
    return [row for size in sizes for row in one_size(ctx, size, new_server)]
