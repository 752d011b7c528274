/*
 * Hostile files and faults around the tool's inputs and outputs (issue 32):
 * the one bounded reader (FIFOs, devices, directories and oversized files
 * refused with a clear error, never blocking), the YAML guard of every YAML
 * reader (deep nesting, a second document) and duplicate config keys, the
 * bounds of a dataset config checked before anything is allocated, one
 * build per output directory (the lock), unit files trusted only when
 * complete, temporaries of a killed writer swept, and the kernel runner
 * ending with its host, linear TIR for nested chained comparisons, and the
 * measurement database validating its rows. Every test here fails when its
 * fix is reverted:
 * a blocking read or a hang is turned into a failure by alarm(), never a
 * timed assertion.
 */
#define LEIR_EXPERIMENTAL
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ds.h"
#include "input.h"
#include "leir/experimental/dataset.h"
#include "leir/experimental/search.h"
#include "leir/experimental/workload.h"
#include "leir/tir.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------- */

/* A read that blocks (the bug) ends the test with SIGALRM, a failure. */
#define NO_HANG_S 20

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static char *tmpdir(void) {
  char tmpl[] = "/tmp/leir-hostile-XXXXXX";
  char *d = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(d);
  return strdup(d);
}

static char *path_in(const char *dir, const char *name) {
  char *p = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(p, "%s/%s", dir, name);
  return p;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static void expect_error(leir_status got, leir_status want, const char *part) {
  ck_assert_msg(got == want, "status %s, wanted %s: %s", leir_status_name(got), leir_status_name(want),
                leir_error_last()->message);
  ck_assert_msg(strstr(leir_error_last()->message, part) != NULL, "'%s' not in: %s", part,
                leir_error_last()->message);
}

static leir_status open_config(const char *text, const char *base, const char *out) {
  leir_dataset *ds = NULL;
  leir_status st = leir_dataset_open(&ds, text, strlen(text), base, out, NULL);
  leir_dataset_free(ds);
  return st;
}

static leir_status build(const char *text, const char *out) {
  leir_dataset *ds = NULL;
  leir_status st = leir_dataset_open(&ds, text, strlen(text), NULL, out, NULL);
  if (st == LEIR_OK) st = leir_dataset_run(ds);
  leir_dataset_free(ds);
  return st;
}

static const char tiny_config[] =
    "name: tiny\n"
    "seed: 3\n"
    "sources: {workloads: [level1/ReLU], shapes: [small]}\n"
    "walks: {count: 1, depth: 1}\n"
    "sampling: {per_strategy: 1}\n"
    "split: {test: 0, validation: 0}\n";

/* ---- the bounded reader -------------------------------------------------- */

START_TEST(test_reader_refuses_what_is_not_a_regular_file) {
  alarm(NO_HANG_S);
  char *dir = tmpdir();
  char *fifo = path_in(dir, "fifo.yaml"), *big = path_in(dir, "big.txt");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  char *text = (char *)1;
  size_t len = 7;
  /* a FIFO without a writer: the open itself would block */
  expect_error(leir__read_regular_file(fifo, 1 << 20, "t.io", &text, &len), LEIR_ERR_IO,
               "is not a regular file (a FIFO)");
  ck_assert_ptr_null(text);
  ck_assert_uint_eq(len, 0);
  expect_error(leir__read_regular_file(dir, 1 << 20, "t.io", &text, &len), LEIR_ERR_IO, "a directory");
  /* /dev/zero never ends: it would be read until memory ran out */
  expect_error(leir__read_regular_file("/dev/zero", 1 << 20, "t.io", &text, &len), LEIR_ERR_IO,
               "a character device");
  expect_error(leir__read_regular_file("/dev/urandom", 1 << 20, "t.io", &text, &len), LEIR_ERR_IO,
               "a character device");
  /* one byte over the limit is refused; exactly the limit is read whole */
  FILE *f = fopen(big, "w");
  for (int i = 0; i < 4097; i++) fputc('x', f);
  fclose(f);
  expect_error(leir__read_regular_file(big, 4096, "t.io", &text, &len), LEIR_ERR_LIMIT,
               "larger than the limit of 4096 bytes (4097 bytes)");
  ck_assert_str_eq(leir_error_last()->rule, "limit.input-size");
  ck_assert_int_eq(leir__read_regular_file(big, 4097, "t.io", &text, &len), LEIR_OK);
  ck_assert_uint_eq(len, 4097);
  ck_assert_int_eq(text[4097], '\0');
  free(text);
  char *none = path_in(dir, "none");
  ck_assert_int_eq(leir__read_regular_file(none, 10, "t.io", &text, &len), LEIR_ERR_NOT_FOUND);
  /* the public readers go through it: program files, workload directories */
  leir_program *p = NULL;
  expect_error(leir_program_load_file(&p, fifo, NULL), LEIR_ERR_IO, "not a regular file");
  ck_assert_ptr_null(p);
  leir_catalog_options co = LEIR_CATALOG_OPTIONS_INIT;
  co.dir = dir; /* holds fifo.yaml */
  leir_catalog *cat = NULL;
  expect_error(leir_catalog_open(&cat, &co), LEIR_ERR_IO, "a FIFO");
  ck_assert_ptr_null(cat);
  unlink(fifo);
  unlink(big);
  free(none);
  free(fifo);
  free(big);
  rm_tree(dir);
  free(dir);
  alarm(0);
}
END_TEST

/* The reproductions: a dataset whose program source is /dev/zero
 * (24 GB before the OOM killer) or a FIFO, and leir eval of a dataset whose
 * eval.jsonl is a FIFO or a link to /dev/zero. */
START_TEST(test_dataset_sources_and_eval_files_are_bounded) {
  alarm(NO_HANG_S);
  char *dir = tmpdir();
  char *out = path_in(dir, "out"), *fifo = path_in(dir, "programs.jsonl");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  static const char zero[] = "name: t\nsources: {programs: /dev/zero}\n";
  expect_error(open_config(zero, dir, out), LEIR_ERR_IO, "/dev/zero is not a regular file");
  static const char fifo_cfg[] = "name: t\nsources: {programs: programs.jsonl}\n";
  expect_error(open_config(fifo_cfg, dir, out), LEIR_ERR_IO, "a FIFO");
  char *ds = path_in(dir, "d");
  ck_assert_int_eq(mkdir(ds, 0700), 0);
  char *ev = path_in(ds, "eval.jsonl");
  ck_assert_int_eq(symlink("/dev/zero", ev), 0);
  static const char answers[] = "{\"id\": \"x\", \"answer\": \"y\"}\n";
  leir_eval *e = NULL;
  expect_error(leir_eval_run(&e, answers, strlen(answers), ds, NULL), LEIR_ERR_IO, "not a regular file");
  ck_assert_ptr_null(e);
  unlink(ev);
  ck_assert_int_eq(mkfifo(ev, 0600), 0);
  expect_error(leir_eval_run(&e, answers, strlen(answers), ds, NULL), LEIR_ERR_IO, "a FIFO");
  ck_assert_ptr_null(e);
  free(ev);
  free(ds);
  free(fifo);
  free(out);
  rm_tree(dir);
  free(dir);
  alarm(0);
}
END_TEST

/* ---- the YAML guard and config keys -------------------------------------- */

static char *nested(const char *prefix, size_t levels, const char *suffix) {
  size_t a = strlen(prefix), b = strlen(suffix);
  char *t = malloc(a + 2 * levels + b + 1);
  memcpy(t, prefix, a);
  memset(t + a, '[', levels);
  memset(t + a + levels, ']', levels);
  memcpy(t + a + 2 * levels, suffix, b + 1);
  return t;
}

START_TEST(test_yaml_guard_in_every_reader) {
  /* 200k levels took 63 s in a dataset config, 100k 33 s in a workload
   * file; the guard refuses them before libyaml scans them */
  alarm(NO_HANG_S);
  char *dir = tmpdir();
  char *deep = nested("name: ", 200000, "\nsources: {workloads: all}\n");
  expect_error(open_config(deep, NULL, dir), LEIR_ERR_LIMIT, "nested '[' and '{' in a dataset config");
  ck_assert_str_eq(leir_error_last()->rule, "limit.depth");
  free(deep);
  /* below the bracket balance, above the config's collection depth */
  deep = nested("name: ", 40, "\nsources: {workloads: all}\n");
  expect_error(open_config(deep, NULL, dir), LEIR_ERR_LIMIT, "collections nested more than 16 deep in a dataset config");
  free(deep);
  leir_catalog *cat = NULL;
  ck_assert_int_eq(leir_catalog_new(&cat), LEIR_OK);
  deep = nested("name: w\nparams: ", 100000, "\n");
  expect_error(leir_catalog_add_text(cat, deep, strlen(deep), "deep.yaml"), LEIR_ERR_LIMIT,
               "in a workload file");
  free(deep);
  /* a second document was silently ignored by every reader */
  static const char two_docs[] = "name: a\nsources: {workloads: all}\n---\nname: b\n";
  expect_error(open_config(two_docs, NULL, dir), LEIR_ERR_PARSE, "a second YAML document");
  ck_assert_uint_eq(leir_error_last()->line, 3);
  static const char two_wl[] = "name: w\n---\nname: v\n";
  expect_error(leir_catalog_add_text(cat, two_wl, strlen(two_wl), "two.yaml"), LEIR_ERR_PARSE,
               "a second YAML document ('---') in a workload file");
  leir_catalog_free(cat);
  static const char two_prog[] = "name: p\nleir: 'x'\n---\nname: q\n";
  leir_program *p = NULL;
  expect_error(leir_program_parse_yaml(&p, two_prog, strlen(two_prog), NULL), LEIR_ERR_PARSE,
               "a second YAML document ('---') in a program file");
  rm_tree(dir);
  free(dir);
  alarm(0);
}
END_TEST

START_TEST(test_config_refuses_duplicate_keys_and_empty_configs) {
  static const struct {
    const char *text, *part;
    uint32_t line;
  } bad[] = {
      {"name: a\nsources: {workloads: all}\nname: b\n", "key 'name' given twice (line 1)", 3},
      {"sources: {workloads: all, shapes: [small], shapes: [default]}\n", "key 'shapes' given twice in sources", 1},
      {"sources: {workloads: all}\nwalks: {count: 1, depth: 2, count: 3}\n", "key 'count' given twice in walks", 2},
      {"", "the config is empty", 0},
      {"# only a comment\n", "the config is empty", 0},
  };
  char *dir = tmpdir();
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    expect_error(open_config(bad[i].text, NULL, dir), LEIR_ERR_PARSE, bad[i].part);
    if (bad[i].line) ck_assert_uint_eq(leir_error_last()->line, bad[i].line);
  }
  rm_tree(dir);
  free(dir);
}
END_TEST

/* ---- config bounds ------------------------------------------------------- */

START_TEST(test_config_counts_are_bounded_before_allocation) {
  /* walks of 10^9 x 10^9 ran 9.5 minutes at 2.7 GB; random_shapes 10^9
   * allocated 2.2 GB before any work: each refused when the config opens */
  alarm(NO_HANG_S);
  static const struct {
    const char *text, *part;
    leir_status st;
  } bad[] = {
      {"sources: {workloads: all}\nwalks: {count: 1000000000, depth: 1}\n", "walks.count must be at most 10000", LEIR_ERR_PARSE},
      {"sources: {workloads: all}\nwalks: {count: 1, depth: 1000000000}\n", "walks.depth must be at most 100", LEIR_ERR_PARSE},
      {"sources: {workloads: all}\nwalks: {count: 10000, depth: 100}\n", "walks.count x walks.depth must be at most 100000", LEIR_ERR_PARSE},
      {"sources: {workloads: all, shapes: [random], random_shapes: 1000000000}\n", "random_shapes must be 1..100000", LEIR_ERR_PARSE},
      {"sources: {workloads: all, shapes: [random], random_shapes: 0}\n", "random_shapes must be 1..100000", LEIR_ERR_PARSE},
      /* within each bound, but together more units than a build may list */
      {"sources: {workloads: all, shapes: [random], random_shapes: 100000}\n", "workload units", LEIR_ERR_LIMIT},
  };
  char *dir = tmpdir();
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_error(open_config(bad[i].text, NULL, dir), bad[i].st, bad[i].part);
  /* the largest accepted walk opens */
  ck_assert_msg(open_config("sources: {workloads: [level1/ReLU]}\nwalks: {count: 1000, depth: 100}\n", NULL, dir) == LEIR_OK,
                "%s", leir_error_last()->message);
  rm_tree(dir);
  free(dir);
  alarm(0);
}
END_TEST

/* ---- one build per output directory -------------------------------------- */

/* Another build holds OUT/.work/lock: a second build waits, writing nothing
 * (without the lock both found no config, both wrote theirs and their units
 * mixed); once the holder is done, of two builds of different configs
 * exactly one owns the directory. */
START_TEST(test_a_second_build_into_one_directory_is_refused) {
  alarm(120);
  char *dir = tmpdir();
  char *out = path_in(dir, "out"), *work = path_in(out, ".work");
  char *lock = path_in(work, "lock"), *stamp = path_in(work, "config");
  ck_assert_int_eq(leir__ds_mkdirs(work), LEIR_OK);
  int fd = open(lock, O_RDWR | O_CREAT, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(flock(fd, LOCK_EX), 0);
  /* a cancelled build stops waiting at once, with the reason */
  leir_dataset_options o;
  ck_assert_int_eq(leir_dataset_options_init(&o, sizeof o), LEIR_OK);
  volatile int cancel = 1;
  o.cancel = &cancel;
  leir_dataset *ds = NULL;
  expect_error(leir_dataset_open(&ds, tiny_config, strlen(tiny_config), NULL, out, &o), LEIR_ERR_LIMIT,
               "is locked by another build");
  ck_assert_ptr_null(ds);
  ck_assert_int_ne(access(stamp, F_OK), 0);
  /* a build started while the lock is held waits without writing */
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fd); /* the lock belongs to the holder's open file, not to this build */
    leir_dataset *b = NULL;
    _exit(leir_dataset_open(&b, tiny_config, strlen(tiny_config), NULL, out, NULL) == LEIR_OK ? 0 : 1);
  }
  struct timespec moment = {0, 300 * 1000000L};
  nanosleep(&moment, NULL);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
  ck_assert_msg(access(stamp, F_OK) != 0, "a build wrote its config into a locked directory");
  /* the holder lets go: the waiting build and one of another seed race for
   * the directory, and exactly one of them gets it */
  static const char other[] =
      "name: tiny\nseed: 4\nsources: {workloads: [level1/ReLU], shapes: [small]}\n"
      "walks: {count: 1, depth: 1}\nsampling: {per_strategy: 1}\nsplit: {test: 0, validation: 0}\n";
  close(fd);
  leir_status mine = open_config(other, NULL, out);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  int theirs_ok = WEXITSTATUS(status) == 0;
  ck_assert_msg((mine == LEIR_OK) != theirs_ok, "both or neither build got the directory (%s, %d)",
                leir_status_name(mine), theirs_ok);
  if (mine != LEIR_OK) expect_error(mine, LEIR_ERR_ARGUMENT, "holds a build of a different config");
  free(lock);
  free(stamp);
  free(work);
  free(out);
  rm_tree(dir);
  free(dir);
  alarm(0);
}
END_TEST

/* ---- unit files and temporaries ------------------------------------------ */

static char *read_all(const char *path, size_t *len) { return test_read_file(path, len); }

/* Writes `text` cut after its `keep`-th line (keep < 0: all lines) plus
 * `extra`. */
static void rewrite_unit(const char *path, const char *text, int keep, const char *extra) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  const char *p = text;
  for (int i = 0; *p && (keep < 0 || i < keep); i++) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
    fwrite(p, 1, n, f);
    p += n;
  }
  fputs(extra, f);
  fclose(f);
}

static int count_lines(const char *t) {
  int n = 0;
  for (; *t; t++) n += *t == '\n';
  return n;
}

START_TEST(test_incomplete_unit_files_are_not_trusted) {
  char *out = tmpdir();
  ck_assert_msg(build(tiny_config, out) == LEIR_OK, "%s", leir_error_last()->message);
  char *unit = path_in(out, ".work/units/000000.jsonl");
  size_t len = 0;
  char *whole = read_all(unit, &len);
  int lines = count_lines(whole);
  ck_assert_int_ge(lines, 2); /* samples, then its "done" record */
  ck_assert_ptr_nonnull(strstr(whole, "\"type\":\"done\""));
  /* cut at a line boundary: the "done" record gone (920 kept of 872
   * verified in the issue) */
  rewrite_unit(unit, whole, lines - 1, "");
  expect_error(build(tiny_config, out), LEIR_ERR_PARSE, "is incomplete (no \"done\" record");
  /* a record after "done" */
  char *first = strndup(whole, (size_t)(strchr(whole, '\n') - whole + 1));
  rewrite_unit(unit, whole, -1, first);
  expect_error(build(tiny_config, out), LEIR_ERR_PARSE, "lines after its \"done\" record");
  /* a sample dropped: the count in "done" no longer adds up */
  if (lines >= 2 && strstr(first, "\"type\":\"sample\"")) {
    FILE *f = fopen(unit, "w");
    fputs(strchr(whole, '\n') + 1, f);
    fclose(f);
    expect_error(build(tiny_config, out), LEIR_ERR_PARSE, "does not add up");
  }
  /* deleting the file rebuilds the unit */
  ck_assert_int_eq(unlink(unit), 0);
  ck_assert_msg(build(tiny_config, out) == LEIR_OK, "%s", leir_error_last()->message);
  size_t len2 = 0;
  char *again = read_all(unit, &len2);
  ck_assert(len2 == len && memcmp(again, whole, len) == 0);
  free(again);
  free(first);
  free(whole);
  free(unit);
  rm_tree(out);
  free(out);
}
END_TEST

/* kill -9 during the final write left archive.jsonl.tmp.* and
 * train.jsonl.tmp.* beside the outputs after a successful rerun. */
START_TEST(test_temporaries_of_a_killed_writer_are_swept) {
  char *out = tmpdir();
  ck_assert_msg(build(tiny_config, out) == LEIR_OK, "%s", leir_error_last()->message);
  char host[64], name[200];
  leir__ds_host(host, sizeof host);
  static const char *const files[] = {"archive.jsonl", "train.jsonl", ".work/config", NULL};
  char *tmps[3];
  for (int i = 0; files[i]; i++) {
    /* a pid that no process has (beyond pid_max) */
    snprintf(name, sizeof name, "%s.tmp.%s.2147483646", files[i], host);
    tmps[i] = path_in(out, name);
    write_text(tmps[i], "{\"type\":\"sample\"");
  }
  /* a live writer's temporary (the parent of this test) is left alone */
  snprintf(name, sizeof name, "notes.jsonl.tmp.%s.%ld", host, (long)getppid());
  char *live = path_in(out, name);
  write_text(live, "x");
  ck_assert_msg(build(tiny_config, out) == LEIR_OK, "%s", leir_error_last()->message);
  for (int i = 0; files[i]; i++) {
    ck_assert_msg(access(tmps[i], F_OK) != 0, "%s was left behind", tmps[i]);
    free(tmps[i]);
  }
  ck_assert_int_eq(access(live, F_OK), 0);
  free(live);
  rm_tree(out);
  free(out);
}
END_TEST

/* ---- the runner ends with its host --------------------------------------- */

/* Whether some process has `parent` as its parent (from /proc). */
static int has_child(pid_t parent) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  struct dirent *e;
  int found = 0;
  while (!found && (e = readdir(d))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* the command name may hold spaces */
    long ppid = 0;
    char state;
    if (close_paren && sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2 && ppid == (long)parent)
      found = 1;
  }
  closedir(d);
  return found;
}

/* A host spawns `leir-runner --limits ... -- sleep 60` in a process group
 * of its own (as backends/c/compile.c does) and is killed with SIGKILL. The
 * runner and the program it runs must end long before the program would:
 * the test process is a subreaper, so both are reparented to it and it
 * reaps them; a runner that ran on would keep the test waiting for 60 s,
 * past the alarm. */
START_TEST(test_runner_ends_when_its_host_dies) {
  const char *runner = getenv("LEIR_TEST_RUNNER");
  ck_assert_msg(runner != NULL, "LEIR_TEST_RUNNER is not set");
  ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  int pfd[2];
  ck_assert_int_eq(pipe(pfd), 0);
  pid_t host = fork();
  ck_assert_int_ge(host, 0);
  if (host == 0) {
    close(pfd[0]);
    pid_t r = fork();
    if (r == 0) {
      setpgid(0, 0);
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      execl(runner, runner, "--limits", "0", "0", "--", "sleep", "60", (char *)NULL);
      _exit(127);
    }
    setpgid(r, r);
    if (write(pfd[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
    for (;;) pause();
  }
  close(pfd[1]);
  pid_t r = 0;
  ck_assert_int_eq(read(pfd[0], &r, sizeof r), (ssize_t)sizeof r);
  close(pfd[0]);
  /* the runner has read its host's pid: it does so before it starts the
   * program, so a child of the runner's proves it */
  struct timespec tick = {0, 10 * 1000000L};
  int started = 0;
  for (int i = 0; i < 3000 && !started; i++) {
    started = has_child(r);
    if (!started) nanosleep(&tick, NULL);
  }
  ck_assert_msg(started, "the runner did not start its program");
  alarm(30);
  ck_assert_int_eq(kill(host, SIGKILL), 0);
  int status;
  ck_assert_int_eq(waitpid(host, &status, 0), host);
  /* the runner ends (exit 125, or the SIGKILL it sends its own group) */
  ck_assert_int_eq(waitpid(r, &status, 0), r);
  ck_assert_msg((WIFEXITED(status) && WEXITSTATUS(status) == 125) ||
                    (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL),
                "runner status %d", status);
  /* and nothing of its group runs on: every reparented child is reaped */
  pid_t w;
  while ((w = waitpid(-1, &status, 0)) > 0) {
  }
  ck_assert_int_eq(errno, ECHILD);
  ck_assert_int_eq(kill(-r, 0), -1);
  ck_assert_int_eq(errno, ESRCH);
  alarm(0);
}
END_TEST


/* ---- the measurement database -------------------------------------------- */

static void sql(const char *path, const char *stmt) {
  sqlite3 *h = NULL;
  ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
  char *err = NULL;
  ck_assert_msg(sqlite3_exec(h, stmt, NULL, NULL, &err) == SQLITE_OK, "%s: %s", stmt, err ? err : "");
  sqlite3_close(h);
}

/* Rows edited to a verdict that is none, a ratio of 'abc', NULL, negative
 * or 1e308 were reused without remeasuring and `db check` said ok: each is
 * now not found (the search measures again and its put replaces the row),
 * and leir_db_check names it. */
START_TEST(test_db_rows_are_validated_on_read) {
  char *dir = tmpdir(), *path = path_in(dir, "m.db");
  static const char *const edits[] = {
      "UPDATE measurements SET verdict='GARBAGE'", "UPDATE measurements SET ord='SIDEWAYS'",
      "UPDATE measurements SET ratio='abc'",       "UPDATE measurements SET ratio=NULL",
      "UPDATE measurements SET ratio=-2",          "UPDATE measurements SET ratio=1e308",
      "UPDATE measurements SET median_s=-1",       "UPDATE measurements SET rounds='many'",
      "UPDATE measurements SET verdict=x'00ff'",
  };
  static const char *const why[] = {"verdict 'GARBAGE'", "order 'SIDEWAYS'", "ratio is text",
                                    "ratio is NULL", "ratio is -2", "ratio is 1e+308",
                                    "median_s is -1", "rounds is not an integer",
                                    "not a verdict"};
  leir_db_row row = {.size = sizeof row, .program_hash = 0x1234u, .baseline_hash = 2,
                     .root_hash = 3, .backend = "cpu", .machine = "m", .protocol = "p",
                     .verdict = LEIR_VERDICT_EQUAL, .order = LEIR_ORDER_FASTER, .ratio = 1.5,
                     .ratio_lo = 1.4, .ratio_hi = 1.6, .median_s = 0.25, .q1_s = 0.2, .q3_s = 0.3,
                     .baseline_median_s = 0.375, .rounds = 5, .step = "s", .program = "p",
                     .message = "ok"};
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    leir_db *db = NULL;
    ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
    ck_assert_int_eq(leir_db_put(db, &row), LEIR_OK);
    leir_db_row got = {.size = sizeof got};
    ck_assert_int_eq(leir_db_get(db, &row, &got), LEIR_OK);
    ck_assert_int_eq(leir_db_check(db), LEIR_OK);
    leir_db_free(db);
    sql(path, edits[i]);
    ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
    expect_error(leir_db_get(db, &row, &got), LEIR_ERR_NOT_FOUND, why[i]);
    ck_assert_str_eq(leir_error_last()->rule, "db.invalid-row");
    expect_error(leir_db_check(db), LEIR_ERR_IO, why[i]);
    ck_assert_str_eq(leir_error_last()->rule, "db.invalid-row");
    /* measured again: the put replaces the row, which is trusted again */
    ck_assert_int_eq(leir_db_put(db, &row), LEIR_OK);
    ck_assert_int_eq(leir_db_get(db, &row, &got), LEIR_OK);
    ck_assert_double_eq(got.ratio, 1.5);
    ck_assert_int_eq(leir_db_check(db), LEIR_OK);
    leir_db_free(db);
  }
  free(path);
  rm_tree(dir);
  free(dir);
}
END_TEST

/* check, count and optimize added their tables to another application's
 * database before failing: a file with tables that are not ours is refused
 * and left as it was. */
START_TEST(test_db_refuses_another_applications_file) {
  char *dir = tmpdir(), *path = path_in(dir, "other.db");
  sql(path, "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT);");
  leir_db *db = (leir_db *)1;
  expect_error(leir_db_open(&db, path), LEIR_ERR_IO, "another application's tables (first: 'customers')");
  ck_assert_str_eq(leir_error_last()->rule, "db.foreign");
  ck_assert_ptr_null(db);
  sqlite3 *h = NULL;
  ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_stmt *s = NULL;
  ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master", -1, &s, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_int(s, 0), 1); /* only the customers table */
  sqlite3_finalize(s);
  sqlite3_close(h);
  /* an empty file and one of ours open */
  char *fresh = path_in(dir, "fresh.db");
  ck_assert_int_eq(leir_db_open(&db, fresh), LEIR_OK);
  leir_db_free(db);
  ck_assert_int_eq(leir_db_open(&db, fresh), LEIR_OK);
  leir_db_free(db);
  free(fresh);
  free(path);
  rm_tree(dir);
  free(dir);
}
END_TEST

/* ---- TIR lowering of conditions ------------------------------------------ */

static char *nested_chains(int levels) {
  char *e = strdup("A^{f64,g}_{a}");
  for (int i = 0; i < levels; i++) {
    char *n = malloc(strlen(e) + 32);
    sprintf(n, "if_then_else(0<%s<1,1,0)", e);
    free(e);
    e = n;
  }
  char *text = malloc(strlen(e) + 64);
  sprintf(text, "L^{4}_{a=0}[C^{f64,g}_{a}=%s;];", e);
  free(e);
  return text;
}

static size_t tir_size(const char *text) {
  leir_program *p = test_parse(text);
  char *out = NULL;
  size_t len = 0;
  ck_assert_msg(leir_lower_tir(p, NULL, &out, &len) == LEIR_OK, "%s: %s", text, leir_error_last()->message);
  leir_free(out);
  leir_program_free(p);
  return len;
}

/* Nested chained comparisons gave TVMScript exponential in the nesting (24
 * levels: 1.3 GB in 12.7 s; 40 ran out of time) because the middle operand
 * was written twice per level: bound once with T.Let, the text grows with
 * the program. And conditions that check accepts (a comparison used as a
 * value inside a condition) lower to TIR instead of failing with exit 3. */
START_TEST(test_tir_conditions_lower_in_linear_size) {
  alarm(NO_HANG_S);
  char *t20 = nested_chains(20), *t40 = nested_chains(40);
  size_t s20 = tir_size(t20), s40 = tir_size(t40);
  ck_assert_msg(s40 < 3 * s20, "40 levels: %zu bytes, 20 levels: %zu bytes", s40, s20);
  ck_assert_uint_lt(s40, 64 * 1024);
  free(t20);
  free(t40);
  static const char *const values[] = {
      "L^{4}_{a=0}[C^{f64,g}_{a}=if_then_else((a<2)<1,1,0);];",
      "L^{4}_{a=0}[C^{f64,g}_{a}=if_then_else(0<(0<A^{f64,g}_{a}<1)<1,1,0);];",
  };
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    leir_program *p = test_parse(values[i]);
    ck_assert_int_eq(leir_program_check(p, NULL, NULL), LEIR_OK);
    leir_program_free(p);
    ck_assert_uint_gt(tir_size(values[i]), 0);
  }
  alarm(0);
}
END_TEST

/* Another process holding the database's write lock for the whole run made
 * `leir optimize` exit 1 after the 10 s busy timeout, with no summary and no
 * best program. The search now keeps going without the database after the
 * first failed write, keeps the rows it could not write, writes them again
 * when it ends (bounded rounds), and counts those finally lost. */
typedef struct db_blocker {
  sqlite3 *other;
  const char *release_sql; /* run on the measurement `release_at` */
  int calls, release_at;
} db_blocker;

static leir_status faster_then_release(void *payload, const leir_program *source,
                                       const leir_program *parent, const leir_program *cand,
                                       uint32_t klass, leir_search_measurement *m) {
  (void)source, (void)parent, (void)cand, (void)klass;
  db_blocker *b = payload;
  if (++b->calls == b->release_at)
    ck_assert_int_eq(sqlite3_exec(b->other, b->release_sql, NULL, NULL, NULL), SQLITE_OK);
  m->verdict = LEIR_VERDICT_EQUAL;
  m->order = LEIR_ORDER_FASTER;
  m->ratio = 1.5;
  m->ratio_lo = 1.4;
  m->ratio_hi = 1.6;
  m->median_s = 0.001;
  m->q1_s = 0.001;
  m->q3_s = 0.001;
  m->parent_median_s = 0.0015;
  m->rounds = 10;
  return LEIR_OK;
}

START_TEST(test_search_keeps_going_when_the_database_is_locked) {
  alarm(120);
  char *dir = tmpdir(), *path = path_in(dir, "m.db");
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  sqlite3 *other = NULL;
  ck_assert_int_eq(sqlite3_open(path, &other), SQLITE_OK);
  leir_program *p = test_parse("L^{16}_{a=0}L^{16}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2;];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  db_blocker blk = {other, "", 0, 0};
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_GREEDY;
  o.policy = LEIR_POLICY_EXHAUSTIVE;
  o.max_samples = 6;
  o.max_depth = 2;
  o.measure = faster_then_release;
  o.measure_payload = &blk;
  o.db = db;
  o.machine = "test-machine";
  /* every write fails at once for the whole run (a full disk, here a
   * trigger): the rows are tried again at the end, and lost */
  ck_assert_int_eq(sqlite3_exec(other,
                                "CREATE TRIGGER full BEFORE INSERT ON measurements BEGIN "
                                "SELECT RAISE(FAIL, 'database or disk is full'); END;",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  leir_search_result *r = NULL;
  leir_status st = leir_search_run(&r, NULL, p, &o);
  ck_assert_msg(st == LEIR_OK, "%s: %s", leir_status_name(st), leir_error_last()->message);
  leir_search_summary sum = {.size = sizeof sum};
  ck_assert_int_eq(leir_search_result_summary(r, &sum), LEIR_OK);
  ck_assert_uint_gt(sum.accepted, 0);
  ck_assert_uint_gt(sum.best_depth, 0);
  ck_assert_uint_gt(sum.measured, 1);
  ck_assert_uint_eq(sum.db_unsaved, sum.measured);
  ck_assert_uint_eq(sum.db_saved_late, 0);
  ck_assert_ptr_nonnull(leir_search_result_best(r));
  leir_search_result_free(r);
  uint64_t rows = 1;
  ck_assert_int_eq(leir_db_count(db, &rows), LEIR_OK);
  ck_assert_uint_eq(rows, 0);
  ck_assert_int_eq(sqlite3_exec(other, "DROP TRIGGER full;", NULL, NULL, NULL), SQLITE_OK);
  /* another process holds the write lock from before the run: the first
   * write waits out the busy timeout and fails, the rest of the run skips
   * the database; the lock released during the run (at the second
   * measurement), every row is saved when the search ends */
  ck_assert_int_eq(sqlite3_exec(other, "BEGIN IMMEDIATE;", NULL, NULL, NULL), SQLITE_OK);
  blk.release_sql = "ROLLBACK;";
  blk.release_at = 2;
  blk.calls = 0;
  st = leir_search_run(&r, NULL, p, &o);
  ck_assert_msg(st == LEIR_OK, "%s: %s", leir_status_name(st), leir_error_last()->message);
  ck_assert_int_eq(leir_search_result_summary(r, &sum), LEIR_OK);
  ck_assert_uint_gt(sum.accepted, 0);
  ck_assert_uint_gt(sum.measured, 1);
  ck_assert_uint_eq(sum.db_unsaved, 0);
  ck_assert_uint_eq(sum.db_saved_late, sum.measured);
  ck_assert_int_eq(leir_db_count(db, &rows), LEIR_OK);
  ck_assert_uint_eq(rows, sum.measured);
  leir_search_result_free(r);
  /* the next run finds them */
  blk.release_at = 0;
  ck_assert_int_eq(leir_search_run(&r, NULL, p, &o), LEIR_OK);
  ck_assert_int_eq(leir_search_result_summary(r, &sum), LEIR_OK);
  ck_assert_uint_gt(sum.reused, 0);
  ck_assert_uint_eq(sum.db_unsaved, 0);
  leir_search_result_free(r);
  sqlite3_close(other);
  leir_program_free(p);
  leir_db_free(db);
  free(path);
  rm_tree(dir);
  free(dir);
  alarm(0);
}
END_TEST

static Suite *hostile_inputs_suite(void) {
  Suite *s = suite_create("hostile_inputs");
  TCase *tc = tcase_create("files");
  tcase_add_test(tc, test_reader_refuses_what_is_not_a_regular_file);
  tcase_add_test(tc, test_dataset_sources_and_eval_files_are_bounded);
  tcase_add_test(tc, test_yaml_guard_in_every_reader);
  tcase_add_test(tc, test_config_refuses_duplicate_keys_and_empty_configs);
  tcase_add_test(tc, test_config_counts_are_bounded_before_allocation);
  tcase_add_test(tc, test_tir_conditions_lower_in_linear_size);
  suite_add_tcase(s, tc);
  tc = tcase_create("outputs");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_a_second_build_into_one_directory_is_refused);
  tcase_add_test(tc, test_incomplete_unit_files_are_not_trusted);
  tcase_add_test(tc, test_temporaries_of_a_killed_writer_are_swept);
  tcase_add_test(tc, test_runner_ends_when_its_host_dies);
  suite_add_tcase(s, tc);
  tc = tcase_create("database");
  tcase_set_timeout(tc, 300); /* one write waits out the 10 s busy timeout */
  tcase_add_test(tc, test_db_rows_are_validated_on_read);
  tcase_add_test(tc, test_db_refuses_another_applications_file);
  tcase_add_test(tc, test_search_keeps_going_when_the_database_is_locked);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(hostile_inputs_suite()); }
