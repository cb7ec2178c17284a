#!/usr/bin/python3
"""Board conformance: profiles and follow, favorites (with 200 concurrent requests on one article),
comments, tags (RealWorld's OpenAPI /profiles, /articles/{slug}/favorite, /articles/{slug}/comments,
/tags); all but tags in both --db-modes. State is checked with psql.
"""

import http.client
import json
import unittest

from boardlib import (
    COMMENT, PROFILE, BoardCase, check_article, check_schema, q, run_threads, unique,
)


class SocialCore:
    """Profiles, favorites, comments: run in async and sync mode."""

    # -- profiles

    def test_profile_follow_unfollow(self):
        a, ta, _ = self.register()
        b, tb, _ = self.register()
        path = "/api/profiles/" + q(b["username"])
        p = self.call("GET", path, expect=200).json["profile"]
        check_schema(self, p, PROFILE, "profile")
        self.assertEqual(p, {"username": b["username"], "bio": None, "image": None, "following": False})
        self.assertFalse(self.call("GET", path, token=ta, expect=200).json["profile"]["following"])
        aid, bid = self.user_id(a["username"]), self.user_id(b["username"])
        for _ in range(2):  # idempotent
            p = self.call("POST", path + "/follow", token=ta, expect=200).json["profile"]
            check_schema(self, p, PROFILE, "profile")
            self.assertEqual((p["username"], p["following"]), (b["username"], True))
            self.assertEqual(self.count("follows", "follower_id = %d AND followee_id = %d" % (aid, bid)), 1)
        self.assertTrue(self.call("GET", path, token=ta, expect=200).json["profile"]["following"])
        self.assertFalse(self.call("GET", path, expect=200).json["profile"]["following"], "anonymous")
        # one-directional
        back = self.call("GET", "/api/profiles/" + q(a["username"]), token=tb, expect=200).json["profile"]
        self.assertFalse(back["following"])
        # bio/image show up
        self.call("PUT", "/api/user", {"user": {"bio": "hello", "image": "http://i/b.png"}}, token=tb, expect=200)
        p = self.call("GET", path, token=ta, expect=200).json["profile"]
        self.assertEqual(p, {"username": b["username"], "bio": "hello", "image": "http://i/b.png", "following": True})
        for _ in range(2):
            p = self.call("DELETE", path + "/follow", token=ta, expect=200).json["profile"]
            check_schema(self, p, PROFILE, "profile")
            self.assertEqual((p["username"], p["following"]), (b["username"], False))
            self.assertEqual(self.count("follows", "follower_id = %d" % aid), 0)
        self.assertFalse(self.call("GET", path, token=ta, expect=200).json["profile"]["following"])

    def test_profile_by_name_ignores_case_exact_first(self):
        # the lookup goes through lower(username) (db/migrations/004, the index the lab drops):
        # any spelling finds the user, and where two users differ only in case, the exact one
        name = unique("Cs")
        upper, _, _ = self.register(username=name.upper(), email="%s-u@example.org" % name.lower())
        lower, _, _ = self.register(username=name.lower(), email="%s-l@example.org" % name.lower())
        for spelling, want in ((name.upper(), upper), (name.lower(), lower)):
            p = self.call("GET", "/api/profiles/" + q(spelling), expect=200).json["profile"]
            self.assertEqual(p["username"], want["username"], spelling)
        p = self.call("GET", "/api/profiles/" + q(name.swapcase().title()), expect=200).json["profile"]
        self.assertEqual(p["username"], upper["username"], "no exact spelling: the first registered")

    def test_profile_errors(self):
        a, ta, _ = self.register()
        missing = "/api/profiles/" + q("nobody-" + unique("n"))
        self.errors(self.call("GET", missing), 404)
        self.errors(self.call("GET", missing, token=ta), 404)
        self.errors(self.call("POST", missing + "/follow", token=ta), 404)
        self.errors(self.call("DELETE", missing + "/follow", token=ta), 404)
        me = "/api/profiles/" + q(a["username"])
        self.errors(self.call("POST", me + "/follow", token=ta), 422)
        mine = "follower_id = %d" % self.user_id(a["username"])
        self.assertEqual(self.count("follows", mine), 0)
        self.assertFalse(self.call("GET", me, token=ta, expect=200).json["profile"]["following"])
        b, tb, _ = self.register()
        other = "/api/profiles/" + q(b["username"])
        self.errors(self.call("POST", other + "/follow"), 401, "token")
        self.errors(self.call("DELETE", other + "/follow"), 401, "token")
        self.errors(self.call("GET", other, headers={"Authorization": "Token " + "f" * 64}), 401, "token")
        self.assertEqual(self.count("follows", mine), 0)

    # -- favorites

    def test_favorite_unfavorite(self):
        author, ta, _ = self.register()
        u1, t1, _ = self.register()
        u2, t2, _ = self.register()
        a = self.create_article(ta, title="Favorable")
        aid = self.article_id(a["slug"])
        path = "/api/articles/%s/favorite" % q(a["slug"])

        def stored():
            return (self.count("favorites", "article_id = %d" % aid),
                    int(self.scalar("SELECT favorites_count FROM articles WHERE id = %d" % aid)))

        for _ in range(2):  # idempotent
            art = self.call("POST", path, token=t1, expect=200).json["article"]
            check_article(self, art)
            self.assertEqual((art["slug"], art["favorited"], art["favoritesCount"]), (a["slug"], True, 1))
            self.assertEqual(stored(), (1, 1))
        art = self.call("POST", path, token=t2, expect=200).json["article"]
        self.assertEqual((art["favorited"], art["favoritesCount"]), (True, 2))
        self.assertEqual(stored(), (2, 2))
        # per viewer
        for token, fav in ((t1, True), (t2, True), (ta, False), (None, False)):
            got = self.get_article(a["slug"], token=token).json["article"]
            self.assertEqual((got["favorited"], got["favoritesCount"]), (fav, 2))
        items = {x["slug"]: x for x in self.list_articles(token=t1, favorited=u1["username"]).json["articles"]}
        self.assertIn(a["slug"], items)
        self.assertTrue(items[a["slug"]]["favorited"])
        for _ in range(2):
            art = self.call("DELETE", path, token=t1, expect=200).json["article"]
            check_article(self, art)
            self.assertEqual((art["favorited"], art["favoritesCount"]), (False, 1))
            self.assertEqual(stored(), (1, 1))
        art = self.call("DELETE", path, token=ta, expect=200).json["article"]  # never favorited: no-op
        self.assertEqual((art["favorited"], art["favoritesCount"]), (False, 1))
        self.assertEqual(stored(), (1, 1))
        self.assertEqual(self.get_article(a["slug"], token=t2).json["article"]["favorited"], True)
        # errors
        self.errors(self.call("POST", path), 401, "token")
        self.errors(self.call("DELETE", path), 401, "token")
        self.errors(self.call("POST", "/api/articles/no-such-slug-1/favorite", token=t1), 404)
        self.errors(self.call("DELETE", "/api/articles/no-such-slug-1/favorite", token=t1), 404)
        self.assertEqual(stored(), (1, 1))

    # -- comments

    def test_comments(self):
        author, ta, _ = self.register()
        c1, t1, _ = self.register()
        c2, t2, _ = self.register()
        a = self.create_article(ta, title="Discussed")
        aid = self.article_id(a["slug"])
        base = "/api/articles/%s/comments" % q(a["slug"])
        self.assertEqual(self.call("GET", base, expect=200).json, {"comments": []})
        made = []
        for token, user, text in ((t1, c1, "first!"), (t2, c2, "second"), (t1, c1, "third, with \u00fcnicode \u2603")):
            r = self.call("POST", base, {"comment": {"body": text}}, token=token, expect=201)
            c = r.json["comment"]
            check_schema(self, c, COMMENT, "comment")
            self.assertEqual((c["body"], c["author"]["username"], c["author"]["following"]),
                             (text, user["username"], False))
            self.assertEqual(self.scalar("SELECT body FROM comments WHERE id = %d AND article_id = %d"
                                         % (c["id"], aid)), text)
            made.append(c)
        self.assertEqual(len({c["id"] for c in made}), 3)
        # oldest first, anonymous or not
        for token in (None, t2):
            got = self.call("GET", base, token=token, expect=200).json["comments"]
            for c in got:
                check_schema(self, c, COMMENT, "comment")
            self.assertEqual([c["id"] for c in got], [c["id"] for c in made])
            self.assertEqual([c["body"] for c in got], [c["body"] for c in made])
        self.assertEqual([int(x) for x in self.sql("SELECT id FROM comments WHERE article_id = %d"
                                                    " ORDER BY created_at, id" % aid).split()],
                         [c["id"] for c in made])
        # following is per viewer
        self.call("POST", "/api/profiles/%s/follow" % q(c1["username"]), token=t2, expect=200)
        got = self.call("GET", base, token=t2, expect=200).json["comments"]
        self.assertEqual([c["author"]["following"] for c in got], [True, False, True])
        # delete: not by others (not even the article's author), then by the comment's author
        first = made[0]["id"]
        self.errors(self.call("DELETE", "%s/%d" % (base, first), token=t2), 403)
        self.errors(self.call("DELETE", "%s/%d" % (base, first), token=ta), 403)
        self.errors(self.call("DELETE", "%s/%d" % (base, first)), 401, "token")
        self.assertEqual(self.count("comments", "id = %d" % first), 1)
        r = self.call("DELETE", "%s/%d" % (base, first), token=t1, expect=204)
        self.assertEqual(r.body, b"")
        self.assertEqual(self.count("comments", "id = %d" % first), 0)
        got = self.call("GET", base, expect=200).json["comments"]
        self.assertEqual([c["id"] for c in got], [made[1]["id"], made[2]["id"]])
        self.errors(self.call("DELETE", "%s/%d" % (base, first), token=t1), 404)
        self.errors(self.call("DELETE", "%s/%d" % (base, 10 ** 9), token=t1), 404)

    def test_comment_errors(self):
        author, ta, _ = self.register()
        u, tu, _ = self.register()
        a = self.create_article(ta, title="Commented")
        b = self.create_article(ta, title="Other")
        base = "/api/articles/%s/comments" % q(a["slug"])
        before = self.count("comments")
        for body, field in (({"comment": {"body": ""}}, "body"), ({"comment": {}}, "body"),
                            ({"comment": {"body": None}}, "body"), ({"comment": {"body": 5}}, "body"),
                            ({"comment": {"body": ["x"]}}, "body"), ({"comment": {"body": "x" * 10001}}, "body")):
            self.errors(self.call("POST", base, body, token=tu), 422, field)
        for body in ({"comment": "text"}, {"comment": []}, {}):
            self.errors(self.call("POST", base, body, token=tu), 422)
        self.errors(self.call("POST", base, {"comment": {"body": "anon"}}), 401, "token")
        missing = "/api/articles/no-such-slug-9/comments"
        self.errors(self.call("GET", missing), 404)
        self.errors(self.call("POST", missing, {"comment": {"body": "x"}}, token=tu), 404)
        self.assertEqual(self.count("comments"), before)
        c = self.call("POST", base, {"comment": {"body": "y" * 10000}}, token=tu, expect=201).json["comment"]
        self.assertEqual(len(c["body"]), 10000)
        # a comment is addressed through its own article only
        other = "/api/articles/%s/comments/%d" % (q(b["slug"]), c["id"])
        self.errors(self.call("DELETE", other, token=tu), 404)
        self.errors(self.call("DELETE", missing + "/%d" % c["id"], token=tu), 404)
        self.assertEqual(self.count("comments", "id = %d" % c["id"]), 1)
        r = self.call("DELETE", base + "/abc", token=tu)
        self.assertIn(r.status, (404, 422), str(r))


class SocialAsync(SocialCore, BoardCase):
    MODE = "async"


class SocialSync(SocialCore, BoardCase):
    MODE = "sync"


# ----------------------------------------------------------------------------------------------
# 200 concurrent favorite/unfavorite requests on one article

N_USERS = 100
# Each user sends two requests in order; what it did last decides whether it favorites.
PLANS = (("POST", "POST"), ("POST", "DELETE"), ("DELETE", "POST"), ("DELETE", "DELETE"))


class FavoritesConcurrency(BoardCase):
    MODE = "async"
    WORKERS = 2

    def test_200_concurrent_requests_on_one_article(self):
        author, ta, _ = self.register()
        a = self.create_article(ta, title="Contended")
        aid = self.article_id(a["slug"])
        tokens = [None] * N_USERS
        names = [None] * N_USERS

        def reg(i):
            user, token, _ = self.register(prefix="fan")
            tokens[i], names[i] = token, user["username"]

        for start in range(0, N_USERS, 20):
            run_threads(20, lambda j, s=start: reg(s + j))
        # a third of the users already favorite it before the storm
        for i in range(0, N_USERS, 3):
            self.call("POST", "/api/articles/%s/favorite" % q(a["slug"]), token=tokens[i], expect=200)
        path = "/api/articles/%s/favorite" % q(a["slug"])
        results = []  # (status, body): list.append is atomic

        def storm(i):
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
            try:
                for method in PLANS[i % 4]:
                    conn.request(method, path, headers={"Authorization": "Token " + tokens[i]})
                    r = conn.getresponse()
                    body = r.read()
                    results.append((r.status, body))
            finally:
                conn.close()

        run_threads(N_USERS, storm)
        self.assertEqual(len(results), 2 * N_USERS)
        bad = [(s, b[:200]) for s, b in results if s != 200]
        self.assertEqual(bad, [], "every request 200")
        for _, b in results:
            art = json.loads(b)["article"]
            self.assertGreaterEqual(art["favoritesCount"], 0)
            self.assertLessEqual(art["favoritesCount"], N_USERS)
        expected = {names[i] for i in range(N_USERS) if PLANS[i % 4][1] == "POST"}
        self.assertEqual(len(expected), N_USERS // 2)
        in_db = set(self.sql("SELECT u.username FROM favorites f JOIN users u ON u.id = f.user_id"
                             " WHERE f.article_id = %d" % aid).split())
        self.assertEqual(in_db, expected)
        self.assertEqual(self.count("favorites", "article_id = %d" % aid), len(expected))
        self.assertEqual(int(self.scalar("SELECT favorites_count FROM articles WHERE id = %d" % aid)), len(expected))
        got = self.get_article(a["slug"]).json["article"]
        self.assertEqual(got["favoritesCount"], len(expected))
        for i in (0, 1, 2, 3):
            got = self.get_article(a["slug"], token=tokens[i]).json["article"]
            self.assertEqual(got["favorited"], PLANS[i % 4][1] == "POST", names[i])


class FavoritesConcurrencySync(FavoritesConcurrency):
    MODE = "sync"


# ----------------------------------------------------------------------------------------------
# Tags


class Tags(BoardCase):
    def test_tags_alphabetical_equal_to_table(self):
        self.assertEqual(self.call("GET", "/api/tags", expect=200).json, {"tags": []})
        _, token, _ = self.register()
        self.create_article(token, tagList=["zeta", "alpha", "mid"])
        self.create_article(token, tagList=["beta", "alpha"])
        self.create_article(token, tagList=[])
        doc = self.call("GET", "/api/tags", expect=200).json
        self.assertEqual(list(doc), ["tags"])
        self.assertEqual(doc["tags"], ["alpha", "beta", "mid", "zeta"])
        self.assertEqual(doc["tags"], self.sql("SELECT name FROM tags ORDER BY name").split())
        self.assertEqual(self.call("GET", "/api/tags", token=token, expect=200).json, doc)


class SeededTags(BoardCase):
    SEED = True

    def test_seeded_tags_equal_to_table(self):
        doc = self.call("GET", "/api/tags", expect=200).json
        want = self.sql("SELECT name FROM tags ORDER BY name").splitlines()
        self.assertEqual(len(want), 10, "README.md's fixture sizes: tiny has 10 tags")
        self.assertEqual(doc, {"tags": want})
        self.assertEqual(doc["tags"], sorted(doc["tags"]))


if __name__ == "__main__":
    unittest.main()
