/* The monotonic clock (lib/clock.h). */
#include <time.h>

#include "clock.h"

double leir__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
