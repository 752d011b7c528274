/*
 * leir dataset build and leir eval (dataset/, include/leir/experimental/dataset.h):
 * every training record checked independently (its answer parses, its
 * transformed IR verifies against the prompt's program with a fresh
 * leir_verify and is one step of the named strategy, its prompt is the
 * Step-TP wording), splits that hold (no held-out state or label in train,
 * recomputed from the files; no source program in two splits; leaking
 * sources fail the build), the filtering rules, determinism, the union of
 * shards, resuming after SIGKILL, JSONL program sources, config errors, and
 * scoring right, wrong and malformed answers.
 */
#define LEIR_EXPERIMENTAL
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "answer.h"
#include "ds.h"
#include "leir/experimental/dataset.h"
#include "literal.h"
#include "prompt.h"
#include "testutil.h"

static const char *const outputs[] = {"train.jsonl", "eval.jsonl", "validation.jsonl", "archive.jsonl",
                                      "rejections.jsonl", "summary.json", "README.md", "strategies.svg",
                                      "levels.svg", NULL};

static const char small_config[] =
    "name: test-small\n"
    "seed: 11\n"
    "sources:\n"
    "  workloads: [level1/softmax, level1/ReLU, level2/Matmul_Swish_Sum_GroupNorm]\n"
    "  shapes: [small]\n"
    "walks: {count: 1, depth: 2}\n"
    "sampling: {per_strategy: 1}\n"
    "eval: {fraction: 0.25}\n";

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static char *tmpdir(void) {
  char tmpl[] = "/tmp/leir-dataset-XXXXXX";
  char *d = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(d);
  return strdup(d);
}

static char *path_in(const char *dir, const char *name) {
  char *p = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(p, "%s/%s", dir, name);
  return p;
}

static char *slurp(const char *dir, const char *name, size_t *len) {
  char *p = path_in(dir, name);
  char *t = test_read_file(p, len);
  free(p);
  return t;
}

static leir_status build(const char *config, const char *out, uint32_t k, uint32_t n) {
  leir_dataset_options o;
  ck_assert_int_eq(leir_dataset_options_init(&o, sizeof o), LEIR_OK);
  o.shard_index = k;
  o.shard_count = n;
  leir_dataset *ds = NULL;
  leir_status st = leir_dataset_open(&ds, config, strlen(config), NULL, out, &o);
  if (st == LEIR_OK) st = leir_dataset_run(ds);
  leir_dataset_free(ds);
  return st;
}

/* Builds the config in file `path` (relative paths in it from `base`). */
static leir_status build_in(const char *path, const char *base, const char *out) {
  size_t len = 0;
  char *text = test_read_file(path, &len);
  leir_dataset *ds = NULL;
  leir_status st = leir_dataset_open(&ds, text, len, base, out, NULL);
  if (st == LEIR_OK) st = leir_dataset_run(ds);
  leir_dataset_free(ds);
  free(text);
  return st;
}

static void expect_same_outputs(const char *a, const char *b) {
  for (int i = 0; outputs[i]; i++) {
    size_t la, lb;
    char *x = slurp(a, outputs[i], &la), *y = slurp(b, outputs[i], &lb);
    ck_assert_msg(la == lb && memcmp(x, y, la) == 0, "%s differs between %s and %s", outputs[i], a, b);
    free(x);
    free(y);
  }
}

static const char *sget(const leir__lit *d, const char *k) {
  const char *s = leir__lit_str(leir__lit_get(d, k));
  return s ? s : "";
}

/* A program with the signature of a record's "known" list. */
static leir_program *program_of(const char *text, const leir__lit *known) {
  leir_program *p = test_parse(text);
  leir_tensor_decl d[16];
  int64_t shapes[16][LEIR_MAX_RANK];
  size_t n = 0;
  for (const leir__lit *e = known->first; e; e = e->next, n++) {
    d[n].name = sget(e, "name");
    ck_assert_int_eq(leir_dtype_from_name(sget(e, "dtype"), &d[n].dtype), LEIR_OK);
    d[n].role = !strcmp(sget(e, "role"), "input") ? LEIR_ROLE_INPUT : LEIR_ROLE_OUTPUT;
    uint32_t r = 0;
    for (const leir__lit *x = leir__lit_get(e, "shape")->first; x; x = x->next) shapes[n][r++] = x->i;
    d[n].rank = r;
    d[n].shape = shapes[n];
  }
  ck_assert_int_eq(leir_program_set_signature(p, d, n), LEIR_OK);
  return p;
}

START_TEST(test_every_record_verifies_independently) {
  char *dir = tmpdir();
  ck_assert_int_eq(build(small_config, dir, 0, 1), LEIR_OK);
  size_t len;
  char *arch = slurp(dir, "archive.jsonl", &len);
  leir__arena a;
  leir__arena_init(&a, 0);
  leir_backend *be = NULL;
  ck_assert_int_eq(leir_backend_open(&be, "interp", NULL), LEIR_OK);
  size_t singles = 0, multis = 0, evals = 0;
  for (char *line = strtok(arch, "\n"); line; line = strtok(NULL, "\n")) {
    const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
    ck_assert_ptr_nonnull(r);
    const leir__lit *msgs = leir__lit_get(r, "messages");
    ck_assert_str_eq(sget(msgs->first, "role"), "user");
    const char *user = sget(msgs->first, "content");
    const leir__lit *sample0 = leir__lit_get(r, "samples")->first;
    const char *orig = sget(sample0, "original_IR");
    leir_program *p = program_of(orig, leir__lit_get(sample0, "known"));
    int64_t n = 0;
    leir__lit_int(leir__lit_get(r, "n"), &n);
    /* the prompt is the Step-TP wording for this program */
    char *want = NULL;
    ck_assert_int_eq(leir__prompt_build(p, sget(sample0, "name"), (uint32_t)n, &want, NULL), LEIR_OK);
    ck_assert_str_eq(user, want);
    leir_free(want);
    if (strcmp(sget(r, "split"), "train")) {
      ck_assert_ptr_null(msgs->first->next); /* no answer in an eval prompt */
      evals++;
      leir_program_free(p);
      continue;
    }
    ck_assert_int_eq(msgs->n, 2);
    ck_assert_str_eq(sget(msgs->first->next, "role"), "assistant");
    const char *resp = sget(msgs->first->next, "content");
    ck_assert(strncmp(resp, "<think>", 7) == 0);
    ck_assert_ptr_nonnull(strstr(resp, "</think><answer>"));
    ck_assert(strlen(resp) > 9 && !strcmp(resp + strlen(resp) - 9, "</answer>"));
    ck_assert_ptr_null(strstr(resp, "<\\"));
    leir__answer *ans = NULL;
    ck_assert_int_eq(leir__answer_parse(resp, strlen(resp), &ans, NULL), LEIR_OK);
    ck_assert_int_eq(ans->n_ok, ans->n_items);
    ck_assert(!(ans->flags & LEIR__ANSWER_PLURAL_KEY));
    if (n == 1) {
      ck_assert(!ans->is_list);
      ck_assert_ptr_nonnull(strstr(resp, "</think><answer>{\"transformed_IR\": \""));
      singles++;
    } else {
      ck_assert(ans->is_list);
      ck_assert_uint_eq(ans->n_items, (size_t)n); /* "at least N" with N labels */
      ck_assert_ptr_nonnull(strstr(resp, "These "));
      multis++;
    }
    for (size_t i = 0; i < ans->n_items; i++) {
      const leir__answer_item *it = &ans->items[i];
      if (ans->is_list) ck_assert(it->has_idx && it->idx == (int64_t)i);
      leir_program *t = program_of(it->ir, leir__lit_get(sample0, "known"));
      leir_verify_report *rep = NULL;
      ck_assert_int_eq(leir_verify(be, p, t, NULL, &rep), LEIR_OK);
      ck_assert_msg(rep->verdict == LEIR_VERDICT_EQUAL || rep->verdict == LEIR_VERDICT_CLOSE,
                    "%s: %s", it->strategies[0], leir_verdict_name(rep->verdict));
      leir_verify_report_free(rep);
      size_t sidx;
      ck_assert_int_eq(leir_strategy_find(it->strategies[0], &sidx), LEIR_OK);
      leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
      co.strategy = (int32_t)sidx;
      leir_candidates *g = NULL;
      ck_assert_int_eq(leir_ground(&g, p, t, &co), LEIR_OK);
      ck_assert_msg(leir_candidates_count(g) > 0, "not one step of %s", it->strategies[0]);
      leir_candidates_free(g);
      leir_program_free(t);
    }
    leir__answer_free(ans);
    leir_program_free(p);
  }
  ck_assert(singles > 10 && multis > 0 && evals > 0);
  /* train.jsonl holds the same records as messages only */
  char *train = slurp(dir, "train.jsonl", &len);
  size_t lines = 0;
  for (size_t i = 0; i < len; i++) lines += train[i] == '\n';
  ck_assert_uint_eq(lines, singles + multis);
  ck_assert(strncmp(train, "{\"messages\":[{\"role\":\"user\",\"content\":\"Give the following IR of ", 64) == 0);
  /* the card's YAML header names the files for the datasets loader */
  char *card = slurp(dir, "README.md", &len);
  ck_assert(strncmp(card, "---\n", 4) == 0);
  ck_assert_ptr_nonnull(strstr(card, "configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: train.jsonl\n"));
  ck_assert_ptr_nonnull(strstr(card, "| loop_split | operator |"));
  char *svg = slurp(dir, "strategies.svg", &len);
  ck_assert(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
  free(svg);
  free(card);
  free(train);
  leir_backend_free(be);
  leir__arena_release(&a);
  free(arch);
  rm_tree(dir);
  free(dir);
}
END_TEST

START_TEST(test_same_config_gives_identical_files_and_shards_unite) {
  char *a = tmpdir(), *b = tmpdir(), *c = tmpdir();
  ck_assert_int_eq(build(small_config, a, 0, 1), LEIR_OK);
  ck_assert_int_eq(build(small_config, b, 0, 1), LEIR_OK);
  expect_same_outputs(a, b);
  /* three shards, in reverse order, into one directory */
  leir_dataset_options o;
  leir_dataset_options_init(&o, sizeof o);
  o.shard_count = 3;
  for (int k = 2; k >= 0; k--) {
    o.shard_index = (uint32_t)k;
    leir_dataset *ds = NULL;
    ck_assert_int_eq(leir_dataset_open(&ds, small_config, strlen(small_config), NULL, c, &o), LEIR_OK);
    ck_assert_int_eq(leir_dataset_run(ds), LEIR_OK);
    ck_assert_int_eq(leir_dataset_complete(ds), k == 0);
    char *sum = NULL;
    ck_assert_int_eq(leir_dataset_summary_json(ds, &sum, NULL), k == 0 ? LEIR_OK : LEIR_ERR_ARGUMENT);
    leir_free(sum);
    leir_dataset_free(ds);
  }
  expect_same_outputs(a, c);
  /* a different config is refused in a directory that holds a build */
  char other[sizeof small_config + 8];
  strcpy(other, small_config);
  other[strlen("name: test-small\nseed: 1")] = '2';
  ck_assert_int_eq(build(other, c, 0, 1), LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(leir_error_last()->rule, "dataset.resume");
  /* bad shards */
  ck_assert_int_eq(build(small_config, c, 3, 3), LEIR_ERR_ARGUMENT);
  rm_tree(a);
  rm_tree(b);
  rm_tree(c);
  free(a);
  free(b);
  free(c);
}
END_TEST

static const char kill_config[] =
    "name: test-kill\n"
    "seed: 3\n"
    "sources:\n"
    "  workloads: [level1/softmax, level1/ReLU, level1/ELU, level1/FrobeniusNorm, level1/Sigmoid,\n"
    "              level1/Tanh]\n"
    "  shapes: [small]\n"
    "walks: {count: 1, depth: 1}\n"
    "sampling: {per_strategy: 1}\n";

START_TEST(test_resume_after_sigkill_loses_and_duplicates_nothing) {
  const char *tool = getenv("LEIR_TOOL");
  ck_assert_msg(tool != NULL, "LEIR_TOOL is not set");
  char *ref = tmpdir(), *dir = tmpdir();
  ck_assert_int_eq(build(kill_config, ref, 0, 1), LEIR_OK);
  char *cfg = path_in(dir, "kill.yaml"), *out = path_in(dir, "out");
  FILE *f = fopen(cfg, "w");
  fputs(kill_config, f);
  fclose(f);
  /* kill -9 at growing delays; every run resumes the previous one */
  static const long delays_ms[] = {1, 10, 30, 60, 100, 150, 250, 400};
  int finished = 0;
  for (size_t i = 0; i < sizeof delays_ms / sizeof *delays_ms && !finished; i++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      int null = open("/dev/null", 1);
      dup2(null, 1);
      dup2(null, 2);
      execl(tool, tool, "dataset", "build", cfg, "--out", out, (char *)NULL);
      _exit(127);
    }
    struct timespec ts = {delays_ms[i] / 1000, (delays_ms[i] % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  /* a leftover temporary file of a killed writer is ignored, then removed */
  char host[64], name[160];
  leir__ds_host(host, sizeof host);
  snprintf(name, sizeof name, ".work/units/000003.jsonl.tmp.%s.2147483646", host);
  char *tmp = path_in(out, name), *units = path_in(out, ".work/units");
  ck_assert_int_eq(leir__ds_mkdirs(units), LEIR_OK); /* the kills may all have come before it existed */
  free(units);
  f = fopen(tmp, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"type\":\"sample\"", f);
  fclose(f);
  ck_assert_int_eq(build(kill_config, out, 0, 1), LEIR_OK);
  ck_assert_int_ne(access(tmp, F_OK), 0);
  free(tmp);
  expect_same_outputs(ref, out);
  free(cfg);
  free(out);
  rm_tree(ref);
  rm_tree(dir);
  free(ref);
  free(dir);
}
END_TEST

/* SIGTERM stops a build inside the unit it is building. The one unit here
 * (a 64^3 matmul verified on the interpreter) takes seconds on any host, and
 * the signal comes a moment after the build has opened its directory: a
 * build that only checked between units would finish the unit and write it,
 * so the test cannot pass unless the unit itself was interrupted. */
START_TEST(test_sigterm_stops_inside_a_unit_and_writes_nothing_of_it) {
  const char *tool = getenv("LEIR_TOOL");
  ck_assert_msg(tool != NULL, "LEIR_TOOL is not set");
  char *dir = tmpdir();
  char *jl = path_in(dir, "programs.jsonl"), *cfg = path_in(dir, "slow.yaml"), *out = path_in(dir, "out");
  FILE *f = fopen(jl, "w");
  fputs("{\"name\": \"mm\", \"leir\": \"L^{64}_{i=0}L^{64}_{j=0}L^{64}_{k=0}[C^{f32,g}_{i*64+j}="
        "C^{f32,g}_{i*64+j}+A^{f32,g}_{i*64+k}*W^{f32,g}_{k*64+j};];\"}\n",
        f);
  fclose(f);
  f = fopen(cfg, "w");
  fputs("name: slow\nseed: 5\nsources: {programs: programs.jsonl}\nwalks: {count: 2, depth: 2}\n"
        "sampling: {per_strategy: 1}\nverify: {backend: interp}\nsplit: {test: 0, validation: 0}\n",
        f);
  fclose(f);
  char *stamp = path_in(out, ".work/config"), *unit = path_in(out, ".work/units/000000.jsonl");
  char *err = path_in(dir, "stderr.txt");
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(null, 1);
    dup2(e, 2);
    execl(tool, tool, "dataset", "build", cfg, "--out", out, (char *)NULL);
    _exit(127);
  }
  /* the build has opened its directory (its handler is installed by then) */
  struct timespec tick = {0, 10 * 1000000L};
  for (int i = 0; i < 3000 && access(stamp, F_OK) != 0; i++) nanosleep(&tick, NULL);
  ck_assert_int_eq(access(stamp, F_OK), 0);
  struct timespec moment = {0, 200 * 1000000L};
  nanosleep(&moment, NULL);
  kill(pid, SIGTERM);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  size_t len = 0;
  char *said = test_read_file(err, &len);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d: %s", status, said);
  ck_assert_msg(strstr(said, "cancelled during unit programs.jsonl:1") != NULL, "%s", said);
  ck_assert_msg(access(unit, F_OK) != 0, "the interrupted unit was written: %s", said);
  free(said);
  /* resuming builds the unit in full */
  ck_assert_int_eq(build_in(cfg, dir, out), LEIR_OK);
  ck_assert_int_eq(access(unit, F_OK), 0);
  free(stamp);
  free(unit);
  free(err);
  free(jl);
  free(cfg);
  free(out);
  rm_tree(dir);
  free(dir);
}
END_TEST

/* The two configs in examples/ open (every key known, every workload in the
 * catalogue) and have the units they say: the quick one 7 workloads x 2
 * shapes, the Step-TP one 60 random instances of every workload the
 * reference traces. */
static uint64_t example_units(const char *name, const char *out) {
  const char *dir = getenv("LEIR_EXAMPLES");
  ck_assert_msg(dir != NULL, "LEIR_EXAMPLES is not set");
  char *path = path_in(dir, name);
  size_t len = 0;
  char *text = test_read_file(path, &len);
  leir_dataset *ds = NULL;
  ck_assert_msg(leir_dataset_open(&ds, text, len, dir, out, NULL) == LEIR_OK, "%s: %s", path,
                leir_error_last()->message);
  uint64_t total = 0, done = 0;
  leir_dataset_units(ds, &total, &done);
  ck_assert_uint_eq(done, 0);
  leir_dataset_free(ds);
  free(text);
  free(path);
  return total;
}

START_TEST(test_example_configs_open_with_their_units) {
  char *dir = tmpdir();
  char *a = path_in(dir, "quick"), *b = path_in(dir, "steptp"), *c = path_in(dir, "one");
  ck_assert_uint_eq(example_units("dataset-quick.yaml", a), 14);
  uint64_t full = example_units("dataset-steptp.yaml", b);
  static const char one_each[] = "name: one\nsources: {workloads: all, shapes: [random]}\n";
  uint64_t traced = 0, done = 0;
  leir_dataset *ds = NULL;
  ck_assert_int_eq(leir_dataset_open(&ds, one_each, strlen(one_each), NULL, c, NULL), LEIR_OK);
  leir_dataset_units(ds, &traced, &done);
  leir_dataset_free(ds);
  ck_assert_uint_ge(traced, 150); /* the catalogue: 202 workloads, 160 traced by the reference */
  ck_assert_uint_eq(full, 60 * traced);
  free(a);
  free(b);
  free(c);
  rm_tree(dir);
  free(dir);
}
END_TEST

/* ---- splits ------------------------------------------------------------- */

static const char split_config[] =
    "name: test-splits\n"
    "seed: 7\n"
    "sources:\n"
    "  workloads: [level1/softmax, level1/ReLU, level1/ELU, level1/Sigmoid, level1/Tanh, level1/LeakyReLU]\n"
    "  shapes: [small]\n"
    "walks: {count: 1, depth: 1}\n"
    "sampling: {per_strategy: 1}\n"
    "split: {by: program, test: 0.34, validation: 0.34, seed: 3}\n";

typedef struct strset {
  char **v;
  size_t n;
} strset;

static int strset_has(const strset *s, const char *x) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], x)) return 1;
  return 0;
}

static void strset_add(strset *s, const char *x) {
  if (strset_has(s, x)) return;
  s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
  s->v[s->n++] = strdup(x);
}

static void strset_free(strset *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
}

typedef struct hashset {
  uint64_t *v;
  size_t n;
} hashset;

static int hashset_has(const hashset *s, uint64_t h) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i] == h) return 1;
  return 0;
}

static void hashset_add(hashset *s, uint64_t h) {
  if (hashset_has(s, h)) return;
  s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
  s->v[s->n++] = h;
}

/* The alpha hash of a program text, recomputed here from the text alone
 * (the signature inferred, the same way for every file). */
static uint64_t alpha_of(const char *text, size_t len) {
  leir_program *p = NULL;
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  po.flags = LEIR_PARSE_LENIENT;
  ck_assert_msg(leir_program_parse(&p, text, len, &po) == LEIR_OK, "%.*s", (int)len, text);
  uint64_t h = leir_program_hash_alpha(p);
  leir_program_free(p);
  return h;
}

/* The source program a prompt is about, from its wording: the model name
 * and the known variables (names, dtypes, shapes). */
static char *prompt_key(const char *user) {
  const char *a = strstr(user, "IR of "), *b = strstr(user, ": '");
  const char *k = strstr(user, "where the known variables are "), *e = strstr(user, ". Do not change");
  ck_assert(a && b && k && e && a < b && k < e);
  a += 6;
  k += strlen("where the known variables are ");
  char *key = malloc((size_t)(b - a) + (size_t)(e - k) + 2);
  sprintf(key, "%.*s|%.*s", (int)(b - a), a, (int)(e - k), k);
  return key;
}

static const char *user_text(const leir__lit *r) {
  const leir__lit *m = leir__lit_get(r, "messages");
  for (const leir__lit *e = m->first; e; e = e->next)
    if (!strcmp(sget(e, "role"), "user")) return sget(e, "content");
  ck_abort_msg("no user message");
  return NULL;
}

START_TEST(test_splits_hold_out_whole_programs_without_leakage) {
  char *dir = tmpdir();
  ck_assert_int_eq(build(split_config, dir, 0, 1), LEIR_OK);
  leir__arena a;
  leir__arena_init(&a, 0);
  size_t len;
  /* train: every prompt state and every target */
  hashset train = {0};
  strset train_keys = {0};
  char *text = slurp(dir, "train.jsonl", &len);
  size_t records = 0, changes = 0;
  char *prev = NULL;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), records++) {
    const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
    ck_assert_ptr_nonnull(r);
    const char *user = user_text(r);
    const char *ir;
    size_t ir_len;
    ck_assert(leir__prompt_extract_ir(user, strlen(user), &ir, &ir_len));
    hashset_add(&train, alpha_of(ir, ir_len));
    char *key = prompt_key(user);
    strset_add(&train_keys, key);
    changes += prev && strcmp(prev, key);
    free(prev);
    prev = key;
    const char *resp = sget(r->first->value->first->next, "content");
    leir__answer *ans = NULL;
    ck_assert_int_eq(leir__answer_parse(resp, strlen(resp), &ans, NULL), LEIR_OK);
    for (size_t i = 0; i < ans->n_items; i++) hashset_add(&train, alpha_of(ans->items[i].ir, ans->items[i].ir_len));
    leir__answer_free(ans);
  }
  free(prev);
  free(text);
  ck_assert_uint_ge(train_keys.n, 2);
  /* seeded order, not one program's records in a block */
  ck_assert_uint_gt(changes, train_keys.n * 2);
  /* held out: no state, no label, no source program of train */
  static const char *const held[2] = {"eval.jsonl", "validation.jsonl"};
  strset keys[2] = {{0}}, states = {0};
  uint64_t labels = 0;
  for (int f = 0; f < 2; f++) {
    text = slurp(dir, held[f], &len);
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), n++) {
      const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
      ck_assert_str_eq(sget(r, "split"), f ? "validation" : "test");
      const char *orig = sget(r, "original_IR");
      ck_assert_msg(!hashset_has(&train, alpha_of(orig, strlen(orig))), "%s: a held-out state is in train", held[f]);
      int first_time = !strset_has(&states, sget(r, "state"));
      strset_add(&states, sget(r, "state"));
      for (const leir__lit *l = leir__lit_get(r, "labels")->first; l; l = l->next) {
        const char *t = sget(l, "transformed_IR");
        ck_assert_msg(!hashset_has(&train, alpha_of(t, strlen(t))), "%s: a held-out label is in train", held[f]);
        labels += (uint64_t)first_time;
      }
      char *key = prompt_key(user_text(r));
      ck_assert_msg(!strset_has(&train_keys, key), "%s: %s is also in train", held[f], key);
      ck_assert_msg(!f || !strset_has(&keys[0], key), "%s is in test and validation", key);
      strset_add(&keys[f], key);
      free(key);
    }
    ck_assert_uint_gt(n, 0);
    free(text);
  }
  ck_assert_uint_eq(keys[0].n, 2); /* round(6 * 0.34) of the 6 programs each */
  ck_assert_uint_eq(keys[1].n, 2);
  /* leir eval scores answers to validation prompts too */
  text = slurp(dir, "validation.jsonl", &len);
  const leir__lit *vr = leir__lit_parse(&a, text, (size_t)(strchr(text, '\n') - text), 0, 0, NULL);
  const leir__lit *vl = leir__lit_get(vr, "labels")->first;
  leir__strbuf ab = LEIR__STRBUF_INIT;
  leir__sb_printf(&ab, "{\"id\": \"%s\", \"answer\": \"<answer>{'transformed_IR': '%s', 'applied_strategy': '%s'}</answer>\"}\n",
                  sget(vr, "id"), sget(vl, "transformed_IR"), sget(vl, "strategy"));
  size_t alen = 0;
  char *answers = leir__sb_finish(&ab, &alen);
  leir_eval *ev = NULL;
  ck_assert_int_eq(leir_eval_run(&ev, answers, alen, dir, NULL), LEIR_OK);
  char *json = NULL;
  ck_assert_int_eq(leir_eval_report_json(ev, &json, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(json, "\"label\":true,\"pass_equal\":"));
  ck_assert_ptr_nonnull(strstr(json, "\"pass_close\":true"));
  leir_free(json);
  leir_eval_free(ev);
  free(answers);
  free(text);
  /* the archive: each unit in one split */
  strset units = {0}, unit_split = {0};
  text = slurp(dir, "archive.jsonl", &len);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
    for (const leir__lit *smp = leir__lit_get(r, "samples")->first; smp; smp = smp->next) {
      char pair[512];
      snprintf(pair, sizeof pair, "%s=%s", sget(smp, "unit"), sget(r, "split"));
      strset_add(&units, sget(smp, "unit"));
      strset_add(&unit_split, pair);
    }
  }
  free(text);
  ck_assert_uint_eq(units.n, 6);
  ck_assert_uint_eq(unit_split.n, units.n);
  /* the build's own check agrees, and says so in summary.json and the card */
  text = slurp(dir, "summary.json", &len);
  const leir__lit *sum = leir__lit_parse(&a, text, len, 0, 0, NULL);
  const leir__lit *leak = leir__lit_get(sum, "leakage");
  int64_t x = -1;
  ck_assert(leir__lit_int(leir__lit_get(leak, "checked_states"), &x) && x == (int64_t)states.n);
  ck_assert(leir__lit_int(leir__lit_get(leak, "checked_labels"), &x) && x == (int64_t)labels);
  static const char *const zero[] = {"test_states_in_train", "test_labels_in_train", "validation_states_in_train",
                                     "validation_labels_in_train", "units_in_two_splits", NULL};
  for (int i = 0; zero[i]; i++) ck_assert(leir__lit_int(leir__lit_get(leak, zero[i]), &x) && x == 0);
  ck_assert_str_eq(sget(leir__lit_get(sum, "split"), "by"), "program");
  free(text);
  text = slurp(dir, "README.md", &len);
  ck_assert_ptr_nonnull(strstr(text, "- config_name: validation\n  data_files:\n  - split: validation\n    path: validation.jsonl\n"));
  ck_assert_ptr_nonnull(strstr(text, "## Splits\n\nHeld out by source program"));
  ck_assert_ptr_nonnull(strstr(text, "| held-out states | 0 | 0 |\n| held-out labels | 0 | 0 |"));
  free(text);
  strset_free(&units);
  strset_free(&unit_split);
  strset_free(&states);
  strset_free(&keys[0]);
  strset_free(&keys[1]);
  strset_free(&train_keys);
  free(train.v);
  leir__arena_release(&a);
  rm_tree(dir);
  free(dir);
}
END_TEST

/* The same program twice in the sources: held out by program, one copy is
 * held out and the other trained on, which the check finds; held out by
 * workload family (the programs' name), the two stay together. */
START_TEST(test_leaking_sources_fail_the_build) {
  char *dir = tmpdir();
  static const char relu[] =
      "{\"name\": \"relu\", \"leir\": \"L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(A^{f64,g}_{a,c},0);];\"}\n";
  char *jl = path_in(dir, "twice.jsonl");
  FILE *f = fopen(jl, "w");
  fputs(relu, f);
  fputs(relu, f);
  fclose(f);
  free(jl);
  jl = path_in(dir, "more.jsonl");
  f = fopen(jl, "w");
  fputs(relu, f);
  fputs(relu, f);
  fputs("{\"name\": \"rowsum\", \"leir\": \"L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];\"}\n", f);
  fclose(f);
  free(jl);
  /* two programs, one held out: the copy in train leaks it */
  static const char by_program[] =
      "name: leak\nseed: 2\nsources: {programs: twice.jsonl}\nsampling: {per_strategy: 1}\n"
      "split: {by: program, test: 0.5, validation: 0}\n";
  static const char by_workload[] =
      "name: leak\nseed: 2\nsources: {programs: more.jsonl}\nsampling: {per_strategy: 1}\n"
      "split: {by: workload, test: 0.5, validation: 0}\n";
  char *out = path_in(dir, "by-program");
  leir_dataset *ds = NULL;
  ck_assert_int_eq(leir_dataset_open(&ds, by_program, strlen(by_program), dir, out, NULL), LEIR_OK);
  ck_assert_int_eq(leir_dataset_run(ds), LEIR_ERR_INVALID);
  ck_assert_str_eq(leir_error_last()->rule, "dataset.leakage");
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "leak into train: 1 test and 0 validation states"));
  ck_assert_int_eq(leir_dataset_complete(ds), 0);
  leir_dataset_free(ds);
  char *train = path_in(out, "train.jsonl");
  ck_assert_int_ne(access(train, F_OK), 0); /* nothing written */
  free(train);
  free(out);
  /* by workload family (the programs' name) the copies stay together */
  out = path_in(dir, "by-workload");
  ck_assert_int_eq(leir_dataset_open(&ds, by_workload, strlen(by_workload), dir, out, NULL), LEIR_OK);
  ck_assert_int_eq(leir_dataset_run(ds), LEIR_OK);
  leir_dataset_free(ds);
  size_t len;
  char *arch = slurp(out, "archive.jsonl", &len);
  leir__arena a;
  leir__arena_init(&a, 0);
  const char *relu_split = NULL;
  for (char *line = strtok(arch, "\n"); line; line = strtok(NULL, "\n")) {
    const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
    const char *name = sget(leir__lit_get(r, "samples")->first, "name");
    if (strcmp(name, "relu")) continue;
    if (!relu_split) relu_split = sget(r, "split");
    ck_assert_str_eq(sget(r, "split"), relu_split);
  }
  ck_assert_ptr_nonnull(relu_split);
  leir__arena_release(&a);
  free(arch);
  free(out);
  rm_tree(dir);
  free(dir);
}
END_TEST

START_TEST(test_filter_rules_cap_and_drop) {
  static const char cfg[] =
      "name: test-filter\n"
      "sources: {workloads: [level1/softmax, level1/ReLU], shapes: [small]}\n"
      "walks: {count: 1, depth: 2}\n"
      "eval: {fraction: 0}\n"
      "filter:\n"
      "  single_cap: 1\n"
      "  single: [{strategies: [loop_split], keep: 0}]\n"
      "  multi: [{strategies: [";
  /* the multi rule drops every implemented strategy (the list follows the
   * catalogue, so a strategy implemented later is in it too) */
  leir__strbuf cb = LEIR__STRBUF_INIT;
  leir__sb_puts(&cb, cfg);
  int first = 1;
  for (size_t i = 0; i < leir_strategy_count(); i++) {
    const leir_strategy_info *info = leir_strategy_info_at(i);
    if (!info->implemented) continue;
    leir__sb_printf(&cb, "%s%s", first ? "" : ", ", info->name);
    first = 0;
  }
  leir__sb_puts(&cb, "], keep: 0}]\n");
  size_t cfg_len = 0;
  char *cfg_all = leir__sb_finish(&cb, &cfg_len);
  char *dir = tmpdir();
  ck_assert_int_eq(build(cfg_all, dir, 0, 1), LEIR_OK);
  free(cfg_all);
  size_t len;
  char *arch = slurp(dir, "archive.jsonl", &len);
  leir__arena a;
  leir__arena_init(&a, 0);
  int seen[64] = {0};
  size_t lines = 0;
  for (char *line = strtok(arch, "\n"); line; line = strtok(NULL, "\n"), lines++) {
    const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
    ck_assert_str_eq(sget(r, "kind"), "single"); /* every multi item was dropped */
    ck_assert_str_eq(sget(r, "split"), "train");
    const char *s = sget(leir__lit_get(r, "samples")->first, "strategy");
    ck_assert_str_ne(s, "loop_split");
    size_t k;
    ck_assert_int_eq(leir_strategy_find(s, &k), LEIR_OK);
    ck_assert_int_eq(seen[k]++, 0); /* the cap: one single per strategy */
  }
  ck_assert(lines > 3);
  char *sum = slurp(dir, "summary.json", &len);
  ck_assert_ptr_nonnull(strstr(sum, "\"train_multi\":0"));
  free(sum);
  leir__arena_release(&a);
  free(arch);
  rm_tree(dir);
  free(dir);
}
END_TEST

START_TEST(test_program_sources_and_rejections) {
  char *dir = tmpdir();
  char *jl = path_in(dir, "programs.jsonl");
  FILE *f = fopen(jl, "w");
  fputs("{\"name\": \"relu\", \"level\": 1, \"leir\": \"L^{4}_{a=0}[C^{f64,g}_{a}=max(A^{f64,g}_{a},0);];\"}\n"
        "\n"
        "{\"name\": \"broken\", \"leir\": \"L^{4}_{a=0}[C^{f64,g}_{a}=\"}\n"
        "not json at all\n"
        "{\"program\": \"inputs:\\n  A: {dtype: f32, shape: [2, 3]}\\noutputs:\\n  C: {dtype: f32, shape: [2]}\\n"
        "leir: L^{2}_{a=0}L^{3}_{c=0}[C^{f32,g}_{a}=C^{f32,g}_{a}+A^{f32,g}_{a,c};];\\n\"}\n"
        "{\"id\": \"level2/corpus_form\", \"level\": \"level2\", \"model\": \"corpus_form\", \"signature\": "
        "{\"inputs\": [{\"name\": \"A\", \"dtype\": \"f64\", \"shape\": [3]}], \"outputs\": [{\"name\": \"C\", "
        "\"dtype\": \"f64\", \"shape\": [3]}]}, \"leir\": \"L^{3}_{a=0}[C^{f64,g}_{a}=exp(A^{f64,g}_{a});];\"}\n",
        f);
  fclose(f);
  char cfg[512];
  snprintf(cfg, sizeof cfg, "name: progs\nsources: {programs: programs.jsonl}\neval: {fraction: 0}\n");
  char *out = path_in(dir, "out");
  leir_dataset *ds = NULL;
  ck_assert_int_eq(leir_dataset_open(&ds, cfg, strlen(cfg), dir, out, NULL), LEIR_OK);
  uint64_t total = 0, done = 9;
  leir_dataset_units(ds, &total, &done);
  ck_assert_uint_eq(total, 5); /* the blank line is no unit */
  ck_assert_uint_eq(done, 0);
  ck_assert_int_eq(leir_dataset_run(ds), LEIR_OK);
  char *sum = NULL;
  ck_assert_int_eq(leir_dataset_summary_json(ds, &sum, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(sum, "\"by_stage\":{\"source\":2}"));
  leir_free(sum);
  leir_dataset_free(ds);
  size_t len;
  char *rej = slurp(out, "rejections.jsonl", &len);
  ck_assert_ptr_nonnull(strstr(rej, "\"unit\":\"programs.jsonl:3\""));
  ck_assert_ptr_nonnull(strstr(rej, "\"unit\":\"programs.jsonl:4\""));
  free(rej);
  char *train = slurp(out, "train.jsonl", &len);
  ck_assert_ptr_nonnull(strstr(train, "Give the following IR of relu: 'L^{4}_{a=0}"));
  ck_assert_ptr_nonnull(strstr(train, "Give the following IR of corpus_form: 'L^{3}_{a=0}"));
  char *arch = slurp(out, "archive.jsonl", &len);
  ck_assert_ptr_nonnull(strstr(arch, "\"name\":\"corpus_form\",\"level\":2,"));
  free(arch);
  ck_assert_ptr_nonnull(strstr(train, "'A' with the dtype torch.float32 and shape [2, 3], and 'C' with the dtype torch.float32 and shape [2]"));
  free(train);
  free(out);
  free(jl);
  rm_tree(dir);
  free(dir);
}
END_TEST

START_TEST(test_measure_records_timing_and_speedup) {
  static const char cfg[] =
      "name: timed\n"
      "sources: {workloads: [level1/ReLU], shapes: [small]}\n"
      "sampling: {per_strategy: 1}\n"
      "strategies: [loop_reorder, loop_split]\n"
      "eval: {fraction: 0}\n"
      "measure: {enabled: true, backend: interp, min_runs: 1, max_seconds: 1}\n";
  char *dir = tmpdir();
  ck_assert_int_eq(build(cfg, dir, 0, 1), LEIR_OK);
  size_t len;
  char *arch = slurp(dir, "archive.jsonl", &len);
  leir__arena a;
  leir__arena_init(&a, 0);
  size_t n = 0;
  for (char *line = strtok(arch, "\n"); line; line = strtok(NULL, "\n"), n++) {
    const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
    const leir__lit *smp = leir__lit_get(r, "samples")->first;
    double t = 0, o = 0, sp = 0;
    ck_assert(leir__lit_num(leir__lit_get(smp, "time_ms"), &t) && t > 0);
    ck_assert(leir__lit_num(leir__lit_get(smp, "original_time_ms"), &o) && o > 0);
    ck_assert(leir__lit_num(leir__lit_get(smp, "speedup"), &sp) && sp > 0);
    ck_assert_str_eq(sget(leir__lit_get(smp, "timing"), "backend"), "interp");
  }
  ck_assert_uint_gt(n, 0);
  leir__arena_release(&a);
  free(arch);
  rm_tree(dir);
  free(dir);
}
END_TEST

START_TEST(test_config_errors_name_the_line) {
  static const struct {
    const char *text, *part;
    uint32_t line;
  } bad[] = {
      {"name: x\nsources: {workloads: [level1/softmax]}\nwalk: {count: 1}\n", "unknown key 'walk'", 3},
      {"sources:\n  workloads: [level1/softmax]\n  shapes: [tiny]\n", "unknown shape 'tiny'", 3},
      {"sources: {workloads: all}\nstrategies: [loop_splitt]\n", "unknown strategy 'loop_splitt'", 2},
      {"sources: {workloads: all}\nfilter: {single: [{strategies: [apart], keep: 2}]}\n", "keep must be", 2},
      {"sources: {workloads: all}\nverify: {backend: gpu}\n", "unknown backend", 2},
      {"sources: {workloads: all}\nmeasure: {enabled: maybe}\n", "measure.enabled must be true or false", 2},
      {"name: [\n", "YAML", 2},
      {"name: x\n", "give workloads and/or programs", 1},
      {"sources: {workloads: all}\nsplit: {by: shape}\n", "split.by must be program or workload", 2},
      {"sources: {workloads: all}\nsplit: {test: 0.1}\neval: {fraction: 0.2}\n", "eval.fraction is split.test", 3},
      {"sources: {workloads: all}\nsplit: {test: 0.7, validation: 0.4}\n", "at most 1", 2},
      {"sources: {workloads: all}\nsplit: {tests: 0.7}\n", "unknown key 'tests' in split", 2},
  };
  char *dir = tmpdir();
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    leir_dataset *ds = (leir_dataset *)1;
    ck_assert_int_eq(leir_dataset_open(&ds, bad[i].text, strlen(bad[i].text), NULL, dir, NULL), LEIR_ERR_PARSE);
    ck_assert_ptr_null(ds);
    ck_assert_msg(strstr(leir_error_last()->message, bad[i].part), "%zu: %s", i, leir_error_last()->message);
    ck_assert_uint_eq(leir_error_last()->line, bad[i].line);
  }
  static const char missing[] = "sources: {workloads: [level1/no_such_model]}\n";
  leir_dataset *ds = NULL;
  ck_assert_int_eq(leir_dataset_open(&ds, missing, strlen(missing), NULL, dir, NULL), LEIR_ERR_NOT_FOUND);
  rm_tree(dir);
  free(dir);
}
END_TEST

START_TEST(test_eval_scores_right_wrong_and_malformed_answers) {
  char *dir = tmpdir();
  ck_assert_int_eq(build(small_config, dir, 0, 1), LEIR_OK);
  size_t len;
  char *evtext = slurp(dir, "eval.jsonl", &len);
  leir__arena a;
  leir__arena_init(&a, 0);
  const leir__lit *single = NULL, *multi = NULL;
  for (char *line = strtok(evtext, "\n"); line; line = strtok(NULL, "\n")) {
    const leir__lit *r = leir__lit_parse(&a, line, strlen(line), 0, 0, NULL);
    if (!single && !strcmp(sget(r, "kind"), "single")) single = r;
    if (!multi && !strcmp(sget(r, "kind"), "multi")) multi = r;
  }
  ck_assert_ptr_nonnull(single);
  ck_assert_ptr_nonnull(multi);
  const leir__lit *lab = leir__lit_get(single, "labels")->first;
  leir__strbuf b = LEIR__STRBUF_INIT;
  /* 1: right (JSON label) */
  leir__sb_printf(&b, "{\"id\": \"%s\", \"answer\": \"<think>ok</think><answer>{\\\"transformed_IR\\\": \\\"%s\\\", "
                      "\\\"applied_strategy\\\": \\\"%s\\\"}</answer>\"}\n",
                  sget(single, "id"), sget(lab, "transformed_IR"), sget(lab, "strategy"));
  /* 2: right transformation, wrong strategy name: passes, not grounded */
  leir__sb_printf(&b, "{\"id\": \"%s\", \"answer\": \"<answer>{'transformed_IR': '%s', 'applied_strategy': 'apart'}</answer>\"}\n",
                  sget(single, "id"), sget(lab, "transformed_IR"));
  /* 3: wrong: the original with 1 added to the last equation's value */
  const char *orig = sget(single, "original_IR");
  char *wrong = malloc(strlen(orig) + 3);
  ck_assert(strlen(orig) > 3 && !strcmp(orig + strlen(orig) - 3, ";];"));
  sprintf(wrong, "%.*s+1;];", (int)(strlen(orig) - 3), orig);
  leir__sb_printf(&b, "{\"id\": \"%s\", \"response\": \"<answer>{'transformed_IR': '%s', 'applied_strategy': 'loop_split'}</answer>\"}\n",
                  sget(single, "id"), wrong);
  free(wrong);
  /* 4: the multi prompt answered with its labels (backslash tags, Python list) */
  leir__sb_printf(&b, "{\"id\": \"%s\", \"messages\": [{\"role\": \"assistant\", \"content\": \"<think>t<\\\\think><answer>[", sget(multi, "id"));
  int i = 0;
  for (const leir__lit *l = leir__lit_get(multi, "labels")->first; l; l = l->next, i++)
    leir__sb_printf(&b, "%s{'idx': %d, 'transformed_IR': '%s', 'applied_strategy': '%s'}", i ? ", " : "", i,
                    sget(l, "transformed_IR"), sget(l, "strategy"));
  leir__sb_puts(&b, "]<\\\\answer>\"}]}\n");
  /* 5..: malformed every way */
  leir__sb_printf(&b, "{\"id\": \"%s\", \"answer\": \"<think>no answer\"}\n", sget(single, "id"));
  leir__sb_printf(&b, "{\"id\": \"%s\", \"answer\": \"<answer>{'transformed_IR': 'L^{2}_{a=0}[', 'applied_strategy': 'x'}</answer>\"}\n", sget(single, "id"));
  leir__sb_puts(&b, "{\"id\": \"0000000000000000\", \"answer\": \"x\"}\n");
  leir__sb_puts(&b, "{\"id\": \"truncated line\n");
  leir__sb_puts(&b, "[1, 2]\n");
  leir__sb_printf(&b, "{\"id\": \"%s\"}\n", sget(single, "id"));
  leir__sb_put(&b, "\xff\xfe\0garbage\n", 11);
  size_t alen = 0;
  char *answers = leir__sb_finish(&b, &alen);
  leir_eval *ev = NULL;
  ck_assert_int_eq(leir_eval_run(&ev, answers, alen, dir, NULL), LEIR_OK);
  char *json = NULL;
  ck_assert_int_eq(leir_eval_report_json(ev, &json, NULL), LEIR_OK);
  const leir__lit *rep = leir__lit_parse(&a, json, strlen(json), 0, 0, NULL);
  ck_assert_ptr_nonnull(rep);
  const leir__lit *ans = leir__lit_get(rep, "answers");
  ck_assert_uint_eq(ans->n, 11);
  const char *reasons[11];
  const leir__lit *items[11];
  int k = 0;
  for (const leir__lit *e = ans->first; e; e = e->next, k++) {
    reasons[k] = sget(e, "reason");
    items[k] = leir__lit_get(e, "items");
  }
  /* right */
  ck_assert_str_eq(sget(items[0]->first, "verdict"), "EQUAL");
  ck_assert_int_eq(leir__lit_get(items[0]->first, "pass_equal")->i, 1);
  ck_assert_int_eq(leir__lit_get(items[0]->first, "grounded")->i, 1);
  /* right IR, wrong name */
  ck_assert_int_eq(leir__lit_get(items[1]->first, "pass_equal")->i, 1);
  ck_assert_int_eq(leir__lit_get(items[1]->first, "grounded")->i, 0);
  ck_assert_str_eq(sget(items[1]->first, "reason"), "strategy.not_grounded");
  /* wrong */
  ck_assert_int_eq(leir__lit_get(items[2]->first, "pass_close")->i, 0);
  ck_assert_msg(!strncmp(sget(items[2]->first, "reason"), "verify.", 7) || !strcmp(sget(items[2]->first, "reason"), "ir.invalid"), "%s", sget(items[2]->first, "reason"));
  /* multi: every label passes and the count is met */
  ck_assert_uint_eq(items[3]->n, leir__lit_get(multi, "labels")->n); /* distinct IRs, all scored */
  /* each label passes; bitwise exactly when its build verdict was EQUAL (a
   * reassociating label, CLOSE at build time, passes close only) */
  const leir__lit *lab_i = leir__lit_get(multi, "labels")->first;
  for (const leir__lit *e = items[3]->first; e; e = e->next, lab_i = lab_i->next) {
    ck_assert_int_eq(leir__lit_get(e, "pass_close")->i, 1);
    ck_assert_int_eq(leir__lit_get(e, "pass_equal")->i, !strcmp(sget(lab_i, "verdict"), "EQUAL"));
  }
  ck_assert_int_eq(leir__lit_get(ans->first->next->next->next, "require_num_pass")->i, 1);
  /* malformed */
  ck_assert_str_eq(reasons[4], "answer.no_answer");
  ck_assert_str_eq(sget(items[5]->first, "reason"), "ir.parse");
  ck_assert_str_eq(reasons[6], "prompt.unknown");
  ck_assert_str_eq(reasons[7], "line.syntax");
  ck_assert_str_eq(reasons[8], "line.not_object");
  ck_assert_str_eq(reasons[9], "answer.missing");
  ck_assert_str_eq(reasons[10], "line.syntax");
  const leir__lit *overall = leir__lit_get(rep, "overall");
  int64_t answers_n = 0, parsed = 0;
  leir__lit_int(leir__lit_get(overall, "answers"), &answers_n);
  leir__lit_int(leir__lit_get(overall, "parsed"), &parsed);
  ck_assert_int_eq(answers_n, 11);
  ck_assert_int_eq(parsed, 5);
  char *table = NULL;
  ck_assert_int_eq(leir_eval_report_table(ev, &table, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(table, "overall"));
  ck_assert_ptr_nonnull(strstr(table, "per strategy"));
  leir_free(table);
  leir_free(json);
  leir_eval_free(ev);
  /* a directory without a dataset */
  ck_assert_int_eq(leir_eval_run(&ev, answers, alen, "/nonexistent-dir", NULL), LEIR_ERR_NOT_FOUND);
  free(answers);
  free(evtext);
  leir__arena_release(&a);
  rm_tree(dir);
  free(dir);
}
END_TEST

static Suite *dataset_suite(void) {
  Suite *s = suite_create("dataset");
  TCase *tc = tcase_create("build");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_every_record_verifies_independently);
  tcase_add_test(tc, test_same_config_gives_identical_files_and_shards_unite);
  tcase_add_test(tc, test_splits_hold_out_whole_programs_without_leakage);
  tcase_add_test(tc, test_leaking_sources_fail_the_build);
  tcase_add_test(tc, test_resume_after_sigkill_loses_and_duplicates_nothing);
  tcase_add_test(tc, test_sigterm_stops_inside_a_unit_and_writes_nothing_of_it);
  tcase_add_test(tc, test_example_configs_open_with_their_units);
  tcase_add_test(tc, test_filter_rules_cap_and_drop);
  tcase_add_test(tc, test_program_sources_and_rejections);
  tcase_add_test(tc, test_measure_records_timing_and_speedup);
  tcase_add_test(tc, test_config_errors_name_the_line);
  suite_add_tcase(s, tc);
  tc = tcase_create("eval");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_eval_scores_right_wrong_and_malformed_answers);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(dataset_suite()); }
