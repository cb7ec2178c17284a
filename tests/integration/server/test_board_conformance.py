#!/usr/bin/python3
"""Board conformance with the RealWorld v2 contract where clients notice the details:
nullable bio/image, exact error documents, PUT /api/user refusals, tagList order, articlesCount
of a page past the end, and `following`/`favorited` for anonymous readers.

Each case runs in four configurations: --db-mode async and sync, with and without
--count-pagination. Contracts: RealWorld's OpenAPI file (v2.0.0: Profile/User `bio` and
`image` string or null, UpdateUser, the Unauthorized/Forbidden/NotFound/Conflict examples) and
docs/board-api.md; expected values come from them and from psql, never from an earlier answer.
"""

import unittest

from boardlib import (
    ARTICLE, TOKEN_RE, USER, BoardCase, check_article, check_schema, q, sql_lit, unique,
)

# The exact error documents (RealWorld's OpenAPI responses/*, docs/board-api.md)
NO_TOKEN = {"errors": {"token": ["is missing"]}}
BAD_TOKEN = {"errors": {"token": ["is invalid or revoked"]}}
BAD_CREDENTIALS = {"errors": {"credentials": ["invalid"]}}
ARTICLE_FORBIDDEN = {"errors": {"article": ["forbidden"]}}
COMMENT_FORBIDDEN = {"errors": {"comment": ["forbidden"]}}
ARTICLE_NOT_FOUND = {"errors": {"article": ["not found"]}}
COMMENT_NOT_FOUND = {"errors": {"comment": ["not found"]}}


def taken(field):
    return {"errors": {field: ["has already been taken"]}}


def blank(field):
    return {"errors": {field: ["can't be blank"]}}


def null_profile(name, following=False):
    """The Profile of a user who never set a bio or an image."""
    return {"username": name, "bio": None, "image": None, "following": following}


class ConformanceCore:
    """The cases; the concrete classes below pick --db-mode and --count-pagination."""

    # -- helpers

    def user_row(self, uid):
        """Every column PUT /api/user may touch, as PostgreSQL's own JSON text (nulls kept)."""
        return self.scalar("SELECT row_to_json(x)::text FROM (SELECT username, email, password_hash, bio, image,"
                           " updated_at FROM users WHERE id = %d) x" % uid)

    def article_row(self, aid):
        return self.scalar("SELECT row_to_json(a)::text || ' ' || coalesce((SELECT string_agg(tag_id || ':' ||"
                           " position, ',' ORDER BY tag_id) FROM article_tags WHERE article_id = a.id), '')"
                           " FROM articles a WHERE id = %d" % aid)

    def stored_tags(self, slug):
        return self.sql("SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id"
                        " JOIN articles a ON a.id = at.article_id WHERE a.slug = %s" % sql_lit(slug)).splitlines()

    def exact(self, r, status, doc):
        self.assertEqual(r.status, status, str(r))
        self.assertEqual(r.json, doc, str(r))

    def item(self, doc, slug):
        """The list item with `slug` in a MultipleArticlesResponse (asserted present once)."""
        found = [a for a in doc["articles"] if a["slug"] == slug]
        self.assertEqual(len(found), 1, "%s once in %r" % (slug, doc))
        return found[0]

    def follow(self, token, name):
        r = self.call("POST", "/api/profiles/%s/follow" % q(name), token=token, expect=200)
        self.assertEqual(r.json, {"profile": null_profile(name, True)})

    # -- 1. nullable bio and image

    def test_user_documents_carry_null_bio_and_image(self):
        name = unique("Nul")
        email = name.lower() + "@example.org"
        r = self.call("POST", "/api/users", {"user": {"username": name, "email": email, "password": "pw-null-bio"}},
                      expect=201)
        user = r.json["user"]
        check_schema(self, user, USER, "user")
        self.assertRegex(user["token"], TOKEN_RE)
        self.assertEqual(user, {"email": email, "token": user["token"], "username": name, "bio": None, "image": None})
        uid = self.user_id(name)
        self.assertEqual(self.scalar("SELECT bio IS NULL AND image IS NULL FROM users WHERE id = %d" % uid), "t")
        login = self.login(email, "pw-null-bio").json["user"]
        self.assertRegex(login["token"], TOKEN_RE)
        self.assertEqual(login, {"email": email, "token": login["token"], "username": name, "bio": None,
                                 "image": None})
        for token in (user["token"], login["token"]):
            me = self.call("GET", "/api/user", token=token, expect=200).json
            self.assertEqual(me, {"user": {"email": email, "token": token, "username": name, "bio": None,
                                           "image": None}})
        r = self.call("PUT", "/api/user", {"user": {"image": None}}, token=user["token"], expect=200)
        self.assertEqual(r.json, {"user": {"email": email, "token": user["token"], "username": name, "bio": None,
                                           "image": None}})
        other, to, _ = self.register()
        for token in (None, to, user["token"]):
            r = self.call("GET", "/api/profiles/" + q(name), token=token, expect=200)
            self.assertEqual(r.json, {"profile": null_profile(name)})

    def test_article_and_comment_authors_carry_null_bio_and_image(self):
        author, ta, _ = self.register()
        name = author["username"]
        reader, tr, _ = self.register()
        tag = unique("nulltag")
        created = self.create_article(ta, tagList=[tag])
        check_article(self, created)
        self.assertEqual(created["author"], null_profile(name))
        slug = created["slug"]
        self.assertEqual(self.get_article(slug).json["article"]["author"], null_profile(name))
        self.assertEqual(self.get_article(slug, token=tr).json["article"]["author"], null_profile(name))
        self.assertEqual(self.item(self.list_articles(author=name).json, slug)["author"], null_profile(name))
        self.assertEqual(self.item(self.list_articles(tag=tag).json, slug)["author"], null_profile(name))
        self.follow(tr, name)
        self.assertEqual(self.item(self.feed(tr, limit=100).json, slug)["author"], null_profile(name, True))
        self.assertEqual(self.item(self.list_articles(token=tr, tag=tag).json, slug)["author"],
                         null_profile(name, True))
        base = "/api/articles/%s/comments" % q(slug)
        c = self.call("POST", base, {"comment": {"body": "hello"}}, token=ta, expect=201).json["comment"]
        self.assertEqual(c["author"], null_profile(name))
        c2 = self.call("POST", base, {"comment": {"body": "hi"}}, token=tr, expect=201).json["comment"]
        self.assertEqual(c2["author"], null_profile(reader["username"]))
        got = self.call("GET", base, expect=200).json["comments"]
        self.assertEqual([(x["id"], x["author"]) for x in got],
                         [(c["id"], null_profile(name)), (c2["id"], null_profile(reader["username"]))])
        got = self.call("GET", base, token=tr, expect=200).json["comments"]
        self.assertEqual([x["author"] for x in got], [null_profile(name, True), null_profile(reader["username"])])

    def test_put_user_clears_bio_and_image_with_empty_string_or_null(self):
        user, token, _ = self.register()
        uid = self.user_id(user["username"])
        base = {"email": user["email"], "token": token, "username": user["username"]}
        for clear in ({"bio": "", "image": ""}, {"bio": None, "image": None}):
            self.call("PUT", "/api/user", {"user": {"bio": "set", "image": "https://img.example/a.png"}},
                      token=token, expect=200)
            self.assertEqual(self.rows("SELECT bio, image FROM users WHERE id = %d" % uid),
                             [["set", "https://img.example/a.png"]])
            r = self.call("PUT", "/api/user", {"user": clear}, token=token, expect=200)
            self.assertEqual(r.json, {"user": dict(base, bio=None, image=None)}, "clear with %r" % clear)
            self.assertEqual(self.scalar("SELECT bio IS NULL AND image IS NULL FROM users WHERE id = %d" % uid),
                             "t", "clear with %r" % clear)
        r = self.call("PUT", "/api/user", {"user": {"bio": "hi"}}, token=token, expect=200)
        self.assertEqual(r.json, {"user": dict(base, bio="hi", image=None)})
        self.assertEqual(self.rows("SELECT bio, image IS NULL FROM users WHERE id = %d" % uid), [["hi", "t"]])
        r = self.call("PUT", "/api/user", {"user": {"image": "https://img.example/b.png"}}, token=token, expect=200)
        self.assertEqual(r.json, {"user": dict(base, bio="hi", image="https://img.example/b.png")})
        self.assertEqual(self.rows("SELECT bio, image FROM users WHERE id = %d" % uid),
                         [["hi", "https://img.example/b.png"]])
        self.assertEqual(self.call("GET", "/api/profiles/" + q(user["username"]), expect=200).json,
                         {"profile": {"username": user["username"], "bio": "hi",
                                      "image": "https://img.example/b.png", "following": False}})

    # -- 2. error documents

    def test_token_errors_exact(self):
        user, token, password = self.register()
        r = self.call("GET", "/api/user")
        self.exact(r, 401, NO_TOKEN)
        self.assertEqual(r.headers.get("www-authenticate"), "Token", str(r))
        unknown = "0123456789abcdef" * 4
        self.assertEqual(self.count("sessions", "token_hash = sha256(decode('%s', 'hex'))" % unknown), 0)
        r = self.call("GET", "/api/user", token=unknown)
        self.exact(r, 401, BAD_TOKEN)
        self.assertEqual(r.headers.get("www-authenticate"), "Token", str(r))
        self.call("POST", "/api/users/logout", token=token, expect=204)
        self.assertEqual(self.count("sessions", "token_hash = sha256(decode('%s', 'hex')) AND revoked_at IS NOT NULL"
                                    % token), 1)
        self.exact(self.call("GET", "/api/user", token=token), 401, BAD_TOKEN)
        self.exact(self.call("PUT", "/api/user", {"user": {"bio": "x"}}, token=token), 401, BAD_TOKEN)

    def test_login_errors_exact(self):
        user, token, password = self.register()
        uid = self.user_id(user["username"])
        sessions = self.count("sessions", "user_id = %d" % uid)
        self.exact(self.login(user["email"], password + "x", expect=401), 401, BAD_CREDENTIALS)
        missing = "nobody-" + user["email"]
        self.assertEqual(self.count("users", "email = %s" % sql_lit(missing)), 0)
        self.exact(self.login(missing, password, expect=401), 401, BAD_CREDENTIALS)
        self.assertEqual(self.count("sessions", "user_id = %d" % uid), sessions)

    def test_someone_elses_article_403_exact(self):
        owner, to, _ = self.register()
        other, tx, _ = self.register()
        art = self.create_article(to, tagList=["keep", "these"])
        aid = self.article_id(art["slug"])
        before = self.article_row(aid)
        path = "/api/articles/" + q(art["slug"])
        for body in ({"article": {"title": "Hijacked"}}, {"article": {"body": "x", "tagList": []}}):
            self.exact(self.call("PUT", path, body, token=tx), 403, ARTICLE_FORBIDDEN)
            self.assertEqual(self.article_row(aid), before)
        self.exact(self.call("DELETE", path, token=tx), 403, ARTICLE_FORBIDDEN)
        self.assertEqual(self.article_row(aid), before)
        self.assertEqual(self.count("articles", "id = %d" % aid), 1)

    def test_comment_delete_errors_exact(self):
        author, ta, _ = self.register()
        commenter, tc, _ = self.register()
        art = self.create_article(ta)
        base = "/api/articles/%s/comments" % q(art["slug"])
        c = self.call("POST", base, {"comment": {"body": "mine"}}, token=tc, expect=201).json["comment"]
        self.exact(self.call("DELETE", "%s/%d" % (base, c["id"]), token=ta), 403, COMMENT_FORBIDDEN)
        self.assertEqual(self.count("comments", "id = %d" % c["id"]), 1)
        ghost = unique("no-such-article-")
        self.assertEqual(self.count("articles", "slug = %s" % sql_lit(ghost)), 0)
        self.exact(self.call("DELETE", "/api/articles/%s/comments/1" % q(ghost), token=tc), 404, ARTICLE_NOT_FOUND)
        missing = int(self.scalar("SELECT coalesce(max(id), 0) + 1000 FROM comments"))
        self.exact(self.call("DELETE", "%s/%d" % (base, missing), token=tc), 404, COMMENT_NOT_FOUND)
        self.assertEqual(self.count("comments", "id = %d" % c["id"]), 1)

    # -- 3. PUT /api/user refusals

    def test_put_user_blank_values_422_row_unchanged(self):
        user, token, _ = self.register()
        self.call("PUT", "/api/user", {"user": {"bio": "kept", "image": "https://img.example/k.png"}},
                  token=token, expect=200)
        uid = self.user_id(user["username"])
        before = self.user_row(uid)
        for field in ("username", "email", "password"):
            for value in ("", None):
                r = self.call("PUT", "/api/user", {"user": {field: value}}, token=token)
                self.exact(r, 422, blank(field))
                self.assertEqual(self.user_row(uid), before, "after %s=%r" % (field, value))
        r = self.call("PUT", "/api/user", {"user": {}}, token=token)
        errors = self.errors(r, 422, "user")
        self.assertEqual(list(errors), ["user"], str(r))
        self.assertEqual(self.user_row(uid), before)
        self.call("GET", "/api/user", token=token, expect=200)

    def test_put_user_taken_422_register_taken_409(self):
        a, ta, _ = self.register()
        b, tb, _ = self.register()
        uid = self.user_id(b["username"])
        before = self.user_row(uid)
        self.exact(self.call("PUT", "/api/user", {"user": {"username": a["username"]}}, token=tb), 422,
                   taken("username"))
        self.assertEqual(self.user_row(uid), before)
        self.exact(self.call("PUT", "/api/user", {"user": {"email": a["email"]}}, token=tb), 422, taken("email"))
        self.assertEqual(self.user_row(uid), before)
        users = self.count("users")
        r = self.call("POST", "/api/users", {"user": {"username": a["username"], "email": unique("d") + "@x.org",
                                                      "password": "pass-word"}})
        self.exact(r, 409, taken("username"))
        r = self.call("POST", "/api/users", {"user": {"username": unique("d"), "email": a["email"], "password": "pass-word"}})
        self.exact(r, 409, taken("email"))
        self.assertEqual(self.count("users"), users)

    def test_password_rule(self):
        """NIST SP 800-63B 5.1.1.2: at least 8 characters, counted as characters, not
        bytes; no composition rule; "" is blank; on register and on update, where a refusal
        changes nothing and the old password still logs in."""
        too_short = {"errors": {"password": ["is too short (minimum is 8 characters)"]}}
        users = self.count("users")
        for short in ("a", "1234567", "\u00e9" * 7):
            r = self.call("POST", "/api/users", {"user": {"username": unique("p"), "email": unique("p") + "@x.org",
                                                          "password": short}})
            self.exact(r, 422, too_short)
        r = self.call("POST", "/api/users", {"user": {"username": unique("p"), "email": unique("p") + "@x.org",
                                                      "password": ""}})
        self.exact(r, 422, blank("password"))
        self.assertEqual(self.count("users"), users)
        user, token, _ = self.register(password="12345678")  # eight digits: no composition rule
        self.login(user["email"], "12345678", expect=200)
        uid = int(self.scalar("SELECT id FROM users WHERE email = %s" % sql_lit(user["email"])))
        before = self.user_row(uid)
        self.exact(self.call("PUT", "/api/user", {"user": {"password": "short"}}, token=token), 422, too_short)
        self.assertEqual(self.user_row(uid), before)
        self.login(user["email"], "12345678", expect=200)
        eight = "\u00e9" * 8  # 8 characters, 16 bytes
        r = self.call("PUT", "/api/user", {"user": {"password": eight}}, token=token, expect=200)
        self.assertEqual(r.json, {"user": {"email": user["email"], "token": token, "username": user["username"],
                                           "bio": None, "image": None}})
        self.login(user["email"], eight, expect=200)
        self.login(user["email"], "12345678", expect=401)

    # -- the remaining deliberate differences (docs/board-api.md), pinned

    def test_documented_differences(self):
        _, token, _ = self.register()
        art = self.create_article(token)
        # paging bounds the spec leaves open (limit >= 1, offset >= 0, no maximum)
        self.exact(self.list_articles(limit=101, expect=422), 422,
                   {"errors": {"limit": ["must be an integer from 1 to 100"]}})
        self.exact(self.list_articles(offset=1000001, expect=422), 422,
                   {"errors": {"offset": ["must be an integer from 0 to 1000000"]}})
        self.assertLessEqual(len(self.list_articles(limit=100).json["articles"]), 100)
        # a bad token is 401 wherever authentication is optional, GET /api/articles/:slug included
        unknown = "fedcba9876543210" * 4
        self.assertEqual(self.count("sessions", "token_hash = sha256(decode('%s', 'hex'))" % unknown), 0)
        self.exact(self.call("GET", "/api/articles/" + q(art["slug"]), token=unknown), 401, BAD_TOKEN)
        # the same title twice: two articles, two slugs ending in their ids, never 409
        again = self.create_article(token, title=art["title"])
        self.assertNotEqual(again["slug"], art["slug"])
        for a in (art, again):
            self.assertTrue(a["slug"].endswith("-%d" % self.article_id(a["slug"])), a["slug"])

    # -- 4. tagList in byte order

    def test_taglist_sorted_in_every_article_response(self):
        author, ta, _ = self.register()
        reader, tr, _ = self.register()
        want = ["dragons", "training"]
        art = self.create_article(ta, tagList=["training", "dragons"])
        self.assertEqual(art["tagList"], want, "POST")
        slug = art["slug"]
        self.assertEqual(sorted(self.stored_tags(slug)), want)
        self.assertEqual(self.get_article(slug).json["article"]["tagList"], want, "GET one")
        self.assertEqual(self.item(self.list_articles(author=author["username"]).json, slug)["tagList"], want)
        self.assertEqual(self.item(self.list_articles(tag="dragons", limit=100).json, slug)["tagList"], want)
        self.follow(tr, author["username"])
        self.assertEqual(self.item(self.feed(tr, limit=100).json, slug)["tagList"], want, "feed")
        fav = "/api/articles/%s/favorite" % q(slug)
        for method in ("POST", "DELETE"):
            got = self.call(method, fav, token=tr, expect=200).json["article"]
            check_article(self, got)
            self.assertEqual(got["tagList"], want, method + " favorite")
        r = self.call("PUT", "/api/articles/" + q(slug), {"article": {"description": "new"}}, token=ta, expect=200)
        got = r.json["article"]
        check_schema(self, got, ARTICLE, "article")
        self.assertEqual((got["description"], got["tagList"]), ("new", want), "PUT")

    def test_taglist_byte_order_and_empty(self):
        _, token, _ = self.register()
        art = self.create_article(token, tagList=["b", "B", "a", "_"])
        want = ["B", "_", "a", "b"]  # bytes 0x42 0x5f 0x61 0x62
        self.assertEqual(art["tagList"], want)
        self.assertEqual(self.get_article(art["slug"]).json["article"]["tagList"], want)
        self.assertEqual(sorted(self.stored_tags(art["slug"]), key=lambda s: s.encode()), want)
        empty = self.create_article(token, tagList=[])
        self.assertEqual(empty["tagList"], [])
        self.assertEqual(self.stored_tags(empty["slug"]), [])
        self.assertEqual(self.get_article(empty["slug"]).json["article"]["tagList"], [])
        r = self.call("PUT", "/api/articles/" + q(art["slug"]), {"article": {"tagList": []}}, token=token, expect=200)
        self.assertEqual(r.json["article"]["tagList"], [])
        self.assertEqual(self.count("article_tags", "article_id = %d" % self.article_id(art["slug"])), 0)
        self.assertEqual(self.get_article(art["slug"]).json["article"]["tagList"], [])

    # -- 5. a page past the end

    def test_page_past_the_end_counts_exactly(self):
        author, ta, _ = self.register()
        fan, tf, _ = self.register()
        tag = unique("pasttag")
        for _ in range(3):
            slug = self.create_article(ta, tagList=[tag])["slug"]
        self.call("POST", "/api/articles/%s/favorite" % q(slug), token=tf, expect=200)
        self.follow(tf, author["username"])
        aid, fid = self.user_id(author["username"]), self.user_id(fan["username"])
        cases = (
            ({}, "SELECT count(*) FROM articles"),
            ({"author": author["username"]}, "SELECT count(*) FROM articles WHERE author_id = %d" % aid),
            ({"tag": tag}, "SELECT count(*) FROM article_tags at JOIN tags t ON t.id = at.tag_id"
                           " WHERE t.name = %s" % sql_lit(tag)),
            ({"favorited": fan["username"]}, "SELECT count(*) FROM favorites WHERE user_id = %d" % fid),
        )
        for params, count_sql in cases:
            total = int(self.scalar(count_sql))
            self.assertGreater(total, 0, params)
            r = self.list_articles(offset=total + 500, limit=1, **params)
            self.assertEqual(r.json, {"articles": [], "articlesCount": total}, str(r))
        total = int(self.scalar("SELECT count(*) FROM articles a JOIN follows f ON f.followee_id = a.author_id"
                                " WHERE f.follower_id = %d" % fid))
        self.assertEqual(total, 3)
        r = self.feed(tf, offset=total + 500, limit=1)
        self.assertEqual(r.json, {"articles": [], "articlesCount": total}, str(r))

    # -- 6. anonymous readers

    def test_following_and_favorited_false_without_token(self):
        author, ta, _ = self.register()
        fan, tf, _ = self.register()
        art = self.create_article(ta)
        slug = art["slug"]
        self.call("POST", "/api/articles/%s/favorite" % q(slug), token=tf, expect=200)
        self.follow(tf, author["username"])
        base = "/api/articles/%s/comments" % q(slug)
        self.call("POST", base, {"comment": {"body": "anon check"}}, token=ta, expect=201)
        aid, fid, uid = self.article_id(slug), self.user_id(fan["username"]), self.user_id(author["username"])
        self.assertEqual(self.count("favorites", "article_id = %d AND user_id = %d" % (aid, fid)), 1)
        self.assertEqual(self.count("follows", "follower_id = %d AND followee_id = %d" % (fid, uid)), 1)
        for token, flag in ((tf, True), (None, False)):
            got = self.get_article(slug, token=token).json["article"]
            self.assertEqual((got["favorited"], got["author"]["following"]), (flag, flag), token)
            got = self.item(self.list_articles(token=token, author=author["username"]).json, slug)
            self.assertEqual((got["favorited"], got["author"]["following"]), (flag, flag), token)
            got = self.item(self.list_articles(token=token, favorited=fan["username"]).json, slug)
            self.assertEqual((got["favorited"], got["author"]["following"]), (flag, flag), token)
            prof = self.call("GET", "/api/profiles/" + q(author["username"]), token=token, expect=200).json
            self.assertEqual(prof, {"profile": null_profile(author["username"], flag)})
            comments = self.call("GET", base, token=token, expect=200).json["comments"]
            self.assertEqual([c["author"] for c in comments], [null_profile(author["username"], flag)])


class ConformanceAsync(ConformanceCore, BoardCase):
    MODE = "async"
    COUNT_PAGINATION = False


class ConformanceAsyncCount(ConformanceCore, BoardCase):
    MODE = "async"
    COUNT_PAGINATION = True


class ConformanceSync(ConformanceCore, BoardCase):
    MODE = "sync"
    COUNT_PAGINATION = False


class ConformanceSyncCount(ConformanceCore, BoardCase):
    MODE = "sync"
    COUNT_PAGINATION = True


if __name__ == "__main__":
    unittest.main()
