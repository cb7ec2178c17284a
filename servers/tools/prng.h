/*
 * prng: the deterministic pseudo-random numbers behind `sutlab db seed`.
 *
 * xoshiro256** (Blackman & Vigna) seeded through splitmix64, as its authors
 * recommend. Pure integer arithmetic, no global state, no platform
 * dependence: the same (seed, stream) gives the same sequence on every build,
 * which is what makes "same size + seed = identical rows" hold.
 *
 * Streams: every fixture table draws from its own stream, derived from the
 * run's seed and the table's name, so adding a generator for a new table (or
 * changing how many numbers one table draws) never shifts the rows of another.
 */
#ifndef SUTLAB_PRNG_H
#define SUTLAB_PRNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct prng {
    uint64_t s[4];
} prng_t;

/* One splitmix64 step: advances *state and returns the next output. */
uint64_t prng_splitmix64(uint64_t *state);

/* Seeds from a 64-bit value (any value, 0 included). */
void prng_seed(prng_t *p, uint64_t seed);

/* Seeds the stream named `name` (NUL-terminated) of the run seeded `seed`. */
void prng_seed_stream(prng_t *p, uint64_t seed, const char *name);

/* Next 64 uniformly distributed bits. */
uint64_t prng_next(prng_t *p);

/* Uniform in [0, n) without modulo bias; n == 0 returns 0. */
uint64_t prng_below(prng_t *p, uint64_t n);

/* Uniform in [lo, hi] (inclusive); requires lo <= hi. */
int64_t prng_range(prng_t *p, int64_t lo, int64_t hi);

/* 1 with probability num/den (den > 0), else 0. */
int prng_chance(prng_t *p, uint32_t num, uint32_t den);

/* Fills buf with len pseudo-random bytes. */
void prng_bytes(prng_t *p, void *buf, size_t len);

/* Puts a uniformly random permutation of 0..n-1 into out (Fisher-Yates). */
void prng_permutation(prng_t *p, uint32_t *out, uint32_t n);

#endif
