#!/usr/bin/python3
"""Board conformance: articles (RealWorld's OpenAPI /articles, /articles/feed, /articles/{slug}).

CRUD runs in both --db-modes; the index (filters, paging, articlesCount) runs against a known data
set with --count-pagination off and on (docs/board-api.md: on = exact count(*) with the same
filters; off = offset + returned + (1 if a further row exists)), and on the seeded tiny fixtures with
estimate (the planner's estimate of the count's rows, never below what the page proved); each
answer's X-Total-Count-Kind says which of exact, estimate and lower-bound it is. State is checked
with psql.
"""

import json

import datetime
import time
import unittest

from boardlib import (
    ARTICLE, FIXTURE_PASSWORD, BoardCase, check_article, check_schema, q, slug_base, sql_lit, unique,
)


def parse_ts(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")


class ArticlesCore:
    """Create, read, update, delete: run in async and sync mode."""

    def test_create_and_get(self):
        user, token, _ = self.register()
        title = "How to Train Your Dragon"
        r = self.call("POST", "/api/articles", {"article": {
            "title": title, "description": "Ever wonder how?", "body": "It takes a Jacobian",
            "tagList": ["dragons", "training", "dragons", "angularjs"]}}, token=token, expect=201)
        a = r.json["article"]
        check_article(self, a)
        aid = self.article_id(a["slug"])
        self.assertEqual(a["slug"], "how-to-train-your-dragon-%d" % aid)
        self.assertEqual((a["title"], a["description"], a["body"]),
                         (title, "Ever wonder how?", "It takes a Jacobian"))
        self.assertEqual(a["tagList"], ["angularjs", "dragons", "training"], "sorted, duplicates dropped")
        self.assertEqual((a["favorited"], a["favoritesCount"]), (False, 0))
        self.assertEqual(a["author"], {"username": user["username"], "bio": None, "image": None, "following": False})
        self.assertLessEqual(parse_ts(a["createdAt"]), parse_ts(a["updatedAt"]))
        # the row as stored
        row = self.rows("SELECT title, description, body, author_id, favorites_count,"
                        " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')"
                        " FROM articles WHERE id = %d" % aid)[0]
        self.assertEqual(row[:5], [title, "Ever wonder how?", "It takes a Jacobian",
                                   str(self.user_id(user["username"])), "0"])
        stored = datetime.datetime.strptime(row[5], "%Y-%m-%dT%H:%M:%S.%f")
        self.assertLessEqual(abs(stored - parse_ts(a["createdAt"])), datetime.timedelta(milliseconds=1),
                             "createdAt %s vs stored %s" % (a["createdAt"], row[5]))
        self.assertEqual(self.sql("SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id"
                                  " WHERE at.article_id = %d ORDER BY at.position" % aid).split(),
                         ["dragons", "training", "angularjs"])
        # read back: anonymous and as someone else
        got = self.get_article(a["slug"]).json["article"]
        check_article(self, got)
        self.assertEqual(got, a)
        other, tother, _ = self.register()
        got = self.get_article(a["slug"], token=tother).json["article"]
        self.assertEqual(got, a)
        self.assertEqual(self.get_article(a["slug"], token=token).json["article"], a)
        # without tagList: []
        b = self.create_article(token, title="No tags here")
        self.assertEqual(b["tagList"], [])

    def test_slug_rule(self):
        _, token, _ = self.register()
        for title in ("Hello, World", "  --Already--Slugged--  ", "ABC def 123", "\u00dcn\u00efc\u00f6d\u00e9 \u03a9mega 42",
                      "!!!", "a", "tabs\tand\nnewlines", "' OR 1=1 --",
                      "Zz" + "9" * 97):  # a 100-character base
            a = self.create_article(token, title=title)
            aid = self.article_id(a["slug"])
            self.assertEqual(a["slug"], "%s-%d" % (slug_base(title), aid), "title %r" % title)
            self.assertEqual(a["title"], title)
        self.assertEqual(slug_base("!!!"), "article")
        # the same title twice: two articles, two slugs
        a = self.create_article(token, title="Same Title")
        b = self.create_article(token, title="Same Title")
        self.assertNotEqual(a["slug"], b["slug"])
        self.assertEqual(b["slug"], "same-title-%d" % self.article_id(b["slug"]))

    def test_slug_of_a_long_title_is_cut_at_100(self):
        # docs/board-api.md: the slug base is cut at 100 characters, then "-<id>"
        _, token, _ = self.register()
        for title in ("x" * 200, "word " * 40):
            a = self.create_article(token, title=title)
            base = slug_base(title)[:100].rstrip("-")
            self.assertEqual(a["slug"], "%s-%d" % (base, self.article_id(a["slug"])))
            self.assertLessEqual(len(a["slug"]), 100 + 1 + len(str(self.article_id(a["slug"]))))

    def test_update_title_changes_slug(self):
        user, token, _ = self.register()
        a = self.create_article(token, title="Original Title", description="d0", body="b0", tagList=["x1", "x2"])
        aid = self.article_id(a["slug"])
        time.sleep(0.01)
        r = self.call("PUT", "/api/articles/" + q(a["slug"]), {"article": {"title": "Did you train your dragon?"}},
                      token=token, expect=200)
        u = r.json["article"]
        check_article(self, u)
        self.assertEqual(u["slug"], "did-you-train-your-dragon-%d" % aid)
        self.assertEqual((u["title"], u["description"], u["body"], u["tagList"]),
                         ("Did you train your dragon?", "d0", "b0", ["x1", "x2"]))
        self.assertEqual(u["createdAt"], a["createdAt"])
        self.assertGreater(parse_ts(u["updatedAt"]), parse_ts(a["updatedAt"]))
        self.assertEqual(self.scalar("SELECT updated_at > created_at FROM articles WHERE id = %d" % aid), "t")
        self.get_article(a["slug"], expect=404)
        self.assertEqual(self.get_article(u["slug"]).json["article"], u)
        # other fields, slug unchanged
        u2 = self.call("PUT", "/api/articles/" + q(u["slug"]), {"article": {"body": "b1", "description": "d1"}},
                       token=token, expect=200).json["article"]
        self.assertEqual((u2["slug"], u2["title"], u2["description"], u2["body"]),
                         (u["slug"], "Did you train your dragon?", "d1", "b1"))
        # tagList replaced, sorted
        u3 = self.call("PUT", "/api/articles/" + q(u["slug"]), {"article": {"tagList": ["y1", "x1", "y1"]}},
                       token=token, expect=200).json["article"]
        self.assertEqual(u3["tagList"], ["x1", "y1"])
        self.assertEqual(self.get_article(u["slug"]).json["article"]["tagList"], ["x1", "y1"])
        self.assertEqual(self.rows("SELECT slug, title, description, body FROM articles WHERE id = %d" % aid),
                         [[u["slug"], "Did you train your dragon?", "d1", "b1"]])
        # bad values: 422, row unchanged
        snap = self.rows("SELECT slug, title, description, body, updated_at FROM articles WHERE id = %d" % aid)
        for art, field in (({"title": ""}, "title"), ({"title": "t" * 201}, "title"), ({"title": 5}, "title"),
                           ({"description": "d" * 1001}, "description"), ({"body": ["b"]}, "body"),
                           ({"tagList": "x1"}, "tagList"), ({"tagList": [1]}, "tagList"),
                           ({"tagList": ["t%d" % i for i in range(21)]}, "tagList")):
            r = self.call("PUT", "/api/articles/" + q(u["slug"]), {"article": art}, token=token)
            self.errors(r, 422, field)
        self.assertEqual(self.rows("SELECT slug, title, description, body, updated_at FROM articles WHERE id = %d"
                                   % aid), snap)

    def test_update_with_null_is_422(self):
        # UpdateArticle: title, description, body are strings and tagList an array, none nullable
        _, token, _ = self.register()
        a = self.create_article(token, title="Null Target", tagList=["n"])
        aid = self.article_id(a["slug"])
        snap = self.rows("SELECT slug, title, description, body, updated_at FROM articles WHERE id = %d" % aid)
        for art, field in (({"title": None}, "title"), ({"description": None}, "description"),
                           ({"tagList": None}, "tagList"), ({"title": "changed", "body": None}, "body")):  # last:
            # if that one is taken, the slug changes
            with self.subTest(article=art):
                r = self.call("PUT", "/api/articles/" + q(a["slug"]), {"article": art}, token=token)
                self.errors(r, 422, field)
        self.assertEqual(self.rows("SELECT slug, title, description, body, updated_at FROM articles WHERE id = %d"
                                   % aid), snap)
        self.assertEqual(self.get_article(a["slug"]).json["article"]["tagList"], ["n"])

    def test_update_by_others_403_unknown_404(self):
        author, ta, _ = self.register()
        other, to, _ = self.register()
        a = self.create_article(ta, title="Mine Alone", tagList=["keep"])
        aid = self.article_id(a["slug"])
        snap = self.rows("SELECT slug, title, description, body, updated_at FROM articles WHERE id = %d" % aid)
        r = self.call("PUT", "/api/articles/" + q(a["slug"]), {"article": {"title": "Hijacked", "body": "x"}},
                      token=to)
        self.errors(r, 403)
        r = self.call("PUT", "/api/articles/" + q(a["slug"]), {"article": {"title": "Hijacked"}})
        self.errors(r, 401, "token")
        self.assertEqual(self.rows("SELECT slug, title, description, body, updated_at FROM articles WHERE id = %d"
                                   % aid), snap)
        self.assertEqual(self.get_article(a["slug"]).json["article"]["tagList"], ["keep"])
        r = self.call("PUT", "/api/articles/no-such-article-0", {"article": {"title": "x"}}, token=ta)
        self.errors(r, 404)
        self.get_article("no-such-article-0", expect=404)

    def test_delete_removes_comments_and_favorites(self):
        author, ta, _ = self.register()
        u1, t1, _ = self.register()
        u2, t2, _ = self.register()
        a = self.create_article(ta, title="Doomed", tagList=["doomed-tag"])
        keep = self.create_article(ta, title="Kept")
        aid = self.article_id(a["slug"])
        slug = q(a["slug"])
        for t in (t1, t2):
            self.call("POST", "/api/articles/%s/favorite" % slug, token=t, expect=200)
            self.call("POST", "/api/articles/%s/comments" % slug, {"comment": {"body": "hi"}}, token=t, expect=201)
        self.call("POST", "/api/articles/%s/favorite" % q(keep["slug"]), token=t1, expect=200)
        self.assertEqual(self.count("favorites", "article_id = %d" % aid), 2)
        self.assertEqual(self.count("comments", "article_id = %d" % aid), 2)
        # not by someone else, not anonymously
        self.errors(self.call("DELETE", "/api/articles/" + slug, token=t1), 403)
        self.errors(self.call("DELETE", "/api/articles/" + slug), 401, "token")
        self.assertEqual(self.count("articles", "id = %d" % aid), 1)
        self.get_article(a["slug"], expect=200)
        # by the author
        r = self.call("DELETE", "/api/articles/" + slug, token=ta, expect=204)
        self.assertEqual(r.body, b"")
        self.get_article(a["slug"], expect=404)
        self.call("GET", "/api/articles/%s/comments" % slug, expect=404)
        for table in ("articles", "favorites", "comments", "article_tags"):
            col = "id" if table == "articles" else "article_id"
            self.assertEqual(self.count(table, "%s = %d" % (col, aid)), 0, table)
        # the other article and its favorite are untouched
        self.assertEqual(self.get_article(keep["slug"]).json["article"]["favoritesCount"], 1)
        self.errors(self.call("DELETE", "/api/articles/" + slug, token=ta), 404)

    def test_create_validation(self):
        _, token, _ = self.register()
        before = self.count("articles")
        ok = {"title": "t", "description": "d", "body": "b"}

        def bad(art, field, message=None):
            r = self.call("POST", "/api/articles", {"article": art}, token=token)
            self.errors(r, 422, field, message)

        bad({"description": "d", "body": "b"}, "title", "can't be blank")
        bad({"title": "t", "body": "b"}, "description")
        bad({"title": "t", "description": "d"}, "body")
        bad(dict(ok, title=""), "title", "can't be blank")
        bad(dict(ok, title="t" * 201), "title", "is too long")
        bad(dict(ok, description="d" * 1001), "description", "is too long")
        bad(dict(ok, body="b" * 100001), "body", "is too long")
        bad(dict(ok, title=7), "title", "must be a string")
        bad(dict(ok, body={"text": "b"}), "body")
        bad(dict(ok, tagList="a,b"), "tagList")
        bad(dict(ok, tagList=[1, 2]), "tagList")
        bad(dict(ok, tagList=[["a"]]), "tagList")
        bad(dict(ok, tagList=[""]), "tagList")
        bad(dict(ok, tagList=["t" * 65]), "tagList")
        bad(dict(ok, tagList=["tag%d" % i for i in range(21)]), "tagList")
        for body in ({"article": []}, {"article": "x"}, {"article": None}, {}):
            self.errors(self.call("POST", "/api/articles", body, token=token), 422)
        self.errors(self.call("POST", "/api/articles", {"article": ok}), 401, "token")
        self.assertEqual(self.count("articles"), before, "rejected creates left rows")
        self.assertEqual(self.count("tags", "name LIKE 'tag%'"), 0, "rejected creates left tags")
        # the limits themselves are fine
        a = self.create_article(token, title="T" * 200, description="d" * 1000, body="b" * 100000,
                                tagList=["k%02d" % i for i in range(19)] + ["t" * 64])
        check_schema(self, a, ARTICLE)
        self.assertEqual(len(a["tagList"]), 20)
        self.assertEqual(len(self.get_article(a["slug"]).json["article"]["body"]), 100000)


    def test_text_limits_count_bytes(self):
        # docs/board-api.md: limits are bytes of UTF-8 (title 1-200, description up to 1,000, comment 1-10,000)
        _, token, _ = self.register()
        e = "\u00e9"  # two bytes in UTF-8
        a = self.create_article(token, title=e * 100, description=e * 500, body=e * 1000)
        self.assertEqual(len(a["title"]), 100)
        c = self.call("POST", "/api/articles/%s/comments" % q(a["slug"]), {"comment": {"body": e * 5000}},
                      token=token, expect=201).json["comment"]
        self.assertEqual(c["body"], e * 5000)
        self.errors(self.call("POST", "/api/articles", {"article": {"title": e * 101, "description": "d",
                                                                    "body": "b"}}, token=token), 422, "title")
        self.errors(self.call("POST", "/api/articles/%s/comments" % q(a["slug"]), {"comment": {"body": e * 5001}},
                              token=token), 422, "body")


class ArticlesAsync(ArticlesCore, BoardCase):
    MODE = "async"


class ArticlesSync(ArticlesCore, BoardCase):
    MODE = "sync"


# ----------------------------------------------------------------------------------------------
# The index and the feed, on a known data set

N_ARTICLES = 30


def dataset_author(k):
    return ("alice", "alice", "bob", "bob", "carol")[k % 5]


def dataset_tags(k):
    tags = []
    if k % 3 == 0:
        tags.append("three")
    if k % 2 == 0:
        tags.append("even")
    if k % 5 == 0:
        tags.append("five")
    return tags


FAVORITES = {  # who favorites article k
    "carol": lambda k: k % 4 == 1,
    "bob": lambda k: k % 3 == 2,
    "alice": lambda k: k in (2, 29),
    "dave": lambda k: False,
}
FOLLOWS = {"alice": ["bob"], "dave": ["alice", "carol"], "bob": [], "carol": []}


class Listing(BoardCase):
    """GET /api/articles and /api/articles/feed over 30 articles by alice, bob and carol."""

    COUNT_PAGINATION = False

    @classmethod
    def prepare(cls):
        tc = cls()  # a helper instance: the API shortcuts are instance methods
        cls.users = {}
        for role in ("alice", "bob", "carol", "dave"):
            user, token, _ = tc.register(prefix=role)
            cls.users[role] = (user["username"], token)
        cls.arts = []  # creation order: dicts with k, slug, author role, tags
        for k in range(N_ARTICLES):
            role = dataset_author(k)
            a = tc.create_article(cls.users[role][1], title="Article %02d by %s" % (k, role),
                                  description="about %d" % k, body="body %d" % k, tagList=dataset_tags(k))
            cls.arts.append({"k": k, "slug": a["slug"], "author": role, "tags": dataset_tags(k)})
        for role, pred in FAVORITES.items():
            for art in cls.arts:
                if pred(art["k"]):
                    tc.call("POST", "/api/articles/%s/favorite" % q(art["slug"]), token=cls.users[role][1],
                            expect=200)
        for role, followees in FOLLOWS.items():
            for f in followees:
                tc.call("POST", "/api/profiles/%s/follow" % q(cls.users[f][0]), token=cls.users[role][1],
                        expect=200)

    # -- expectations

    def name(self, role):
        return self.users[role][0]

    def token(self, role):
        return self.users[role][1]

    def expected(self, tag=None, author=None, favorited=None, feed_of=None):
        """Slugs newest first (created last = newest) under the filters, from the data set."""
        out = []
        for art in reversed(self.arts):
            if tag is not None and tag not in art["tags"]:
                continue
            if author is not None and art["author"] != author:
                continue
            if favorited is not None and not FAVORITES[favorited](art["k"]):
                continue
            if feed_of is not None and art["author"] not in FOLLOWS[feed_of]:
                continue
            out.append(art["slug"])
        return out

    def psql_count(self, tag=None, author=None, favorited=None):
        """count(*) of the same filters, asked of PostgreSQL directly."""
        where = ["true"]
        if tag is not None:
            where.append("EXISTS (SELECT 1 FROM article_tags at JOIN tags t ON t.id = at.tag_id"
                         " WHERE at.article_id = a.id AND t.name = %s)" % sql_lit(tag))
        if author is not None:
            where.append("a.author_id = (SELECT id FROM users WHERE username = %s)" % sql_lit(author))
        if favorited is not None:
            where.append("EXISTS (SELECT 1 FROM favorites f JOIN users u ON u.id = f.user_id"
                         " WHERE f.article_id = a.id AND u.username = %s)" % sql_lit(favorited))
        return int(self.scalar("SELECT count(*) FROM articles a WHERE " + " AND ".join(where)))

    def expected_count(self, total, offset, returned):
        if self.COUNT_PAGINATION:
            return total
        if returned == 0 and offset > 0:  # a page past the end: the server counts (docs/board-api.md)
            return total
        return offset + returned + (1 if offset + returned < total else 0)

    def slugs(self, doc):
        return [a["slug"] for a in doc["articles"]]

    # -- tests

    def test_psql_agrees_with_creation_order(self):
        self.assertEqual(self.sql("SELECT slug FROM articles ORDER BY created_at DESC, id DESC").split(),
                         self.expected())

    def test_default_page_newest_first(self):
        doc = self.list_articles().json
        want = self.expected()
        self.assertEqual(self.slugs(doc), want[:20], "default limit 20, newest first")
        self.assertEqual(doc["articlesCount"], self.expected_count(len(want), 0, 20))
        doc = self.list_articles(limit=100).json
        self.assertEqual(self.slugs(doc), want)
        self.assertEqual(doc["articlesCount"], N_ARTICLES)

    def test_items_carry_the_data_set(self):
        by_slug = {a["slug"]: a for a in self.arts}
        for viewer in (None, "alice", "carol", "dave"):
            doc = self.list_articles(token=self.token(viewer) if viewer else None, limit=100).json
            self.assertEqual(len(doc["articles"]), N_ARTICLES)
            for item in doc["articles"]:
                art = by_slug[item["slug"]]
                k = art["k"]
                self.assertEqual(item["title"], "Article %02d by %s" % (k, art["author"]))
                self.assertEqual(item["description"], "about %d" % k)
                self.assertEqual(item["tagList"], sorted(art["tags"]))
                self.assertEqual(item["author"]["username"], self.name(art["author"]))
                fav_count = sum(1 for pred in FAVORITES.values() if pred(k))
                self.assertEqual(item["favoritesCount"], fav_count, item)
                self.assertEqual(item["favorited"], bool(viewer) and FAVORITES[viewer](k), (viewer, item))
                self.assertEqual(item["author"]["following"],
                                 bool(viewer) and art["author"] in FOLLOWS[viewer], (viewer, item))

    def test_filters(self):
        cases = [dict(tag="even"), dict(tag="three"), dict(tag="five"), dict(tag="none-such"),
                 dict(author="alice"), dict(author="bob"), dict(author="carol"), dict(author="dave"),
                 dict(favorited="carol"), dict(favorited="bob"), dict(favorited="alice"), dict(favorited="dave"),
                 dict(tag="even", author="bob"), dict(tag="three", favorited="carol"),
                 dict(author="alice", favorited="bob"), dict(tag="five", author="carol", favorited="bob")]
        for f in cases:
            want = self.expected(**f)
            params = {k: (self.name(v) if k in ("author", "favorited") else v) for k, v in f.items()}
            doc = self.list_articles(limit=100, **params).json
            self.assertEqual(self.slugs(doc), want, f)
            total = self.psql_count(**params)
            self.assertEqual(total, len(want), "data set vs PostgreSQL for %r" % f)
            self.assertEqual(doc["articlesCount"], self.expected_count(total, 0, len(want)), f)
            # and a page of 3 under the same filter
            doc = self.list_articles(limit=3, offset=1, **params).json
            self.assertEqual(self.slugs(doc), want[1:4], f)
            self.assertEqual(doc["articlesCount"], self.expected_count(total, 1, len(want[1:4])), f)
        for param in ("tag", "author", "favorited"):
            doc = self.list_articles(**{param: "nobody-" + unique("x")}).json
            self.assertEqual((doc["articles"], doc["articlesCount"]), ([], 0), param)
        # filter values are exact: no prefix or case folding
        doc = self.list_articles(tag="EVEN").json
        self.assertEqual(doc["articles"], [])
        doc = self.list_articles(author=self.name("alice")[:-1]).json
        self.assertEqual(doc["articles"], [])

    def test_pages_partition_the_list(self):
        for params in ({}, {"author": "alice"}, {"tag": "even"}):
            real = {k: (self.name(v) if k == "author" else v) for k, v in params.items()}
            want = self.expected(**params)
            for limit in (1, 7, 10, len(want)):
                seen = []
                offset = 0
                while True:
                    doc = self.list_articles(limit=limit, offset=offset, **real).json
                    page = self.slugs(doc)
                    self.assertLessEqual(len(page), limit)
                    self.assertEqual(doc["articlesCount"], self.expected_count(len(want), offset, len(page)),
                                     (params, limit, offset))
                    if not page:
                        break
                    seen += page
                    offset += limit
                self.assertEqual(seen, want, "pages of %d under %r: overlap or gap" % (limit, params))
                self.assertEqual(len(set(seen)), len(seen))

    def test_count_semantics_at_the_edges(self):
        total = N_ARTICLES
        for offset, limit, n in ((0, 20, 20), (20, 5, 5), (25, 5, 5), (29, 5, 1), (30, 5, 0), (31, 5, 0),
                                 (0, 100, 30), (10, 20, 20), (11, 20, 19)):
            r = self.list_articles(limit=limit, offset=offset)
            doc = r.json
            self.assertEqual(len(doc["articles"]), n, (offset, limit))
            self.assertEqual(doc["articlesCount"], self.expected_count(total, offset, n), (offset, limit))
            # on: always counted; off: exact once the page reached the end (or past it, counted)
            end = self.COUNT_PAGINATION or offset + n >= total
            self.assertEqual(r.headers.get("x-total-count-kind"), "exact" if end else "lower-bound", (offset, limit))
        doc = self.list_articles(offset=1000000).json
        self.assertEqual(doc["articles"], [])
        self.assertEqual(doc["articlesCount"], self.expected_count(total, 1000000, 0))
        self.assertEqual(doc["articlesCount"], N_ARTICLES)

    def test_bad_paging_parameters_422(self):
        for value in ("0", "101", "-1", "abc", "1.5", "1e2", "99999999999999999999", "0x10", "5abc"):
            self.errors(self.call("GET", "/api/articles?limit=" + q(value)), 422, "limit")
            self.errors(self.call("GET", "/api/articles/feed?limit=" + q(value), token=self.token("alice")),
                        422, "limit")
        for value in ("-1", "1000001", "abc", "99999999999999999999", "1.0", "-0x1"):
            self.errors(self.call("GET", "/api/articles?offset=" + q(value)), 422, "offset")
            self.errors(self.call("GET", "/api/articles/feed?offset=" + q(value), token=self.token("alice")),
                        422, "offset")
        self.assertEqual(len(self.list_articles(limit=1).json["articles"]), 1)
        self.assertEqual(len(self.list_articles(limit=100, offset=0).json["articles"]), N_ARTICLES)

    def test_feed(self):
        for role in ("alice", "dave", "bob"):
            want = self.expected(feed_of=role)
            doc = self.feed(self.token(role), limit=100).json
            self.assertEqual(self.slugs(doc), want, role)
            self.assertEqual(doc["articlesCount"], self.expected_count(len(want), 0, len(want)), role)
            for item in doc["articles"]:
                self.assertTrue(item["author"]["following"], item)
                k = next(a["k"] for a in self.arts if a["slug"] == item["slug"])
                self.assertEqual(item["favorited"], FAVORITES[role](k), item)
        want = self.expected(feed_of="dave")
        self.assertEqual(len(want), 18)
        seen = []
        for offset in range(0, 25, 5):
            doc = self.feed(self.token("dave"), limit=5, offset=offset).json
            self.assertEqual(doc["articlesCount"], self.expected_count(len(want), offset, len(doc["articles"])))
            seen += self.slugs(doc)
        self.assertEqual(seen, want)
        doc = self.feed(self.token("dave")).json
        self.assertEqual(self.slugs(doc), want[:18])
        doc = self.feed(self.token("alice"), offset=1000000).json
        self.assertEqual(doc["articles"], [])
        self.errors(self.call("GET", "/api/articles/feed"), 401, "token")

    def test_get_article_flags_per_viewer(self):
        art = self.arts[1]  # k=1: only carol favorites it (1 % 4 == 1), by alice
        self.assertEqual(art["author"], "alice")
        for viewer, fav, following in ((None, False, False), ("carol", True, False), ("bob", False, False),
                                       ("dave", False, True), ("alice", False, False)):
            a = self.get_article(art["slug"], token=self.token(viewer) if viewer else None).json["article"]
            check_article(self, a)
            self.assertEqual((a["favorited"], a["author"]["following"], a["favoritesCount"]), (fav, following, 1),
                             viewer)
            self.assertEqual(a["body"], "body 1")


class ListingCounted(Listing):
    COUNT_PAGINATION = True


class ListingCountedSync(Listing):
    MODE = "sync"
    COUNT_PAGINATION = True


class EstimatedIndex(BoardCase):
    """--count-pagination estimate on the tiny fixtures (analyzed by the seed): articlesCount is the
    planner's estimate of the count's rows, never below what the page proved; exact once the page
    reached the end or went past it (docs/board-api.md). Expected values come from PostgreSQL: its
    count(*), and the top node's "Plan Rows" of EXPLAIN for the same filter."""

    SEED = True
    COUNT_PAGINATION = "estimate"
    # the rows each filter counts (docs/bottlenecks.md, "Count pagination")
    ROWS = {
        "all": "FROM articles",
        "tag": "FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = %s",
        "author": "FROM articles a WHERE a.author_id = (SELECT id FROM users WHERE username = %s)",
        "favorited": "FROM favorites f JOIN users fu ON fu.id = f.user_id WHERE fu.username = %s",
        "feed": "FROM articles a WHERE a.author_id IN (SELECT followee_id FROM follows WHERE follower_id = %s)",
    }

    @classmethod
    def prepare(cls):
        # statistics that cannot change under the test: autovacuum off, analyzed once more
        for t in ("articles", "article_tags", "tags", "favorites", "follows", "users"):
            cls.sql("ALTER TABLE %s SET (autovacuum_enabled = off)" % t)
        cls.sql("ANALYZE")
        tc = cls()
        cls.tag_most = cls.scalar("SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id"
                                  " GROUP BY t.name ORDER BY count(*) DESC, t.name LIMIT 1")
        cls.author_most = cls.scalar("SELECT u.username FROM articles a JOIN users u ON u.id = a.author_id"
                                     " GROUP BY u.username ORDER BY count(*) DESC, u.username LIMIT 1")
        cls.fan = cls.scalar("SELECT u.username FROM favorites f JOIN users u ON u.id = f.user_id"
                             " GROUP BY u.username ORDER BY count(*) DESC, u.username LIMIT 1")
        cls.follower = cls.scalar("SELECT u.username FROM follows fo JOIN users u ON u.id = fo.follower_id"
                                  " JOIN articles a ON a.author_id = fo.followee_id"
                                  " GROUP BY u.username ORDER BY count(*) DESC, u.username LIMIT 1")
        cls.follower_token = tc.login(cls.scalar("SELECT email FROM users WHERE username = %s"
                                                 % sql_lit(cls.follower)), FIXTURE_PASSWORD).json["user"]["token"]

    def planner_rows(self, kind, value=None):
        rows = self.ROWS[kind] % (sql_lit(value) if value is not None else ())
        plan = json.loads(self.scalar("EXPLAIN (FORMAT JSON) SELECT 1 " + rows))
        return int(plan[0]["Plan"]["Plan Rows"]), int(self.scalar("SELECT count(*) " + rows))

    def filters(self):
        """(name, query parameters, token, the planner's rows, the exact count) of each filter."""
        viewer = str(self.user_id(self.follower))
        return [("all", {}, None) + self.planner_rows("all"),
                ("tag", {"tag": self.tag_most}, None) + self.planner_rows("tag", self.tag_most),
                ("author", {"author": self.author_most}, None) + self.planner_rows("author", self.author_most),
                ("favorited", {"favorited": self.fan}, None) + self.planner_rows("favorited", self.fan),
                ("feed", {}, self.follower_token) + self.planner_rows("feed", viewer)]

    def page(self, name, params, token, **paging):
        if name == "feed":
            return self.feed(token, **paging, **params)
        return self.list_articles(token=token, **paging, **params)

    def test_each_filter_gives_the_planners_estimate_or_what_the_page_proved(self):
        seen = set()
        for name, params, token, planned, total in self.filters():
            self.assertGreater(total, 3, "tiny gives every filter a few rows: %s" % name)
            for offset in (0, 1, total - 3):
                r = self.page(name, params, token, limit=2, offset=offset)
                proved = offset + 2 + 1  # two rows, and the one past them came back
                kind = r.headers.get("x-total-count-kind")
                want = (planned, "estimate") if planned > proved else (proved, "lower-bound")
                self.assertEqual((r.json["articlesCount"], kind), want, (name, offset, planned, total))
                seen.add(kind)
            # the last page and past the end: exact
            for offset, n in ((total - 2, 2), (total - 1, 1), (total + 5, 0)):
                r = self.page(name, params, token, limit=2, offset=offset)
                self.assertEqual(len(r.json["articles"]), n, (name, offset))
                self.assertEqual((r.json["articlesCount"], r.headers.get("x-total-count-kind")), (total, "exact"),
                                 (name, offset))
        self.assertEqual(seen, {"estimate", "lower-bound"}, "both kinds before the last page")

    def test_unfiltered_estimate_is_the_analyzed_count(self):
        r = self.list_articles(limit=10)
        self.assertEqual((r.json["articlesCount"], r.headers.get("x-total-count-kind")), (50, "estimate"),
                         "README.md's fixture sizes: tiny has 50 articles, and ANALYZE saw them all")
        # five pages of ten, as a pager would show them
        for offset in range(0, 50, 10):
            r = self.list_articles(limit=10, offset=offset)
            self.assertEqual(r.json["articlesCount"], 50, offset)

    def test_several_filters(self):
        tag = self.tag_most
        r = self.list_articles(limit=100, tag=tag, author=self.author_most)
        want = int(self.scalar("SELECT count(*) FROM articles a JOIN users u ON u.id = a.author_id"
                               " WHERE u.username = %s AND a.id IN (SELECT at.article_id FROM article_tags at"
                               " JOIN tags t ON t.id = at.tag_id WHERE t.name = %s)"
                               % (sql_lit(self.author_most), sql_lit(tag))))
        self.assertEqual((r.json["articlesCount"], r.headers.get("x-total-count-kind")), (want, "exact"))
        self.assertEqual(len(r.json["articles"]), want)


class EstimatedIndexSync(EstimatedIndex):
    MODE = "sync"


class SeededIndex(BoardCase):
    """The tiny fixtures: the index agrees with PostgreSQL."""

    SEED = True
    COUNT_PAGINATION = True

    def test_seeded_index_matches_psql(self):
        total = self.count("articles")
        self.assertEqual(total, 50, "README.md's fixture sizes: tiny has 50 articles")
        doc = self.list_articles(limit=100).json
        self.assertEqual(doc["articlesCount"], total)
        self.assertEqual([a["slug"] for a in doc["articles"]],
                         self.sql("SELECT slug FROM articles ORDER BY created_at DESC, id DESC").split())
        for item in doc["articles"]:
            aid = self.article_id(item["slug"])
            self.assertEqual(item["favoritesCount"], self.count("favorites", "article_id = %d" % aid), item["slug"])
            self.assertEqual(item["tagList"], self.sql(
                "SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = %d"
                " ORDER BY t.name COLLATE \"C\"" % aid).split(), item["slug"])
        tag = self.scalar("SELECT name FROM tags ORDER BY name LIMIT 1")
        doc = self.list_articles(tag=tag, limit=100).json
        self.assertEqual(doc["articlesCount"], int(self.scalar(
            "SELECT count(*) FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = %s" % sql_lit(tag))))


if __name__ == "__main__":
    unittest.main()
