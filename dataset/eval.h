/* Internals of leir_eval (docs/dataset.md, "leir eval"): the prompts of a
 * dataset with their labels (eval_prompts.c), the judgement of one
 * transformed IR (eval_judge.c), the scoring of the answers file (eval.c)
 * and the reports (eval_report.c). */
#ifndef LEIR_DATASET_EVAL_H
#define LEIR_DATASET_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "answer.h"
#include "ds.h"
#include "literal.h"

/* The pass metrics, each counted per transformed IR and per answer (a
 * sample of its prompt, for pass@k). */
enum {
  LEIR__EV_EQUAL = 0, /* differs from the prompt's program (structure) and bitwise EQUAL */
  LEIR__EV_CLOSE,     /* differs and EQUAL or CLOSE under its class (tolerance or reassociation bound) */
  LEIR__EV_REFERENCE, /* the Step-TP reference's count: its tolerance rule holds (differing or not) */
  LEIR__EV_NMETRICS
};

/* A verified label of a prompt, by structure. */
typedef struct leir__ev_label {
  uint64_t hash;          /* leir__program_hash_structure, with the prompt's signature */
  const char *strategy;
  int reassociating;      /* its step reassociates: judged against the f64 truth */
} leir__ev_label;

typedef struct leir__ev_prompt {
  const char *id, *kind, *orig, *name, *user;
  uint32_t n;             /* transformed IRs the prompt asks for */
  int level;
  uint32_t depth;
  const leir__lit *known;
  const leir__lit *label_list; /* "labels" (eval, validation) or "samples" (archive) */
  size_t order;           /* position in the files: the first of equal ids wins */
  leir_program *program;  /* parsed on first use */
  uint64_t hash;          /* its structure hash */
  leir_verifier *verifier;     /* judges by class */
  leir_verifier *ref_verifier; /* the reference's pass rule; made on first use */
  leir__ev_label *labels;
  size_t nlabels;
  int broken;             /* the dataset's program does not load */
  /* answer lines for this prompt (its samples) and how many passed */
  uint64_t samples, pass[LEIR__EV_NMETRICS];
} leir__ev_prompt;

typedef struct leir__ev_row {
  uint64_t answers, parsed, items, different, label, grounded;
  uint64_t pass[LEIR__EV_NMETRICS];       /* transformed IRs that pass */
  uint64_t multi_answers;                 /* answers to multi prompts ... */
  uint64_t multi_pass[LEIR__EV_NMETRICS]; /* ... with at least N distinct IRs that pass */
} leir__ev_row;

typedef struct leir__ev_named {
  char name[64];
  leir__ev_row r;
} leir__ev_named;

/* Rows by name, in the order of first appearance. */
typedef struct leir__ev_table {
  leir__ev_named *v;
  size_t n, cap;
} leir__ev_table;

struct leir_eval {
  leir__arena arena;
  char *texts[3];              /* eval.jsonl, validation.jsonl, archive.jsonl */
  leir__ev_prompt *p;
  size_t np, capp;
  leir__ev_prompt **by_id;     /* sorted by id, then order */
  leir_eval_options opts;
  uint32_t k[16];              /* the k of pass@k (opts.k, copied) */
  size_t nk;
  leir_backend *interp, *cpu;
  leir__ev_row all, single, multi, level[4];
  leir__ev_table strat;        /* by the label's strategy */
  leir__ev_table slevel;       /* by the label's strategy level */
  leir__ev_table named;        /* by the strategy the answer names */
  leir__strbuf lines;          /* per-answer JSON entries */
  uint64_t n_lines;
};

/* The outcome of one transformed IR. */
typedef struct leir__ev_item {
  int different, label, grounded;
  int pass[LEIR__EV_NMETRICS];
  uint64_t hash;               /* structure hash (0: did not parse) */
  uint32_t vclass;             /* LEIR_VERIFY_CLASS_* judged */
  const char *verdict;
  char strategy[64];           /* as the answer names it (normalized) */
  char label_strategy[64];     /* the matching label's ("" when none) */
  char reason[48];
  char message[200];
} leir__ev_item;

/* ---- eval_prompts.c ---- */
/* Loads the prompts of one file (eval.jsonl, validation.jsonl or
 * archive.jsonl); `text` is modified and must outlive the eval. */
leir_status leir__ev_load(leir_eval *ev, char *text, size_t len, const char *label);
/* Sorts the id index (after the last leir__ev_load). */
leir_status leir__ev_index(leir_eval *ev);
/* The prompt with this id, else with this prompt text; NULL when none. */
leir__ev_prompt *leir__ev_find(leir_eval *ev, const char *id, const char *prompt);
/* The prompt's program, signature, structure hash, labels and verifier. */
leir_status leir__ev_prepare(leir_eval *ev, leir__ev_prompt *r);
/* The verifier of the reference's pass rule (made on first use). */
leir_status leir__ev_ref_verifier(leir_eval *ev, leir__ev_prompt *r, leir_verifier **out);
/* Sets the prompt's signature on `c` (the answer's program). */
leir_status leir__ev_set_signature(const leir__ev_prompt *r, leir_program *c);

/* ---- eval_judge.c ---- */
/* Parses the item's IR (*out: the program with the prompt's signature when
 * it takes it, else NULL with out->reason "ir.parse") and its structure
 * hash (res->hash). */
void leir__ev_parse(const leir__ev_prompt *r, const leir__answer_item *it, leir_program **out,
                    int *sig_ok, leir__ev_item *res);
/* Judges the parsed item (takes `c`). */
void leir__ev_judge(leir_eval *ev, leir__ev_prompt *r, const leir__answer_item *it, leir_program *c,
                    int sig_ok, leir__ev_item *res);

/* ---- eval_report.c ---- */
/* The row of `name` in `t` (added when new); NULL when memory runs out. */
leir__ev_row *leir__ev_row_of(leir__ev_table *t, const char *name);
void leir__ev_table_free(leir__ev_table *t);
/* pass@k by the unbiased estimator 1 - C(n-c,k)/C(n,k), as a product. */
double leir__ev_pass_at_k(uint64_t n, uint64_t c, uint64_t k);

#endif
