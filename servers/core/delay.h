/*
 * delay: one-shot callbacks after any number of milliseconds on a worker's
 * event loop.
 *
 * A libh2o 2.2.5 timer (h2o_timeout_t) has one duration for all its entries.
 * A delay hops down a ladder of timers of 0, 1, 2, 4 ... 65536 ms, each hop
 * on the longest one that does not overshoot what remains, so any duration
 * ends on the loop's millisecond clock after at most 17 hops (plus one per
 * further 65536 ms), and nothing ticks while nothing waits.
 *
 * A level joins the loop only when first used: libh2o 2.2.5 visits every
 * timer of a loop on every pass, and 18 idle ones cost a trivial request
 * about 4 % of its instructions (callgrind, /health_check).
 *
 * Worker thread only: set-up, start, cancel and the callbacks all run on the
 * thread of the loop. A delay_t must stay allocated until it fired or was
 * cancelled.
 */
#ifndef SUTLAB_DELAY_H
#define SUTLAB_DELAY_H

#include <h2o.h>
#include <stdint.h>

#define DELAY_NLEVELS 18 /* 0 ms, then 2^0 .. 2^16 ms */

typedef struct delay delay_t;
typedef void (*delay_cb)(delay_t *d);

typedef struct delay_set {
    h2o_loop_t *loop;
    h2o_timeout_t levels[DELAY_NLEVELS];
    uint32_t ready; /* bit i: levels[i] is on the loop */
} delay_set_t;

struct delay {
    h2o_timeout_entry_t entry; /* on one of the set's levels while pending */
    delay_set_t *set;
    uint64_t due; /* loop time in ms */
    delay_cb cb;
};

/* Creates the ladder on loop. */
void delay_set_init(delay_set_t *set, h2o_loop_t *loop);

/* Calls cb(d) once at least ms milliseconds have passed (at most about one
 * more: the loop's clock counts whole milliseconds). 0 runs it later in the
 * current loop pass, never from inside delay_start(). */
void delay_start(delay_set_t *set, delay_t *d, uint64_t ms, delay_cb cb);

/* Forgets a pending delay (no effect if it already fired). */
void delay_cancel(delay_t *d);

#endif
