/*
 * Fixtures of the board app (RealWorld / Conduit, migration 002): follows,
 * tags, articles, article_tags, favorites, comments.
 *
 * Everything, timestamps included, is a function of (size, seed): times are
 * spread over the two years before SEED_BOARD_EPOCH_END_MS, never now().
 * What one table needs of another is recomputed, not read back:
 *
 *  - an article's created_at is a pure function of (seed, id), increasing
 *    with the id, so favorites and comments can be placed after it;
 *  - the favorites of each article are counted up front
 *    (seed_board_favorite_counts, one uint32 per article), so articles carry
 *    the exact favorites_count in their own COPY and the favorites generator
 *    writes exactly that many rows per article, later;
 *  - popularity is an affine permutation of ranks to ids (a few articles get
 *    many favorites and comments, many get none; a few users write many
 *    articles and gather many followers), shared through board_plan_t.
 *
 * Unique (user, article) favorites without a hash set: article a gets n_a <=
 * users favorites from the users (start_a + k * step_a) mod users, k < n_a,
 * with step_a coprime to the number of users, so no user repeats.
 *
 * Sizes the README's table leaves open: follows (0..10 per user, ~5 on
 * average, popular users followed most) and article_tags (0..3 per article,
 * ~1.75); their counts are in the progress output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/seed_gen.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define SPAN_MS (730 * SEED_DAY_MS) /* two years before the epoch end */
#define EPOCH_START_MS (SEED_BOARD_EPOCH_END_MS - SPAN_MS)

/* Most follows a fixture user makes: on average half of it. */
#define MAX_FOLLOWS 10

/* Words of titles, descriptions and bodies: plain lower-case ASCII. */
static const char *const words[] = {
    "server",   "request",  "latency",  "queue",    "thread",   "socket",   "buffer",    "cache",
    "index",    "query",    "table",    "row",      "column",   "lock",     "commit",    "page",
    "worker",   "event",    "loop",     "pool",     "connection", "client", "response",  "header",
    "stream",   "batch",    "pipeline", "memory",   "disk",     "network",  "packet",    "timeout",
    "retry",    "error",    "metric",   "graph",    "benchmark", "load",    "test",      "bottleneck",
    "scale",    "shard",    "replica",  "backup",   "schema",   "migration", "deploy",   "release",
    "fast",     "slow",     "simple",   "careful",  "quiet",    "busy",     "small",     "large",
    "hidden",   "obvious",  "strange",  "stable",   "broken",   "fixed",    "better",    "worse",
    "why",      "how",      "when",     "every",    "one",      "two",      "many",      "few",
    "the",      "a",        "of",       "in",       "on",       "for",      "with",      "without",
    "and",      "or",       "but",      "not",      "is",       "was",      "will",      "can",
    "we",       "you",      "it",       "they",     "our",      "your",     "this",      "that",
    "measure",  "profile",  "tune",     "read",     "write",    "count",    "sort",      "join",
    "wait",     "block",    "spin",     "sleep",    "wake",     "send",     "receive",   "parse",
    "story",    "lesson",   "mistake",  "trick",    "pattern",  "habit",    "myth",      "guide",
    "morning",  "night",    "week",     "year",     "team",     "user",     "customer",  "evening",
};

/* Tag names: distinct, no "-<digits>" ending (the suffix of the ones past
 * the list, see tag_name). */
static const char *const tag_words[] = {
    "postgres",  "performance", "http",      "c",         "linux",      "databases", "caching",   "redis",
    "benchmarks", "latency",    "laravel",   "php",       "indexes",    "sql",       "async",     "networking",
    "testing",   "devops",      "kernel",    "memory",    "concurrency", "design",   "api",       "json",
    "security",  "tls",         "nginx",     "profiling", "debugging",  "rust",      "go",        "python",
    "javascript", "frontend",   "backend",   "cloud",     "containers", "monitoring", "logging",  "tracing",
    "scaling",   "replication", "sharding",  "queues",    "streaming",  "compilers", "algorithms", "career",
    "opinion",   "tutorial",    "story",     "news",      "release",    "books",     "tools",     "editors",
    "git",       "ci",          "hardware",  "storage",   "filesystems", "history",  "math",      "misc",
};

/* An affine permutation of 0..n-1: x -> (x * mul + add) mod n. */
typedef struct perm {
    uint64_t n, mul, add;
} perm_t;

typedef struct board_plan {
    perm_t user_rank;    /* popularity rank -> user index (authors, followees) */
    perm_t article_rank; /* popularity rank -> article index (favorites, comments) */
    uint64_t created_key;
} board_plan_t;

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint64_t seed_coprime_step(uint64_t n, uint64_t r)
{
    if (n <= 2)
        return 1;
    /* Candidates 1..n-1 from a point r picks; coprimes are dense enough
     * (phi(n)/n > 0.1 for every n a fixture uses) that few are tried. */
    uint64_t s = 1 + r % (n - 1);
    while (gcd(s, n) != 1)
        s = s + 1 < n ? s + 1 : 1;
    return s;
}

uint64_t seed_skewed(uint64_t r, uint64_t n)
{
    /* u = r / 2^64, then floor(n * u^2): density 1/(2 sqrt(x)), so low
     * indexes are much likelier (the top 1% get 10% of the draws) and the
     * tail is still reached. Integer only: the same on every platform. */
    uint64_t sq = (uint64_t)(((unsigned __int128)r * r) >> 64);
    return (uint64_t)(((unsigned __int128)sq * n) >> 64);
}

static void perm_init(perm_t *p, prng_t *rng, uint64_t n)
{
    p->n = n;
    p->mul = seed_coprime_step(n, prng_next(rng));
    p->add = n > 0 ? prng_below(rng, n) : 0;
}

static uint64_t perm_apply(const perm_t *p, uint64_t x)
{
    return p->n == 0 ? 0 : (x * p->mul + p->add) % p->n;
}

static void plan_init(board_plan_t *plan, uint64_t seed, const seed_size_t *sz)
{
    prng_t rng;
    prng_seed_stream(&rng, seed, "board.plan");
    perm_init(&plan->user_rank, &rng, sz->users);
    perm_init(&plan->article_rank, &rng, sz->articles);
    plan->created_key = prng_next(&rng);
}

int64_t seed_board_article_created_ms(uint64_t key, uint64_t articles, uint64_t id)
{
    /* Article id owns the slot [(id-1) * span / n, id * span / n) of the two
     * years and sits at a hashed point of it: strictly increasing with the
     * id, before the epoch end, and computable from the id alone. */
    uint64_t lo = (uint64_t)(((unsigned __int128)(id - 1) * SPAN_MS) / articles);
    uint64_t hi = (uint64_t)(((unsigned __int128)id * SPAN_MS) / articles);
    uint64_t h = key ^ (id * 0xd1b54a32d192ed03ULL);
    uint64_t off = hi > lo ? prng_splitmix64(&h) % (hi - lo) : 0;
    return EPOCH_START_MS + (int64_t)(lo + off);
}

int64_t seed_spread_ms(int64_t start_ms, uint64_t id, uint64_t n)
{
    return start_ms + (int64_t)(id - 1) * (SEED_DAY_MS / (int64_t)(n > 0 ? n : 1));
}

size_t seed_format_time(char *dst, int64_t ms)
{
    /* Days to civil date: Howard Hinnant's days_from_civil, inverted. */
    int64_t days = ms >= 0 ? ms / SEED_DAY_MS : -((-ms + SEED_DAY_MS - 1) / SEED_DAY_MS);
    int64_t rem = ms - days * SEED_DAY_MS;
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2)
        y++;
    int64_t secs = rem / 1000;
    int n = snprintf(dst, SEED_TIME_LEN, "%04d-%02d-%02d %02d:%02d:%02d.%03d+00", (int)y, (int)m, (int)d,
                     (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60), (int)(rem % 1000));
    return n > 0 && n < SEED_TIME_LEN ? (size_t)n : 0;
}

size_t seed_slugify(char *dst, size_t dstlen, const char *title, uint64_t id)
{
    size_t n = 0;
    int dash = 0;
    for (const unsigned char *c = (const unsigned char *)title; *c != '\0'; c++) {
        unsigned char ch = *c >= 'A' && *c <= 'Z' ? (unsigned char)(*c - 'A' + 'a') : *c;
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
            if (n + 2 >= dstlen)
                return 0;
            if (dash && n > 0)
                dst[n++] = '-';
            dash = 0;
            dst[n++] = (char)ch;
        } else {
            dash = 1;
        }
    }
    int m = snprintf(dst + n, dstlen - n, "%s-%llu", n == 0 ? "article" : "", (unsigned long long)id);
    if (m < 0 || (size_t)m >= dstlen - n)
        return 0;
    return n + (size_t)m;
}

int seed_board_favorite_counts(uint64_t seed, const seed_size_t *sz, uint32_t *counts)
{
    uint64_t a = sz->articles, u = sz->users;
    board_plan_t plan;
    prng_t rng;

    if ((uint64_t)sz->favorites > a * u)
        return -1; /* more favorites than distinct (user, article) pairs */
    plan_init(&plan, seed, sz);
    prng_seed_stream(&rng, seed, "board.favorite_counts");
    memset(counts, 0, a * sizeof(*counts));
    for (uint32_t j = 0; j < sz->favorites; j++) {
        uint64_t i = perm_apply(&plan.article_rank, seed_skewed(prng_next(&rng), a));
        /* An article every user already likes passes the favorite on to the
         * next one: terminates because favorites <= articles * users. */
        while (counts[i] >= u)
            i = i + 1 < a ? i + 1 : 0;
        counts[i]++;
    }
    return 0;
}

/* Text ---------------------------------------------------------------- */

typedef struct text {
    char buf[2048];
    size_t len;
} text_t;

static void text_word(text_t *t, const char *w, int capital)
{
    size_t n = strlen(w);
    if (t->len + n + 2 >= sizeof(t->buf))
        return;
    memcpy(t->buf + t->len, w, n);
    if (capital && w[0] >= 'a' && w[0] <= 'z')
        t->buf[t->len] = (char)(w[0] - 'a' + 'A');
    t->len += n;
}

static void text_lit(text_t *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 < sizeof(t->buf)) {
        memcpy(t->buf + t->len, s, n);
        t->len += n;
    }
}

/* nwords words, the first capitalised, separated by spaces. */
static void text_words(text_t *t, prng_t *rng, unsigned nwords)
{
    for (unsigned i = 0; i < nwords; i++) {
        if (i > 0)
            text_lit(t, " ");
        text_word(t, words[prng_below(rng, COUNT(words))], i == 0);
    }
}

static void text_sentence(text_t *t, prng_t *rng, unsigned lo, unsigned hi)
{
    unsigned nwords = (unsigned)prng_range(rng, lo, hi);
    text_words(t, rng, nwords);
    text_lit(t, prng_chance(rng, 1, 8) ? "?" : ".");
}

/* Rows ---------------------------------------------------------------- */

static int oom(pgcopy_t *out, const char *what)
{
    out->failed = 1;
    snprintf(out->err, sizeof(out->err), "out of memory (%s)", what);
    return -1;
}

static void put_time(pgcopy_t *out, int64_t ms)
{
    char ts[SEED_TIME_LEN];
    pgcopy_textn(out, ts, seed_format_time(ts, ms));
}

/* A moment in (after, epoch end], likelier soon after `after`. */
static int64_t time_after(prng_t *rng, int64_t after)
{
    int64_t room = SEED_BOARD_EPOCH_END_MS - after;
    if (room <= 1)
        return after + 1;
    return after + 1 + (int64_t)seed_skewed(prng_next(rng), (uint64_t)room - 1);
}

static int follow_ok(uint64_t f, uint64_t follower, const uint64_t *chosen, uint64_t nchosen)
{
    if (f == follower)
        return 0;
    for (uint64_t i = 0; i < nchosen; i++)
        if (chosen[i] == f)
            return 0;
    return 1;
}

int seed_gen_follows(seed_ctx_t *ctx, pgcopy_t *out)
{
    const seed_size_t *sz = ctx->size;
    uint64_t n = sz->users;
    uint64_t chosen[MAX_FOLLOWS];
    board_plan_t plan;

    plan_init(&plan, ctx->seed, sz);
    for (uint64_t follower = 0; follower < n; follower++) {
        /* 0..MAX_FOLLOWS follows, never more than the other users. */
        uint64_t k = prng_below(&ctx->rng, (n < MAX_FOLLOWS + 1 ? n : MAX_FOLLOWS + 1));
        for (uint64_t j = 0; j < k; j++) {
            /* Popular users are followed more; a few redraws avoid self and
             * repeats, then a scan takes the next user that is neither (one
             * exists: k < n). */
            uint64_t f = 0;
            for (int attempt = 0; attempt < 32; attempt++) {
                f = perm_apply(&plan.user_rank, seed_skewed(prng_next(&ctx->rng), n));
                if (follow_ok(f, follower, chosen, j))
                    break;
            }
            while (!follow_ok(f, follower, chosen, j))
                f = f + 1 < n ? f + 1 : 0;
            chosen[j] = f;
            pgcopy_int(out, (int64_t)follower + 1);
            pgcopy_int(out, (int64_t)f + 1);
            put_time(out, EPOCH_START_MS + (int64_t)prng_below(&ctx->rng, SPAN_MS));
            if (pgcopy_end_row(out) != 0)
                return -1;
        }
    }
    return 0;
}

void seed_tag_name(char *dst, size_t dstlen, uint64_t id)
{
    uint64_t w = (id - 1) % COUNT(tag_words), round = (id - 1) / COUNT(tag_words);
    if (round == 0)
        snprintf(dst, dstlen, "%s", tag_words[w]);
    else
        snprintf(dst, dstlen, "%s-%llu", tag_words[w], (unsigned long long)round + 1);
}

int seed_gen_tags(seed_ctx_t *ctx, pgcopy_t *out)
{
    char name[64];
    for (uint64_t id = 1; id <= ctx->size->tags; id++) {
        seed_tag_name(name, sizeof(name), id);
        pgcopy_int(out, (int64_t)id);
        pgcopy_text(out, name);
        if (pgcopy_end_row(out) != 0)
            return -1;
    }
    return 0;
}

int seed_gen_articles(seed_ctx_t *ctx, pgcopy_t *out)
{
    const seed_size_t *sz = ctx->size;
    board_plan_t plan;
    static text_t title, desc, body;
    char slug[sizeof(title.buf) + 32];
    uint32_t *favs = malloc(((size_t)sz->articles + 1) * sizeof(*favs));

    if (favs == NULL)
        return oom(out, "favorite counts");
    if (seed_board_favorite_counts(ctx->seed, sz, favs) != 0) {
        free(favs);
        out->failed = 1;
        snprintf(out->err, sizeof(out->err), "%u favorites do not fit %u users x %u articles", sz->favorites,
                 sz->users, sz->articles);
        return -1;
    }
    plan_init(&plan, ctx->seed, sz);
    for (uint64_t id = 1; id <= sz->articles; id++) {
        title.len = desc.len = body.len = 0;
        text_words(&title, &ctx->rng, (unsigned)prng_range(&ctx->rng, 3, 7));
        text_sentence(&desc, &ctx->rng, 6, 14);
        unsigned paragraphs = (unsigned)prng_range(&ctx->rng, 1, 3);
        for (unsigned p = 0; p < paragraphs; p++) {
            unsigned sentences = (unsigned)prng_range(&ctx->rng, 2, 4);
            if (p > 0)
                text_lit(&body, "\n\n");
            for (unsigned s = 0; s < sentences; s++) {
                if (s > 0)
                    text_lit(&body, " ");
                text_sentence(&body, &ctx->rng, 5, 12);
            }
        }
        title.buf[title.len] = '\0';
        size_t slen = seed_slugify(slug, sizeof(slug), title.buf, id);
        uint64_t author = perm_apply(&plan.user_rank, seed_skewed(prng_next(&ctx->rng), sz->users)) + 1;
        int64_t created = seed_board_article_created_ms(plan.created_key, sz->articles, id);
        int64_t updated = created;
        if (prng_chance(&ctx->rng, 1, 4)) { /* a quarter were edited, within a month */
            int64_t room = SEED_BOARD_EPOCH_END_MS - created;
            updated += (int64_t)prng_below(&ctx->rng, (uint64_t)(room < 30 * SEED_DAY_MS ? room : 30 * SEED_DAY_MS));
        }
        pgcopy_int(out, (int64_t)id);
        pgcopy_textn(out, slug, slen);
        pgcopy_textn(out, title.buf, title.len);
        pgcopy_textn(out, desc.buf, desc.len);
        pgcopy_textn(out, body.buf, body.len);
        pgcopy_int(out, (int64_t)author);
        pgcopy_int(out, favs[id - 1]);
        put_time(out, created);
        put_time(out, updated);
        if (pgcopy_end_row(out) != 0)
            break;
    }
    free(favs);
    return out->failed ? -1 : 0;
}

int seed_gen_article_tags(seed_ctx_t *ctx, pgcopy_t *out)
{
    const seed_size_t *sz = ctx->size;
    uint64_t t = sz->tags;

    for (uint64_t id = 1; id <= sz->articles; id++) {
        /* 0, 1, 2 or 3 tags: 10%, 30%, 35%, 25%. */
        uint64_t r = prng_below(&ctx->rng, 20);
        uint64_t k = r < 2 ? 0 : r < 8 ? 1 : r < 15 ? 2 : 3;
        uint64_t chosen[3];
        if (k > t)
            k = t;
        for (uint64_t j = 0; j < k; j++) {
            /* Low tag ids (the plain words) are the popular ones. */
            uint64_t tag = seed_skewed(prng_next(&ctx->rng), t);
            for (int again = 1; again;) {
                again = 0;
                for (uint64_t i = 0; i < j; i++)
                    if (chosen[i] == tag) {
                        tag = tag + 1 < t ? tag + 1 : 0;
                        again = 1;
                    }
            }
            chosen[j] = tag;
            pgcopy_int(out, (int64_t)id);
            pgcopy_int(out, (int64_t)tag + 1);
            pgcopy_int(out, (int64_t)j);
            if (pgcopy_end_row(out) != 0)
                return -1;
        }
    }
    return 0;
}

int seed_gen_favorites(seed_ctx_t *ctx, pgcopy_t *out)
{
    const seed_size_t *sz = ctx->size;
    uint64_t u = sz->users;
    board_plan_t plan;
    uint32_t *favs = malloc(((size_t)sz->articles + 1) * sizeof(*favs));

    if (favs == NULL)
        return oom(out, "favorite counts");
    if (seed_board_favorite_counts(ctx->seed, sz, favs) != 0) {
        free(favs);
        out->failed = 1;
        snprintf(out->err, sizeof(out->err), "too many favorites for the users and articles");
        return -1;
    }
    plan_init(&plan, ctx->seed, sz);
    for (uint64_t id = 1; id <= sz->articles && !out->failed; id++) {
        uint64_t n = favs[id - 1];
        if (n == 0)
            continue;
        int64_t created = seed_board_article_created_ms(plan.created_key, sz->articles, id);
        uint64_t start = prng_below(&ctx->rng, u);
        uint64_t step = seed_coprime_step(u, prng_next(&ctx->rng));
        for (uint64_t k = 0; k < n; k++) {
            pgcopy_int(out, (int64_t)((start + k * step) % u) + 1);
            pgcopy_int(out, (int64_t)id);
            put_time(out, time_after(&ctx->rng, created));
            if (pgcopy_end_row(out) != 0)
                break;
        }
    }
    free(favs);
    return out->failed ? -1 : 0;
}

typedef struct comment {
    int64_t created;
    uint32_t article; /* index, 0-based */
    uint32_t author;  /* index, 0-based */
} comment_t;

static int comment_order(const void *pa, const void *pb)
{
    const comment_t *a = pa, *b = pb;
    if (a->created != b->created)
        return a->created < b->created ? -1 : 1;
    if (a->article != b->article)
        return a->article < b->article ? -1 : 1;
    return a->author < b->author ? -1 : a->author > b->author;
}

int seed_gen_comments(seed_ctx_t *ctx, pgcopy_t *out)
{
    const seed_size_t *sz = ctx->size;
    board_plan_t plan;
    static text_t body;
    comment_t *c = malloc(((size_t)sz->comments + 1) * sizeof(*c));

    if (c == NULL)
        return oom(out, "comments");
    plan_init(&plan, ctx->seed, sz);
    /* Drawn first, then numbered in time order: ids grow with created_at,
     * overall and within every article (oldest first is id order). */
    for (uint64_t i = 0; i < sz->comments; i++) {
        uint64_t a = perm_apply(&plan.article_rank, seed_skewed(prng_next(&ctx->rng), sz->articles));
        c[i].article = (uint32_t)a;
        c[i].author = (uint32_t)prng_below(&ctx->rng, sz->users);
        c[i].created = time_after(&ctx->rng, seed_board_article_created_ms(plan.created_key, sz->articles, a + 1));
    }
    qsort(c, sz->comments, sizeof(*c), comment_order);
    for (uint64_t i = 0; i < sz->comments; i++) {
        body.len = 0;
        unsigned sentences = (unsigned)prng_range(&ctx->rng, 1, 3);
        for (unsigned s = 0; s < sentences; s++) {
            if (s > 0)
                text_lit(&body, " ");
            text_sentence(&body, &ctx->rng, 3, 10);
        }
        pgcopy_int(out, (int64_t)i + 1);
        pgcopy_int(out, (int64_t)c[i].article + 1);
        pgcopy_int(out, (int64_t)c[i].author + 1);
        pgcopy_textn(out, body.buf, body.len);
        put_time(out, c[i].created);
        put_time(out, c[i].created);
        if (pgcopy_end_row(out) != 0)
            break;
    }
    free(c);
    return out->failed ? -1 : 0;
}
