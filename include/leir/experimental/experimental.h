/**
 * @file
 * libleir — the experimental tier (`include/leir/experimental/`).
 *
 * Headers in this directory declare APIs that are still settling (search,
 * dataset building). They carry **no ABI or API promise**: any release,
 * minor or patch, may change or remove their functions, types and macros.
 * The stable headers (`include/leir/` *.h) never depend on them, and the
 * umbrella header `leir/leir.h` does not include them.
 *
 * Using them: define `LEIR_EXPERIMENTAL` before including one, which says in
 * the caller's source that it will be rebuilt and adapted with every libleir
 * release (the convention of zstd's `ZSTD_STATIC_LINKING_ONLY`):
 *
 * @code
 * #define LEIR_EXPERIMENTAL
 * #include <leir/experimental/search.h>
 * @endcode
 *
 * Without the macro these headers do not compile.
 *
 * Adding a header here:
 *  - include this file first (it enforces the guard and brings in
 *    `leir/common.h`);
 *  - follow the stable tier's rules anyway (`leir_` names, `LEIR_API`,
 *    `leir_status` + last error, ownership in every doc comment, options
 *    structs with a size field, an `_INIT` macro and an `_init()` function),
 *    so that promotion is a move, not a redesign;
 *  - list it in no stable header; `scripts/abi-check.sh` leaves out every
 *    function declared in this directory.
 *
 * Promotion: move the declarations into a stable header (`include/leir/`);
 * from that release on the promise of docs/abi.md holds for them.
 */
#ifndef LEIR_EXPERIMENTAL_EXPERIMENTAL_H
#define LEIR_EXPERIMENTAL_EXPERIMENTAL_H

#ifndef LEIR_EXPERIMENTAL
#error "leir/experimental/ headers carry no ABI promise: define LEIR_EXPERIMENTAL before including them (docs/abi.md)"
#endif

#include "leir/common.h"

#endif /* LEIR_EXPERIMENTAL_EXPERIMENTAL_H */
