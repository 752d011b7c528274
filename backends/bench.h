/* The timing loop shared by backends that time on the host clock. */
#ifndef LEIR_BENCH_H
#define LEIR_BENCH_H

#include "backend.h"

/* Runs kernel k once on its buffers; returns its status. */
typedef leir_status (*leir__run_fn)(void *ctx, leir_kernel *k, void *const *bufs);

/* The protocol of ops->time (backend.h) with the monotonic clock around
 * each call of fn. */
leir_status leir__time_loop(leir_kernel *const *ks, size_t n, void *const *const *bufs,
                            const leir_bench_options *o, leir__run_fn fn, void *ctx,
                            leir__samples *out, leir__exec_result *res);

/* The flush between timed runs keeps its scratch for the rest of the
 * process (the kernel runner calls this once; single-threaded). */
void leir__flush_keep_scratch(void);

/* leir_kernels_compare; with `stop_not_faster` the comparison also ends as
 * soon as A is shown not faster than B by min_effect at the confidence
 * (its interval's upper end at or below 1 + min_effect): what a search
 * needs, since it accepts FASTER only. A FASTER decision is unchanged
 * (the same looks, the same rule); rounds that could only have said SAME,
 * SLOWER or UNDECIDED are saved. */
leir_status leir__kernels_compare_ex(leir_kernel *ka, leir_kernel *kb,
                                     const leir_compare_options *opts, bool stop_not_faster,
                                     leir_comparison *out);

#endif
