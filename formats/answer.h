/* Parsing an LLM's answer to a Step-TP prompt (pipeline-reference.md §2.1,
 * §6 "Answer parsing"), internal API.
 *
 * An answer is `<think>COT</think><answer>LITERAL</answer>` where LITERAL is
 * a JSON or Python-literal dict (single variant) or list of dicts (multi
 * variant) with the keys `transformed_IR` and `applied_strategy` (the
 * prompt's `applied_strategies` is accepted too, as a string or a list of
 * strings) and, in lists, `idx`. Both closing-tag spellings (`</think>`,
 * `<\think>`, `</answer>`, `<\answer>`) are accepted. Like the reference's
 * search parser, it falls back to the text after the last closing think tag
 * (```json fences stripped) when there is no answer block, repairs a
 * truncated list (cut at the last complete entry and closed), and wraps a
 * bare entry with `idx` in a list. A top-level string is parsed once more
 * (answers stored as a JSON-encoded string of the literal).
 *
 * Input is untrusted: any bytes, any length up to the limit; the parser
 * never reads past `len`, recurses at most LEIR__ANSWER_MAX_DEPTH levels and
 * allocates O(len). Every failure has a reason (leir__answer_reason) and a
 * message with the byte offset in the answer text. */
#ifndef LEIR_DATASET_ANSWER_H
#define LEIR_DATASET_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "leir/common.h"

#define LEIR__ANSWER_MAX_DEPTH 64
#define LEIR__ANSWER_MAX_ITEMS 4096
#define LEIR__ANSWER_MAX_BYTES ((size_t)64 << 20)

/* Why an answer (or one entry of a list answer) was rejected. */
typedef enum leir__answer_reason {
  LEIR__ANSWER_OK = 0,
  LEIR__ANSWER_EMPTY,            /* no text, or only whitespace */
  LEIR__ANSWER_TOO_LARGE,        /* over LEIR__ANSWER_MAX_BYTES */
  LEIR__ANSWER_NO_ANSWER,        /* no answer block and no literal after the think block */
  LEIR__ANSWER_SYNTAX,           /* the literal does not parse */
  LEIR__ANSWER_TOO_DEEP,         /* nesting over LEIR__ANSWER_MAX_DEPTH */
  LEIR__ANSWER_NOT_OBJECT,       /* the value (or a list entry) is not a dict */
  LEIR__ANSWER_EMPTY_LIST,       /* an empty list */
  LEIR__ANSWER_TOO_MANY_ITEMS,   /* a list over LEIR__ANSWER_MAX_ITEMS entries */
  LEIR__ANSWER_MISSING_IR,       /* no transformed_IR key */
  LEIR__ANSWER_BAD_IR,           /* transformed_IR not a non-empty string */
  LEIR__ANSWER_MISSING_STRATEGY, /* neither applied_strategy nor applied_strategies */
  LEIR__ANSWER_BAD_STRATEGY,     /* not a non-empty string or list of them */
  LEIR__ANSWER_BAD_IDX,          /* idx present but not an integer */
  LEIR__ANSWER_BAD_TEXT,         /* a string with invalid UTF-8 or a NUL byte */
  LEIR__ANSWER_REASON_COUNT
} leir__answer_reason;

/* "empty", "syntax", ...: static; the rule of the last error is
 * "answer.<name>". */
const char *leir__answer_reason_name(leir__answer_reason reason);

/* Flags of a parsed answer: how it was found. */
#define LEIR__ANSWER_HAD_THINK 0x1u        /* a think block (closed) was present */
#define LEIR__ANSWER_BACKSLASH_TAG 0x2u    /* a `<\think>` or `<\answer>` closing tag */
#define LEIR__ANSWER_NO_ANSWER_TAG 0x4u    /* no <answer> block: text after the think block */
#define LEIR__ANSWER_UNCLOSED 0x8u         /* <answer> without a closing tag */
#define LEIR__ANSWER_REPAIRED 0x10u        /* a truncated list was cut and closed, or an entry wrapped */
#define LEIR__ANSWER_STRING_WRAPPED 0x20u  /* the literal was a string holding the literal */
#define LEIR__ANSWER_PLURAL_KEY 0x40u      /* applied_strategies instead of applied_strategy */

/* One transformed IR of an answer. Strings are NUL-terminated, valid UTF-8,
 * owned by the answer. */
typedef struct leir__answer_item {
  leir__answer_reason reason; /* LEIR__ANSWER_OK, or why this entry is unusable */
  char message[160];          /* the reason in words ("" when OK) */
  const char *ir;             /* transformed_IR (NULL when not OK) */
  size_t ir_len;
  const char *const *strategies; /* applied strategy names as written (>= 1 when OK) */
  size_t n_strategies;
  int has_idx;
  int64_t idx;
} leir__answer_item;

typedef struct leir__answer {
  leir__arena arena;         /* owns everything below */
  uint32_t flags;            /* LEIR__ANSWER_* */
  int is_list;               /* the literal was a list (multi variant) */
  const char *think;         /* the think text ("" when none) */
  size_t think_len;
  leir__answer_item *items;  /* n_items entries; a dict answer has one */
  size_t n_items;
  size_t n_ok;               /* entries with reason OK */
} leir__answer;

/* Parses `len` bytes of answer text. On success (at least one usable entry)
 * *out is the answer (free with leir__answer_free) and the entries that are
 * unusable carry their reason. On failure *out is NULL, *reason (may be NULL)
 * says why, and the last error (LEIR_ERR_PARSE, rule "answer.<reason>",
 * line and column in the text) says where; LEIR_ERR_NOMEM when memory ran
 * out. Never reads past `len`. */
leir_status leir__answer_parse(const char *text, size_t len, leir__answer **out,
                               leir__answer_reason *reason);
void leir__answer_free(leir__answer *answer);

/* The strategy name as the catalogue spells it: trimmed, lower case, spaces
 * and hyphens turned into underscores ("Loop Binding" -> "loop_binding").
 * Writes at most cap-1 bytes and a NUL; returns the length it needed. */
size_t leir__strategy_name_normalize(const char *name, char *buf, size_t cap);

#endif
