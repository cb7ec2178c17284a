#include "core/cpuburn.h"

#include <time.h>

/* xorshift rounds between two clock reads. Reading the thread CPU clock is a
 * system call, so a short burn checks more often (about 0.3 µs of work per
 * read) and a long one less (a few µs), keeping both within a read of the
 * target. */
#define ROUNDS_SHORT 256
#define ROUNDS_LONG 4096
#define LONG_BURN_NS 1000000u

uint64_t cpuburn_thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cpuburn_ns(uint64_t ns)
{
    uint64_t until = cpuburn_thread_ns() + ns;
    int rounds = ns >= LONG_BURN_NS ? ROUNDS_LONG : ROUNDS_SHORT;
    uint64_t x = 88172645463325252u;
    volatile uint64_t sink; /* keeps the compiler from dropping the loop */

    while (cpuburn_thread_ns() < until) {
        for (int i = 0; i < rounds; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        sink = x;
    }
    (void)sink;
}
