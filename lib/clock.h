/* The library's one clock (internal): monotonic seconds, for deadlines,
 * budgets and elapsed times everywhere (never wall-clock time, which jumps). */
#ifndef LEIR_LIB_CLOCK_H
#define LEIR_LIB_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (an arbitrary origin: only differences mean
 * anything). Thread-safe. */
double leir__now(void);

#endif
