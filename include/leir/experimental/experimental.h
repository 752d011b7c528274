/**
 * @file
 * libleir — the experimental tier (`include/leir/experimental/`).
 *
 * Headers in this directory declare APIs that are still settling (search,
 * dataset building). The promise, the same in every header here: no ABI or
 * API promise: any release may change or remove it (a patch release as well
 * as a minor one; functions, types and macros alike).
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
 * In the binary the tier is apart: its functions carry the symbol version
 * LEIR_EXPERIMENTAL_<LEIR_EXPERIMENTAL_VERSION> (lib/libleir.map), the
 * stable ones LEIR_0. A release that changes or removes anything in this
 * tier raises LEIR_EXPERIMENTAL_VERSION and renames the node, so a program
 * linked against another revision stops at load time (the dynamic linker:
 * "version `LEIR_EXPERIMENTAL_1' not found") instead of calling a function
 * whose meaning changed; a release that only adds keeps both. A program can
 * also refuse to build against another revision:
 *
 * @code
 * #if LEIR_EXPERIMENTAL_VERSION != 1
 * #error "written against revision 1 of libleir's experimental tier"
 * #endif
 * @endcode
 *
 * Adding a function here also lists it in the LEIR_EXPERIMENTAL_ node of
 * lib/libleir.map (tests/symbol_versions_test.sh checks both ways).
 *
 * Promotion: move the declarations into a stable header (`include/leir/`)
 * and the names from the map's experimental node to LEIR_0 (a symbol
 * version change: programs linked against the experimental name must be
 * relinked, as the tier's promise allows); from that release on the promise
 * of docs/abi.md holds for them.
 */
#ifndef LEIR_EXPERIMENTAL_EXPERIMENTAL_H
#define LEIR_EXPERIMENTAL_EXPERIMENTAL_H

#ifndef LEIR_EXPERIMENTAL
#error "leir/experimental/ headers carry no ABI promise: define LEIR_EXPERIMENTAL before including them (docs/abi.md)"
#endif

#include "leir/common.h"

/** Revision of the experimental tier's binary interface: the `n` of the
 * symbol version LEIR_EXPERIMENTAL_n that every experimental function
 * carries. Raised by a release that changes or removes anything declared in
 * include/leir/experimental/; independent of LEIR_VERSION. */
#define LEIR_EXPERIMENTAL_VERSION 1

#endif /* LEIR_EXPERIMENTAL_EXPERIMENTAL_H */
