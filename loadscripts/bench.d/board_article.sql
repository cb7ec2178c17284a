-- pgbench script used by loadscripts/bench (suite board): the statement sutlab's
-- GET /api/articles/:slug runs (servers/apps/board/articles.c stmt_by_slug =
-- BOARD_ARTICLE_SELECT("a.body") "WHERE a.slug = $2", board_internal.h), $1 = 0 (anonymous), $2 = a slug.
--   pgbench -n -M prepared -T 5 -c 64 -j 1 -D viewer=0 -D loaded=0 -D narticles=N -f board_article.sql URL
-- Written so that, after pgbench's own rewriting, PostgreSQL receives the endpoint's text:
--   * pgbench turns every ':name' into a new parameter, even inside quotes, so the two colons of
--     the to_char format are written E'...\x3a...' (the same string constant once parsed);
--   * the first viewer reference is :viewer (-> $1) and the second a literal $1, as in the
--     endpoint (pgbench would number a second :viewer $2); :slug becomes $2.
-- bench checks both at run time: this text, unescaped and numbered as pgbench does, must equal the
-- statement sutlab's own PostgreSQL session last ran (pg_stat_activity), and EXPLAIN VERBOSE of the
-- two prepared statements must be identical.
-- pgbench's \set is numeric only, so a session cannot draw a random slug per transaction without a
-- second query: each session looks one random article up in its first transaction (\gset) and
-- reads that article for the rest of the run (64 sessions = 64 random articles per run).
\if :loaded = 0
\set id random(1, :narticles)
SELECT slug FROM articles WHERE id = :id \gset
\set loaded 1
\endif
SELECT a.id AS id, a.slug AS slug, a.title AS title, a.description AS description, a.body AS body, to_char(a.created_at AT TIME ZONE 'UTC', E'YYYY-MM-DD"T"HH24\x3aMI\x3aSS.MS"Z"') AS created_at, to_char(a.updated_at AT TIME ZONE 'UTC', E'YYYY-MM-DD"T"HH24\x3aMI\x3aSS.MS"Z"') AS updated_at, a.favorites_count AS favorites_count, EXISTS (SELECT 1 FROM favorites f WHERE f.user_id = :viewer AND f.article_id = a.id) AS favorited, u.username AS username, u.bio AS bio, u.image AS image, EXISTS (SELECT 1 FROM follows fo WHERE fo.follower_id = $1 AND fo.followee_id = u.id) AS following, (SELECT coalesce(json_agg(t.name ORDER BY t.name COLLATE "C"), '[]') FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tag_list FROM articles a JOIN users u ON u.id = a.author_id WHERE a.slug = :slug;
