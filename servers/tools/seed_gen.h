/*
 * seed_gen: the interface between the seed engine (seed.c) and the per-table
 * row generators (seed_users.c, seed_delivery.c, ...). Internal to `sutlab db
 * seed`.
 *
 * A generator writes all rows of one table, ids included, through a pgcopy_t
 * whose COPY names exactly the columns of its seed_table_t entry, drawing
 * randomness only from ctx->rng (the table's own stream). Ids are dense from
 * 1, so a generator can point at rows of another table by number alone
 * (users 1..size->users, stores 1..categories*stores_per_category, ...)
 * without reading them back.
 *
 * Adding a table: write its generator, declare it below, and add a row to
 * seed_tables in seed.c after the tables it references. A table that does not exist yet (its
 * migration has not been written or applied) is skipped unless the entry is
 * marked required.
 */
#ifndef SUTLAB_SEED_GEN_H
#define SUTLAB_SEED_GEN_H

#include "tools/pgcopy.h"
#include "tools/prng.h"
#include "tools/seed.h"

typedef struct seed_ctx {
    const seed_size_t *size;
    uint64_t seed;
    const char *password_hash; /* bcrypt hash of SEED_PASSWORD, shared by every user */
    prng_t rng;                /* this table's stream */
} seed_ctx_t;

/* Writes the table's rows. Returns 0, or -1 when the copy failed (the reason
 * is in the pgcopy_t) or the generator itself did (then it sets out->failed
 * and out->err). */
typedef int (*seed_gen_fn)(seed_ctx_t *ctx, pgcopy_t *out);

typedef struct seed_table {
    const char *name;    /* table, in the default schema */
    const char *columns; /* COPY column list, in the order the generator writes */
    int required;        /* 1: a migrated database always has it (else refuse) */
    seed_gen_fn generate;
} seed_table_t;

/* Number of store categories the delivery generators know names for. */
#define SEED_MAX_STORE_CATEGORIES 20

int seed_gen_users(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_store_categories(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_stores(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_menus(seed_ctx_t *ctx, pgcopy_t *out);

/* The board app (seed_board.c). */
int seed_gen_follows(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_tags(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_articles(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_article_tags(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_favorites(seed_ctx_t *ctx, pgcopy_t *out);
int seed_gen_comments(seed_ctx_t *ctx, pgcopy_t *out);

/* Board fixture times lie in the two years before this instant,
 * 2026-01-01T00:00:00Z (milliseconds since the Unix epoch), whatever the
 * date of the run. */
#define SEED_BOARD_EPOCH_END_MS 1767225600000LL

/* Users and stores are not timed by the board plan; they get instants of
 * their own, also a function of the fixture alone: users register in id
 * order over the day before the board's 730 days (2024-01-01), stores open
 * in id order over their first day (2024-01-02, after every owner exists). */
#define SEED_DAY_MS (86400LL * 1000)
#define SEED_USERS_START_MS (SEED_BOARD_EPOCH_END_MS - 731 * SEED_DAY_MS)
#define SEED_STORES_START_MS (SEED_BOARD_EPOCH_END_MS - 730 * SEED_DAY_MS)

/* The instant of item id (1-based) of n spread over the day from start_ms. */
int64_t seed_spread_ms(int64_t start_ms, uint64_t id, uint64_t n);

/* Bytes seed_format_time writes, NUL included: "2025-03-04 05:06:07.089+00". */
#define SEED_TIME_LEN 27

/* The pure helpers behind the board fixtures (unit-tested). */

/* ms since the Unix epoch as a timestamptz literal in UTC (see
 * SEED_TIME_LEN) into dst, which holds SEED_TIME_LEN bytes. Returns the
 * length, without the NUL. */
size_t seed_format_time(char *dst, int64_t ms);

/* docs/board-api.md's slug: title lower-cased, every run of anything but
 * a-z0-9 one '-', trimmed, then "-<id>" ("article-<id>" when nothing is
 * left). Returns the length, or 0 when dst (dstlen bytes) is too small. */
size_t seed_slugify(char *dst, size_t dstlen, const char *title, uint64_t id);

/* A step in [1, n) coprime to n, picked by r (1 for n <= 2): the walk
 * (start + k * step) mod n, k = 0..n-1, visits every residue once. */
uint64_t seed_coprime_step(uint64_t n, uint64_t r);

/* floor(n * (r / 2^64)^2): an index in [0, n) skewed towards 0 (n > 0). */
uint64_t seed_skewed(uint64_t r, uint64_t n);

/* Name of tag id (1-based): the tag words, then "<word>-2", "<word>-3", ...
 * Distinct for distinct ids. */
void seed_tag_name(char *dst, size_t dstlen, uint64_t id);

/* created_at (ms) of article id of n, for the plan key of a seed: strictly
 * increasing with id, inside the two years before SEED_BOARD_EPOCH_END_MS. */
int64_t seed_board_article_created_ms(uint64_t key, uint64_t n, uint64_t id);

/* The favorites of every article for (seed, size): counts[i] for article
 * i + 1, summing to size->favorites, none above size->users. counts holds
 * size->articles entries. Returns 0, or -1 when the favorites cannot be
 * unique pairs (more than users * articles). */
int seed_board_favorite_counts(uint64_t seed, const seed_size_t *size, uint32_t *counts);

#endif
