/**
 * @file
 * libleir — LEIR parsing, strategies, verification and search for LLM-guided
 * tensor program optimization (after Step-TP). Umbrella header.
 */
#ifndef LEIR_LEIR_H
#define LEIR_LEIR_H

#include "leir/common.h"
#include "leir/program.h"
#include "leir/strategy.h"
#include "leir/run.h"
#include "leir/cuda.h"
#include "leir/tir.h"

#endif
