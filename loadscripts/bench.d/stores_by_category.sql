-- pgbench script used by loadscripts/bench: the statement sutlab's GET /stores?categoryId=N runs
-- (servers/apps/delivery/delivery.c, delivery_stores_by_category), with N uniform in 1..:categories.
--   pgbench -n -M prepared -T 5 -c 64 -j 1 -D categories=20 -f stores_by_category.sql URL
\set cat random(1, :categories)
SELECT id, name, phone, address, owner_id, open_status, introduction, category_id FROM stores WHERE category_id = :cat ORDER BY id;
