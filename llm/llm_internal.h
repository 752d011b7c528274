/* Internal helpers shared by llm/client.c and llm/propose.c. */
#ifndef LEIR_LLM_INTERNAL_H
#define LEIR_LLM_INTERNAL_H

#include <stddef.h>

#include "leir/common.h"

struct leir_llm;

/* The system prompt of the client's chats ("" for none). */
const char *leir__llm_system_prompt(const struct leir_llm *llm);

/* The leir_*_options_init() pattern: defaults into the first `size` bytes. */
leir_status leir__llm_init_struct(void *opts, size_t size, const void *defaults, size_t full_size,
                                  const char *type);

#endif
