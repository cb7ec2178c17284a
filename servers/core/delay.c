#include "core/delay.h"

#include <string.h>

void delay_set_init(delay_set_t *set, h2o_loop_t *loop)
{
    set->loop = loop;
    set->ready = 0;
}

/* The level for `left` ms: 0 if nothing is left, else the longest duration
 * 2^(i-1) <= left. */
static size_t level_for(uint64_t left)
{
    size_t i = 1;
    if (left == 0)
        return 0;
    while (i + 1 < DELAY_NLEVELS && (UINT64_C(1) << i) <= left)
        i++;
    return i;
}

static void link_next(delay_t *d)
{
    delay_set_t *set = d->set;
    uint64_t now = h2o_now(set->loop);
    size_t i = level_for(d->due > now ? d->due - now : 0);

    if ((set->ready & (UINT32_C(1) << i)) == 0) {
        h2o_timeout_init(set->loop, &set->levels[i], i == 0 ? 0 : UINT64_C(1) << (i - 1));
        set->ready |= UINT32_C(1) << i;
    }
    h2o_timeout_link(set->loop, &set->levels[i], &d->entry);
}

static void on_hop(h2o_timeout_entry_t *entry)
{
    delay_t *d = H2O_STRUCT_FROM_MEMBER(delay_t, entry, entry);
    if (h2o_now(d->set->loop) >= d->due)
        d->cb(d); /* last: the callback may free d */
    else
        link_next(d);
}

void delay_start(delay_set_t *set, delay_t *d, uint64_t ms, delay_cb cb)
{
    memset(&d->entry, 0, sizeof(d->entry));
    d->entry.cb = on_hop;
    d->set = set;
    /* the loop's clock is whole milliseconds, truncated: "now" may already
     * be most of a millisecond old, so one more keeps the wait >= ms */
    d->due = h2o_now(set->loop) + ms + (ms != 0 ? 1 : 0);
    d->cb = cb;
    link_next(d);
}

void delay_cancel(delay_t *d)
{
    if (h2o_timeout_is_linked(&d->entry))
        h2o_timeout_unlink(&d->entry);
}
