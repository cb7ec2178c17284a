/*
 * cpuburn: spends a given amount of the calling thread's CPU time, the cost
 * of a slower stack's request (--app-cpu-us, /work/cpu). CPU time rather
 * than wall time: preempted on a shared core, a request still costs its CPU,
 * which is what those cases are about. Pure computation, any thread.
 */
#ifndef SUTLAB_CPUBURN_H
#define SUTLAB_CPUBURN_H

#include <stdint.h>

/* CLOCK_THREAD_CPUTIME_ID in nanoseconds. */
uint64_t cpuburn_thread_ns(void);

/* Spins until the calling thread has used ns more CPU time. */
void cpuburn_ns(uint64_t ns);

#endif
