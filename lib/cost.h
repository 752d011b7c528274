/*
 * Target-independent sizes of an analyzed program: bytes of a buffer, and
 * the FLOP/byte counts of include/leir/run.h (leir_program_cost_get). They
 * live in lib/ because they need only the analysis: every backend and the
 * kernel layer use them, none of them owns them.
 */
#ifndef LEIR_COST_H
#define LEIR_COST_H

#include <stdint.h>

#include "analysis.h"
#include "leir/run.h"

/* Bytes of a buffer (elements x dtype size), UINT64_MAX on overflow. */
uint64_t leir__buffer_bytes(const leir__buffer *buf);

/* FLOP/byte counts of an analyzed program (lib/cost.c). */
leir_status leir__program_cost(const leir__analysis *a, leir_program_cost *out);

#endif
