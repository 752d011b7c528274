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

#endif
