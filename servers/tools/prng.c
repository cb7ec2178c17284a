#include "tools/prng.h"

uint64_t prng_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void prng_seed(prng_t *p, uint64_t seed)
{
    /* splitmix64 never yields four zero words in a row, the one state
     * xoshiro cannot leave. */
    for (int i = 0; i < 4; i++)
        p->s[i] = prng_splitmix64(&seed);
}

void prng_seed_stream(prng_t *p, uint64_t seed, const char *name)
{
    /* FNV-1a of the name, then mixed with the seed through splitmix64 so that
     * nearby seeds and similar names still give unrelated streams. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *c = (const unsigned char *)name; *c != '\0'; c++)
        h = (h ^ *c) * 0x100000001b3ULL;
    uint64_t mix = seed;
    uint64_t a = prng_splitmix64(&mix);
    prng_seed(p, a ^ h);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t prng_next(prng_t *p)
{
    uint64_t *s = p->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t prng_below(prng_t *p, uint64_t n)
{
    if (n == 0)
        return 0;
    /* Lemire's multiply-shift with rejection: unbiased, and the rejection
     * branch is almost never taken for the small n of fixtures. */
    unsigned __int128 m = (unsigned __int128)prng_next(p) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = -n % n;
        while (low < threshold) {
            m = (unsigned __int128)prng_next(p) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

int64_t prng_range(prng_t *p, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0 means the full 2^64 range */
    uint64_t r = span == 0 ? prng_next(p) : prng_below(p, span);
    return (int64_t)((uint64_t)lo + r);
}

int prng_chance(prng_t *p, uint32_t num, uint32_t den)
{
    return prng_below(p, den) < num;
}

void prng_bytes(prng_t *p, void *buf, size_t len)
{
    unsigned char *out = buf;
    while (len > 0) {
        uint64_t v = prng_next(p);
        size_t n = len < sizeof(v) ? len : sizeof(v);
        /* Byte order fixed by hand (not memcpy) so big-endian builds agree. */
        for (size_t i = 0; i < n; i++)
            out[i] = (unsigned char)(v >> (8 * i));
        out += n;
        len -= n;
    }
}

void prng_permutation(prng_t *p, uint32_t *out, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        out[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)prng_below(p, i);
        uint32_t t = out[i - 1];
        out[i - 1] = out[j];
        out[j] = t;
    }
}
