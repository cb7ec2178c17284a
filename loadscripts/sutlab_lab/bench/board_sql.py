"""The SQL side of bench's board suite: the statement a bench.d pgbench script sends, checked to
be the one sutlab's own session runs and to plan alike; the database prepared for the runs; one
execution of a statement in PostgreSQL alone."""

import json
import os
import re
import time

from .. import REPO
from ..services import client
from ..errors import RunError
from .common import log

ARTICLE_PATH = "/api/articles/"
PAGE_PATH = "/api/articles?limit=20&offset="
_PGBENCH_VAR = re.compile(r":([A-Za-z0-9_]+)")  # what pgbench takes for a variable (not '::')


def get(port, path):
    return client.request("http://127.0.0.1:%d%s" % (port, path), timeout=30)


def pgbench_statement(script):
    """The last SQL statement of a bench.d pgbench script, (sent, canonical): sent = the text
    PostgreSQL receives with -M prepared (every ':name' occurrence numbered $1, $2, ... in order,
    as pgbench does; literal $N left alone), canonical = sent with its E'...\\x3a...' literals
    written back as plain '...:...' (the form the endpoint's C source has)."""
    with open(script) as f:
        lines = [l.rstrip("\n") for l in f if l.strip() and not l.lstrip().startswith(("--", "\\"))]
    text = lines[-1].strip()
    if text.endswith(";"):
        text = text[:-1]
    out, n, i = [], 0, 0
    while i < len(text):
        if text[i] == ":" and text[i + 1:i + 2] == ":":
            out.append("::")
            i += 2
            continue
        m = _PGBENCH_VAR.match(text, i) if text[i] == ":" else None
        if m:
            n += 1
            out.append("$%d" % n)
            i = m.end()
            continue
        out.append(text[i])
        i += 1
    sent = "".join(out)
    canonical = re.sub(r"\bE'((?:[^'\\]|\\x3a)*)'",
                       lambda m: "'" + m.group(1).replace("\\x3a", ":") + "'", sent)
    return sent, canonical


def sutlab_statements(svc):
    """The last statement of each of sutlab's PostgreSQL sessions (pg_stat_activity)."""
    out = svc.sql("SELECT coalesce(json_agg(query), '[]') FROM pg_stat_activity "
                  "WHERE application_name = 'sutlab' AND backend_type = 'client backend'")
    return json.loads(out or "[]")


def check_same_statement(svc, port, path, script, params, what):
    """Requests `path` from sutlab until one of its PostgreSQL sessions shows the statement of
    `script` as its last query (at most 5 tries), then checks that PostgreSQL plans both texts
    alike (EXPLAIN VERBOSE of the two prepared statements). Returns a one-line summary."""
    sent, canonical = pgbench_statement(script)
    seen = []
    for _ in range(5):
        st = get(port, path).status
        if st != 200:
            raise RunError("GET %s returned %s" % (path, st))
        seen = sutlab_statements(svc)
        if canonical in seen:
            break
    else:
        near = [q for q in seen if "FROM articles a JOIN users u" in q]
        raise RunError(
            "%s: the endpoint's statement differs from %s (update the script to the endpoint's "
            "SQL):\n  pgbench sends (unescaped): %s\n  sutlab's sessions last ran:\n%s"
            % (what, os.path.relpath(script, REPO), canonical,
               "\n".join("    " + q + (" [truncated at track_activity_query_size?]"
                                       if len(q.encode()) >= 1023 else "") for q in near)
               or "    (no articles statement)"))
    lit = ", ".join("'%s'" % str(p).replace("'", "''") for p in params)
    marker = "-- bench: next plan --"
    out = svc.psql([], "EXPLAIN of %s" % what, stdin_text=(
        "PREPARE bench_pgbench AS %s;\nPREPARE bench_endpoint AS %s;\n"
        "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE bench_pgbench(%s);\n\\echo '%s'\n"
        "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE bench_endpoint(%s);\n"
        % (sent, canonical, lit, marker, lit)))
    a, sep, b = out.partition(marker)
    if not sep or a.strip() != b.strip():
        raise RunError("%s: PostgreSQL plans pgbench's text and the endpoint's differently:\n%s"
                         % (what, out))
    return "%d-char statement, same text as sutlab's session ran, same EXPLAIN VERBOSE (%d lines)" \
        % (len(canonical), len(a.strip().splitlines()))


def prepare_db(svc, size):
    """Seeds `size` (unless the database holds it), then VACUUM (FREEZE, ANALYZE) and CHECKPOINT:
    no autovacuum or checkpoint under the runs, and count(*) may use the visibility map.
    PostgreSQL may use every CPU meanwhile (parallel index builds); the caller pins it after."""
    cpus = svc.unpin_pg()
    log("bench: board: PostgreSQL unpinned (CPUs %s) for seeding" % cpus)
    svc.seed(size)
    t0 = time.monotonic()
    log("bench: board: VACUUM (FREEZE, ANALYZE); CHECKPOINT")
    svc.sql("VACUUM (FREEZE, ANALYZE)", timeout=900)
    svc.sql("CHECKPOINT", timeout=300)
    vac = time.monotonic() - t0
    n, lo, hi, users, tags = (int(x or 0) for x in svc.sql(
        "SELECT count(*), min(id), max(id), (SELECT count(*) FROM users), "
        "(SELECT count(*) FROM tags) FROM articles").split("|"))
    if n < 21 or (lo, hi) != (1, n):
        raise RunError("expected at least 21 articles with dense ids 1..N, got %d (%s..%s)"
                         % (n, lo, hi))
    return {"size": size, "articles": n, "users": users, "tags": tags,
            "seed_s": svc.seed_seconds.get(size), "vacuum_s": vac}


def explain_ms(svc, setup, statement):
    """Execution time (ms) of one EXPLAIN ANALYZE of `statement` after `setup` (a PREPARE),
    run twice: the second (warm) is returned."""
    out = svc.psql([], "EXPLAIN ANALYZE", timeout=120, stdin_text=(
        "%s;\nEXPLAIN (ANALYZE, TIMING OFF) %s;\nEXPLAIN (ANALYZE, TIMING OFF) %s;\n"
        % (setup, statement, statement)) if setup else (
        "EXPLAIN (ANALYZE, TIMING OFF) %s;\nEXPLAIN (ANALYZE, TIMING OFF) %s;\n"
        % (statement, statement)))
    times = re.findall(r"Execution Time: ([\d.]+) ms", out)
    return float(times[-1]) if times else None


def page_check(port, expect_count, kind, what):
    """The first page answers 20 articles, articlesCount expect_count and X-Total-Count-Kind kind
    (docs/board-api.md); expect_count a (low, high) pair: a count in it (an estimate's)."""
    r = get(port, PAGE_PATH + "0")
    st, body = r.status, r.body
    try:
        doc = json.loads(body)
        got = (len(doc["articles"]), doc["articlesCount"], r.headers.get("x-total-count-kind"))
    except (ValueError, KeyError, TypeError):
        raise RunError("%s: GET %s0 returned %s %r" % (what, PAGE_PATH, st, body[:200]))
    low, high = expect_count if isinstance(expect_count, tuple) else (expect_count, expect_count)
    if st != 200 or got[0] != 20 or got[2] != kind or not isinstance(got[1], int) or not low <= got[1] <= high:
        raise RunError("%s: GET %s0 returned %s with %d articles, articlesCount %s (%s), "
                       "expected 200, 20, %s (%s)" % (what, PAGE_PATH, st, got[0], got[1], got[2],
                                                     "%d-%d" % (low, high) if low != high else low, kind))



def article_slug(body):
    """The slug of GET /api/articles/:slug's article, None when the body is not one."""
    try:
        return json.loads(body)["article"]["slug"]
    except (ValueError, KeyError, TypeError):
        return None
