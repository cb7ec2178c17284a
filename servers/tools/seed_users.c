/* Fixture users: user<N> / user<N>@example.com, N = id = 1..size->users,
 * registered in id order (seed_gen.h). */
#include <stdio.h>

#include "tools/seed_gen.h"

int seed_gen_users(seed_ctx_t *ctx, pgcopy_t *out)
{
    char name[32], email[48], ts[SEED_TIME_LEN];
    size_t len;
    for (uint32_t id = 1; id <= ctx->size->users; id++) {
        snprintf(name, sizeof(name), "user%u", id);
        snprintf(email, sizeof(email), "user%u@example.com", id);
        pgcopy_int(out, id);
        pgcopy_text(out, name);
        pgcopy_text(out, email);
        /* The same hash (one salt) for every user: bcrypt at cost 10 takes
         * ~50 ms a hash, 100,000 users would take over an hour. Fixtures trade
         * unique salts for seeding speed; real registrations salt each hash. */
        pgcopy_text(out, ctx->password_hash);
        len = seed_format_time(ts, seed_spread_ms(SEED_USERS_START_MS, id, ctx->size->users));
        pgcopy_textn(out, ts, len); /* created_at */
        pgcopy_textn(out, ts, len); /* updated_at */
        if (pgcopy_end_row(out) != 0)
            return -1;
    }
    return 0;
}
