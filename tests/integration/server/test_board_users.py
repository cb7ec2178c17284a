#!/usr/bin/python3
"""Board conformance: users and authentication (RealWorld's OpenAPI /users, /users/login, /user,
plus POST /api/users/logout), in both --db-modes.

Contracts: RealWorld's OpenAPI file (v2.0.0), the README's endpoint table (board app),
docs/board-api.md (authoritative where the spec is open). State is checked with psql.
"""

import unittest

from boardlib import (
    BCRYPT_COST, FIXTURE_PASSWORD, TOKEN_RE, USER, BoardCase, check_schema, q, sql_lit, token_hash_hex,
    unique,
)


class UsersCore:
    """Register, login, current user, update, logout: run in async and sync mode."""

    def test_register_201_user_and_stored_session(self):
        name = unique("Reg")
        email = name.lower() + "@example.org"
        r = self.call("POST", "/api/users", {"user": {"username": name, "email": email, "password": "s3cret!!"}},
                      expect=201)
        user = r.json["user"]
        check_schema(self, user, USER, "user")
        self.assertEqual(user["username"], name)
        self.assertEqual(user["email"], email)
        self.assertIsNone(user["bio"])
        self.assertIsNone(user["image"])
        self.assertRegex(user["token"], TOKEN_RE)
        # stored: one users row with a bcrypt hash at --bcrypt-cost, one session holding SHA-256
        row = self.rows("SELECT id, password_hash, bio, image IS NULL FROM users WHERE username = %s"
                        % sql_lit(name))
        self.assertEqual(len(row), 1, row)
        uid, pwhash, bio, image_null = row[0]  # psql prints NULL as ""
        self.assertTrue(pwhash.startswith("$2b$%02d$" % BCRYPT_COST), pwhash)
        self.assertNotIn("s3cret!!", pwhash)
        self.assertEqual((bio, image_null), ("", "t"))
        self.assertEqual(self.scalar("SELECT bio IS NULL FROM users WHERE id = %s" % uid), "t")
        sessions = self.rows("SELECT encode(token_hash, 'hex'), revoked_at IS NULL FROM sessions WHERE user_id = %s"
                             % uid)
        self.assertEqual(sessions, [[token_hash_hex(user["token"]), "t"]])
        # and the token works
        me = self.call("GET", "/api/user", token=user["token"], expect=200).json["user"]
        check_schema(self, me, USER, "user")
        self.assertEqual((me["username"], me["email"], me["token"]), (name, email, user["token"]))

    def test_register_duplicates_409_no_row(self):
        user, token, _ = self.register()
        before = self.count("users")
        r = self.call("POST", "/api/users", {"user": {"username": user["username"], "email": unique("o") + "@x.org",
                                                      "password": "pass-word"}})
        self.errors(r, 409, "username", r"^has already been taken$")
        r = self.call("POST", "/api/users", {"user": {"username": unique("o"), "email": user["email"],
                                                      "password": "pass-word"}})
        self.errors(r, 409, "email", r"^has already been taken$")
        self.assertEqual(self.count("users"), before)

    def test_login_ok_wrong_password_unknown_email(self):
        user, token, password = self.register()
        r = self.login(user["email"], password, expect=200)
        logged = r.json["user"]
        check_schema(self, logged, USER, "user")
        self.assertEqual(logged["username"], user["username"])
        self.assertRegex(logged["token"], TOKEN_RE)
        self.assertNotEqual(logged["token"], token, "login must issue a new token")
        # both sessions are valid
        for t in (token, logged["token"]):
            self.assertEqual(self.call("GET", "/api/user", token=t, expect=200).json["user"]["username"],
                             user["username"])
        wrong = self.login(user["email"], password + "x", expect=401)
        self.errors(wrong, 401, "credentials", r"^invalid$")
        unknown = self.login("nobody-" + user["email"], password, expect=401)
        self.errors(unknown, 401, "credentials", r"^invalid$")
        self.assertEqual(wrong.json, unknown.json, "wrong password and unknown email must look alike")
        sessions = self.count("sessions", "user_id = %d" % self.user_id(user["username"]))
        self.assertEqual(sessions, 2, "failed logins must not create sessions")

    def test_current_user_requires_valid_token(self):
        user, token, _ = self.register()
        r = self.call("GET", "/api/user", expect=401)
        self.errors(r, 401, "token")
        self.assertEqual(r.headers.get("www-authenticate", "").split()[0:1], ["Token"], str(r))
        for header in ("Token abc", "Token " + "0" * 64, "Token " + token[:-1], "Token " + token + "00",
                       "Basic dXNlcjpwYXNz", token, "Token", "Token  " + token.upper() + "x"):
            r = self.call("GET", "/api/user", headers={"Authorization": header})
            self.errors(r, 401, "token")
        r = self.call("GET", "/api/user", headers={"Authorization": "Bearer " + token}, expect=200)
        self.assertEqual(r.json["user"]["username"], user["username"])

    def test_update_user_fields(self):
        user, token, password = self.register()
        uid = self.user_id(user["username"])
        new_name = unique("Renamed")
        new_email = new_name.lower() + "@example.net"
        r = self.call("PUT", "/api/user", {"user": {"bio": "I like tests", "image": "https://img.example/a.png"}},
                      token=token, expect=200)
        u = r.json["user"]
        check_schema(self, u, USER, "user")
        self.assertEqual((u["bio"], u["image"], u["token"], u["username"]),
                         ("I like tests", "https://img.example/a.png", token, user["username"]))
        r = self.call("PUT", "/api/user", {"user": {"username": new_name, "email": new_email}}, token=token,
                      expect=200)
        u = r.json["user"]
        self.assertEqual((u["username"], u["email"], u["bio"], u["token"]),
                         (new_name, new_email, "I like tests", token))
        self.assertEqual(self.rows("SELECT username, email, bio, image FROM users WHERE id = %d" % uid),
                         [[new_name, new_email, "I like tests", "https://img.example/a.png"]])
        me = self.call("GET", "/api/user", token=token, expect=200).json["user"]
        self.assertEqual((me["username"], me["email"], me["bio"], me["image"]),
                         (new_name, new_email, "I like tests", "https://img.example/a.png"))
        # image back to null
        u = self.call("PUT", "/api/user", {"user": {"image": None}}, token=token, expect=200).json["user"]
        self.assertIsNone(u["image"])
        self.assertEqual(self.scalar("SELECT image IS NULL FROM users WHERE id = %d" % uid), "t")
        # the profile follows the rename
        self.call("GET", "/api/profiles/" + q(user["username"]), expect=404)
        self.call("GET", "/api/profiles/" + q(new_name), expect=200)
        # login by the new email; the old one is unknown
        self.login(new_email, password, expect=200)
        self.login(user["email"], password, expect=401)
        # keeping one's own username is not a conflict
        self.call("PUT", "/api/user", {"user": {"username": new_name}}, token=token, expect=200)

    def test_update_password(self):
        user, token, password = self.register()
        old_hash = self.scalar("SELECT password_hash FROM users WHERE username = %s" % sql_lit(user["username"]))
        r = self.call("PUT", "/api/user", {"user": {"password": "brand-new-pw"}}, token=token, expect=200)
        self.assertEqual(r.json["user"]["token"], token)
        new_hash = self.scalar("SELECT password_hash FROM users WHERE username = %s" % sql_lit(user["username"]))
        self.assertNotEqual(new_hash, old_hash)
        self.assertTrue(new_hash.startswith("$2b$"), new_hash)
        self.assertNotIn("brand-new-pw", new_hash)
        self.login(user["email"], "brand-new-pw", expect=200)
        self.login(user["email"], password, expect=401)
        self.call("GET", "/api/user", token=token, expect=200)  # the current session survives

    def test_update_conflicts_and_bad_values_leave_row_unchanged(self):
        a, ta, _ = self.register()
        b, tb, _ = self.register()
        uid = self.user_id(b["username"])
        snapshot = self.rows("SELECT username, email, password_hash, bio, image FROM users WHERE id = %d" % uid)
        # the spec lists no 409 for PUT /user: a taken name is a 422 there
        r = self.call("PUT", "/api/user", {"user": {"username": a["username"]}}, token=tb)
        self.errors(r, 422, "username", "has already been taken")
        r = self.call("PUT", "/api/user", {"user": {"email": a["email"]}}, token=tb)
        self.errors(r, 422, "email", "has already been taken")
        for body, field in ((
                {"username": ""}, "username"), ({"username": 42}, "username"), ({"username": "x" * 65}, "username"),
                ({"email": "no-at-sign"}, "email"), ({"email": ""}, "email"), ({"email": ["a@b.c"]}, "email"),
                ({"email": "a@" + "b" * 253}, "email"), ({"password": ""}, "password"),
                ({"password": "p" * 257}, "password"), ({"password": 12345678}, "password"),
                ({"password": "seven77"}, "password"),
                ({"bio": 7}, "bio"), ({"image": {"url": "x"}}, "image"), ({"username": None}, "username"),
                ({"email": None}, "email"), ({"password": None}, "password"), ({}, "user"),
                # one bad field spoils the whole update
                ({"bio": "changed", "username": ""}, "username")):
            r = self.call("PUT", "/api/user", {"user": body}, token=tb)
            self.errors(r, 422, field)
        self.assertEqual(self.rows("SELECT username, email, password_hash, bio, image FROM users WHERE id = %d"
                                   % uid), snapshot)
        self.call("PUT", "/api/user", {"user": {"bio": "x"}}, expect=401)

    def test_logout_revokes_only_that_token(self):
        user, t1, password = self.register()
        t2 = self.login(user["email"], password).json["user"]["token"]
        author, ta, _ = self.register()
        art = self.create_article(ta)
        r = self.call("POST", "/api/users/logout", token=t1, expect=204)
        self.assertEqual(r.body, b"")
        self.assertEqual(self.scalar("SELECT revoked_at IS NOT NULL FROM sessions WHERE token_hash = "
                                     "decode('%s', 'hex')" % token_hash_hex(t1)), "t")
        # the revoked token is 401 everywhere, also where authentication is optional
        for method, path, body in (
                ("GET", "/api/user", None),
                ("PUT", "/api/user", {"user": {"bio": "x"}}),
                ("POST", "/api/users/logout", None),
                ("GET", "/api/articles", None),
                ("GET", "/api/articles/feed", None),
                ("GET", "/api/articles/" + q(art["slug"]), None),
                ("POST", "/api/articles", {"article": {"title": "t", "description": "d", "body": "b"}}),
                ("POST", "/api/articles/%s/favorite" % q(art["slug"]), None),
                ("GET", "/api/articles/%s/comments" % q(art["slug"]), None),
                ("POST", "/api/articles/%s/comments" % q(art["slug"]), {"comment": {"body": "c"}}),
                ("GET", "/api/profiles/" + q(author["username"]), None),
                ("POST", "/api/profiles/%s/follow" % q(author["username"]), None)):
            r = self.call(method, path, body, token=t1)
            self.errors(r, 401, "token")
        # nothing was written with it
        self.assertEqual(self.count("favorites"), 0)
        self.assertEqual(self.count("follows"), 0)
        self.assertEqual(self.count("comments", "article_id = %d" % self.article_id(art["slug"])), 0)
        # the same user's other session still works
        self.assertEqual(self.call("GET", "/api/user", token=t2, expect=200).json["user"]["username"],
                         user["username"])
        self.call("POST", "/api/users/logout", expect=401)
        # logging in again gives a fresh valid token
        t3 = self.login(user["email"], password).json["user"]["token"]
        self.call("GET", "/api/user", token=t3, expect=200)


class UsersAsync(UsersCore, BoardCase):
    MODE = "async"


class UsersSync(UsersCore, BoardCase):
    MODE = "sync"


class UsersValidation(BoardCase):
    """Registration and login input rules of docs/board-api.md: 422 with one entry per field."""

    def register_raw(self, user):
        return self.call("POST", "/api/users", {"user": user})

    def assert_rejected(self, user, fields, message=None):
        before = self.count("users")
        r = self.register_raw(user)
        errors = self.errors(r, 422)
        for f in fields:
            self.assertIn(f, errors, "expected an error for %r: %s" % (f, r))
            if message:
                self.assertTrue(any(message in m for m in errors[f]), "%r: %s" % (message, r))
        self.assertEqual(self.count("users"), before, "a rejected registration created a row: %s" % r)
        return errors

    def test_missing_fields_one_entry_each(self):
        self.assert_rejected({}, ["username", "email", "password"], "can't be blank")
        self.assert_rejected({"email": "a@b.c", "password": "pass-word"}, ["username"], "can't be blank")
        self.assert_rejected({"username": unique("m"), "password": "pass-word"}, ["email"], "can't be blank")
        self.assert_rejected({"username": unique("m"), "email": unique("m") + "@b.c"}, ["password"],
                             "can't be blank")
        self.assert_rejected({"username": "", "email": "", "password": ""}, ["username", "email", "password"],
                             "can't be blank")
        self.assert_rejected({"username": None, "email": None, "password": None},
                             ["username", "email", "password"])

    def test_wrong_types(self):
        errors = self.assert_rejected({"username": 123, "email": ["a@b.c"], "password": {"p": 1}},
                                      ["username", "email", "password"], "must be a string")
        self.assertEqual(len(errors), 3, errors)
        self.assert_rejected({"username": True, "email": unique("t") + "@b.c", "password": "pass-word"}, ["username"],
                             "must be a string")
        self.assert_rejected({"username": unique("t"), "email": unique("t") + "@b.c", "password": 1.5},
                             ["password"], "must be a string")
        before = self.count("users")
        for body in ({"user": []}, {"user": "x"}, {"user": 1}, {"user": None}, {}, {"users": {}}):
            r = self.call("POST", "/api/users", body)
            self.errors(r, 422)
        for raw in (b"[]", b"1", b'"user"', b"null"):
            r = self.call("POST", "/api/users", raw=raw)
            self.assertIn(r.status, (400, 422), str(r))
        self.assertEqual(self.count("users"), before)

    def test_length_limits(self):
        # username 1..64 characters, email <= 254 with '@', password 1..72 bytes
        self.assert_rejected({"username": "u" * 65, "email": unique("l") + "@b.c", "password": "pass-word"},
                             ["username"], "is too long")
        self.register(username="U" + unique("x").ljust(63, "x")[:63])  # exactly 64
        long_email = unique("e") + "@" + "d" * 250
        self.assert_rejected({"username": unique("l"), "email": long_email[:255], "password": "pass-word"}, ["email"],
                             "is too long")
        local = unique("e")
        email254 = local + "@" + "d" * (254 - len(local) - 1)
        self.assertEqual(len(email254), 254)
        self.register(email=email254)
        # 256 bytes: 64 characters of any script (NIST SP 800-63B asks for at least 64)
        self.assert_rejected({"username": unique("l"), "email": unique("l") + "@b.c", "password": "p" * 257},
                             ["password"], "is too long")
        self.assert_rejected({"username": unique("l"), "email": unique("l") + "@b.c", "password": "\u00e9" * 129},
                             ["password"], "is too long")
        u, _, _ = self.register(password="\U0001F600" * 64)  # 64 four-byte characters: 256 bytes
        self.login(u["email"], "\U0001F600" * 64, expect=200)
        # past bcrypt's 72 bytes every byte still counts (the password is hashed as its SHA-256)
        long_pw = "p" * 72 + "-the-rest-counts"
        u, _, _ = self.register(password=long_pw)
        self.login(u["email"], long_pw, expect=200)
        self.login(u["email"], "p" * 72, expect=401)
        self.login(u["email"], "p" * 72 + "-the-rest-differs", expect=401)
        u, _, _ = self.register(password="p" * 72)
        self.login(u["email"], "p" * 72, expect=200)
        self.assert_rejected({"username": unique("l"), "email": "no-at-sign.example", "password": "pass-word"},
                             ["email"], "is invalid")

    def test_username_limit_counts_bytes(self):
        # docs: username 1-64 bytes of UTF-8; 30 two-byte characters and 4 ASCII fit, 31 + 4 do not
        name = "\u00e9" * 30 + unique("")[-4:]
        self.assertEqual(len(name.encode()), 64)
        user, token, _ = self.register(username=name, email=unique("c") + "@example.org")
        self.assertEqual(user["username"], name)
        self.assertEqual(self.scalar("SELECT count(*) FROM users WHERE username = %s" % sql_lit(name)), "1")
        self.assert_rejected({"username": "\u00e9" * 31 + "abcd", "email": unique("d") + "@b.c", "password": "pass-word"},
                             ["username"], "is too long")

    def test_login_validation(self):
        user, _, password = self.register()
        for body, fields in (({}, ["email", "password"]), ({"email": user["email"]}, ["password"]),
                             ({"password": password}, ["email"]), ({"email": "", "password": ""}, ["email", "password"]),
                             ({"email": 5, "password": password}, ["email"]),
                             ({"email": user["email"], "password": ["x"]}, ["password"])):
            r = self.call("POST", "/api/users/login", {"user": body})
            errors = self.errors(r, 422)
            for f in fields:
                self.assertIn(f, errors, str(r))
        for body in ({"user": []}, {"user": "x"}, {}):
            self.errors(self.call("POST", "/api/users/login", body), 422)
        self.assertEqual(self.count("sessions", "user_id = %d" % self.user_id(user["username"])), 1)

    def test_registered_password_is_case_sensitive_and_exact(self):
        user, _, _ = self.register(password="CaseSensitive")
        self.login(user["email"], "casesensitive", expect=401)
        self.login(user["email"], "CaseSensitive ", expect=401)
        self.login(user["email"], "CaseSensitive", expect=200)


class FixtureUsers(BoardCase):
    """`sutlab db seed --size tiny`: user<N>@example.com / password logs in (README.md)."""

    SEED = True

    def test_fixture_users_log_in(self):
        self.assertEqual(self.count("users", "email LIKE 'user%@example.com'"), 10)
        for i in (1, 7, 10):
            r = self.login("user%d@example.com" % i, FIXTURE_PASSWORD, expect=200)
            u = r.json["user"]
            check_schema(self, u, USER, "user")
            self.assertEqual(u["email"], "user%d@example.com" % i)
            self.assertEqual(u["username"], self.scalar("SELECT username FROM users WHERE email = 'user%d@example.com'"
                                                        % i))
            self.call("GET", "/api/user", token=u["token"], expect=200)
        self.login("user1@example.com", "Password", expect=401)

    def test_register_next_to_fixtures(self):
        # the id sequence continues after the COPY-loaded fixture ids
        before = self.count("users")
        user, token, _ = self.register()
        self.assertEqual(self.count("users"), before + 1)
        taken = self.scalar("SELECT username FROM users WHERE email = 'user1@example.com'")
        r = self.call("POST", "/api/users", {"user": {"username": taken, "email": unique("f") + "@x.org",
                                                      "password": "pass-word"}})
        self.errors(r, 409, "username")


if __name__ == "__main__":
    unittest.main()
