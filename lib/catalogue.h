/* Size of the strategy catalogue (spec/strategies.md §2) for fixed tables in
 * the library, its tests and benchmarks. Not public: callers ask
 * leir_strategy_count(), so the catalogue may grow within a major version
 * without breaking compiled code (docs/abi.md). */
#ifndef LEIR_CATALOGUE_H
#define LEIR_CATALOGUE_H

#define LEIR_STRATEGY_COUNT 44

#endif
