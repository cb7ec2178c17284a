-- pgbench script used by loadscripts/bench (suite board): the page query of sutlab's
-- GET /api/articles?limit=20&offset=K with --count-pagination off (servers/apps/board/articles.c
-- list_all = PAGE_OF("")), $1 = 0 (anonymous),
-- $2 = limit + 1 = 21 (off fetches one row past the page to know whether a next page exists),
-- $3 = K uniform in 0..:maxoffset.
--   pgbench -n -M prepared -T 5 -c 64 -j 1 -D viewer=0 -D limit=21 -D maxoffset=980 -f board_page.sql URL
-- The to_char format's colons are written E'...\x3a...' and the second viewer reference is a
-- literal $1, so that PostgreSQL receives the endpoint's own text (see board_article.sql).
\set offset random(0, :maxoffset)
SELECT a.id AS id, a.slug AS slug, a.title AS title, a.description AS description, NULL::text AS body, to_char(a.created_at AT TIME ZONE 'UTC', E'YYYY-MM-DD"T"HH24\x3aMI\x3aSS.MS"Z"') AS created_at, to_char(a.updated_at AT TIME ZONE 'UTC', E'YYYY-MM-DD"T"HH24\x3aMI\x3aSS.MS"Z"') AS updated_at, a.favorites_count AS favorites_count, EXISTS (SELECT 1 FROM favorites f WHERE f.user_id = :viewer AND f.article_id = a.id) AS favorited, u.username AS username, u.bio AS bio, u.image AS image, EXISTS (SELECT 1 FROM follows fo WHERE fo.follower_id = $1 AND fo.followee_id = u.id) AS following, (SELECT coalesce(json_agg(t.name ORDER BY t.name COLLATE "C"), '[]') FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tag_list FROM (SELECT * FROM articles a  ORDER BY a.created_at DESC, a.id DESC LIMIT :limit OFFSET :offset) a JOIN users u ON u.id = a.author_id ORDER BY a.created_at DESC, a.id DESC;
