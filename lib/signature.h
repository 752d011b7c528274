/* Internal helpers around program signatures. */
#ifndef LEIR_SIGNATURE_H
#define LEIR_SIGNATURE_H

#include "ir.h"

/* Marks known[sym] for every known variable: the signature's, else the
 * inferred one's, else every tensor (inference failed). `known` has
 * p->syms.count entries, zeroed by the caller. */
void leir__known_symbols(const leir_program *p, bool *known);

/* Signature index of a symbol, or UINT32_MAX. */
uint32_t leir__decl_index(const leir_program *p, uint32_t sym);

/* Checks a domain's parameters for an input of dtype dt; on failure writes
 * a sentence to why. */
bool leir__domain_validate(leir_dtype dt, const leir_domain *d, char *why, size_t cap);

#endif
