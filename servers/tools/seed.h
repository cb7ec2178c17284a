/*
 * seed: `sutlab db seed`, the deterministic fixtures (their sizes: README.md).
 *
 * One run loads every fixture table that exists, in one transaction, with
 * COPY: either the whole size is there afterwards or nothing changed. The
 * same size and seed always give the same rows, ids included (every table
 * draws from its own PRNG stream: see prng.h and seed_gen.h). The foreign
 * keys, keys and indexes of the fixture tables are dropped for the load and
 * recreated (and so checked) before the commit, which is several times faster
 * than checking and indexing row by row. Afterwards every serial sequence is
 * moved past the largest id, so the application's own inserts do not collide
 * with fixture rows, and the tables are vacuumed (FREEZE, ANALYZE): all
 * pages visible, statistics fresh, nothing left for autovacuum to do later.
 *
 * A database that already holds fixture rows is refused unless force is set;
 * with force, the fixture tables and sessions are truncated first, in the
 * same transaction. A database without the tables of the migrations is
 * refused with a pointer to `sutlab db migrate`.
 */
#ifndef SUTLAB_SEED_H
#define SUTLAB_SEED_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Row counts of one fixture size (the README's table of sizes). */
typedef struct seed_size {
    const char *name;
    uint32_t users;
    uint32_t articles;
    uint32_t favorites;
    uint32_t comments;
    uint32_t tags;
    uint32_t store_categories;
    uint32_t stores_per_category;
    uint32_t menus_per_store;
} seed_size_t;

typedef struct seed_options {
    const seed_size_t *size;
    uint64_t seed;
    int force;
    int bcrypt_cost;
} seed_options_t;

#define SEED_DEFAULT_SEED 1
#define SEED_DEFAULT_BCRYPT_COST 10
#define SEED_MIN_BCRYPT_COST 4
#define SEED_MAX_BCRYPT_COST 31

/* The fixture password of every seeded user (README: log in as
 * user<N>@example.com / password). */
#define SEED_PASSWORD "password"

/* The size called name, or NULL. */
const seed_size_t *seed_size_lookup(const char *name);

/* "tiny|small|medium|large", for usage messages. */
const char *seed_size_names(void);

/* Seeds the database. Progress lines go to progress (one per table), the
 * summary to out. Returns 0, or -1 with a one-line message in err. */
int seed_run(PGconn *conn, const seed_options_t *opts, FILE *out, FILE *progress, char *err, size_t errlen);

/* Computes the bcrypt ($2b$) hash of password at cost with a salt drawn from
 * the PRNG stream of seed, into out. Deterministic: fixtures are reproducible
 * down to the hash. Returns 0, or -1 with a message in err. */
int seed_password_hash(const char *password, int cost, uint64_t seed, char *out, size_t outlen, char *err,
                       size_t errlen);

#endif
