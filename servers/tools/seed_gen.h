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
 * Adding a table (the board app's articles, tags, favorites, comments): write
 * its generator, declare it below, and add a row to seed_tables in seed.c
 * after the tables it references. A table that does not exist yet (its
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

#endif
