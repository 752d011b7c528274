/*
 * Program files (*.leir.yaml): a signature plus LEIR text (spec/leir.md §2),
 * read with libyaml's document loader and written by hand.
 *
 *   name: softmax                 # optional
 *   inputs:                       # mapping name -> {dtype, shape}, in order;
 *     A: {dtype: f64, shape: [2, 8]}   # or a sequence of {name, dtype, shape}
 *   outputs:
 *     C: {dtype: f64, shape: [2, 8]}
 *
 * An input may add `domain:` (docs/verification.md, "Input domains"):
 *   positive | {value: V} | {range: [LO, HI]}
 *   | {distribution: normal, mean: M, std: S} | {distribution: uniform, low: L, high: H}
 *   leir: B^{2}_{tx=0}...         # parsed in lenient mode
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "error.h"
#include "input.h"
#include "ir.h"
#include "signature.h"

/* Declarations grow as read; names point into the YAML document, which
 * lives until leir_program_set_signature has copied them. `shape` pointers
 * are set once the arrays stop moving. */
#define MAX_DECLS 4096 /* as leir_program_set_signature */

typedef struct yctx {
  yaml_document_t doc;
  leir_tensor_decl *decls;
  leir_domain *domains;
  int64_t (*shapes)[LEIR_MAX_RANK];
  size_t ndecls, cap;
} yctx;

static leir_status yerr(const yaml_node_t *node, const char *fmt, const char *arg) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, arg ? arg : "");
  uint32_t line = node ? (uint32_t)node->start_mark.line + 1 : 0;
  uint32_t col = node ? (uint32_t)node->start_mark.column + 1 : 0;
  return leir__error_set(LEIR_ERR_PARSE, "yaml.structure", arg, line, col, msg);
}

static const char *scalar(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool key_is(yaml_document_t *doc, yaml_node_pair_t *pair, const char *key) {
  const char *k = scalar(yaml_document_get_node(doc, pair->key));
  return k && strcmp(k, key) == 0;
}

static leir_status read_shape(yctx *y, yaml_node_t *node, int64_t *shape, uint32_t *rank,
                              const char *name) {
  if (!node || node->type != YAML_SEQUENCE_NODE)
    return yerr(node, "the shape of %s must be a list of extents, e.g. [2, 8]", name);
  uint32_t r = 0;
  for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top;
       it++) {
    yaml_node_t *v = yaml_document_get_node(&y->doc, *it);
    const char *s = scalar(v);
    if (r == LEIR_MAX_RANK) return yerr(v, "%s has more than 16 dimensions", name);
    char *end = NULL;
    errno = 0;
    long long x = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || x < 1)
      return yerr(v, "each extent of %s must be a positive integer", name);
    shape[r++] = x;
  }
  *rank = r;
  return LEIR_OK;
}

static leir_status derr(const yaml_node_t *node, const char *fmt, const char *arg) {
  char msg[1024];
  snprintf(msg, sizeof msg, fmt, arg ? arg : "");
  uint32_t line = node ? (uint32_t)node->start_mark.line + 1 : 0;
  uint32_t col = node ? (uint32_t)node->start_mark.column + 1 : 0;
  return leir__error_set(LEIR_ERR_PARSE, "yaml.domain", NULL, line, col, msg);
}

/* A number: a YAML plain or quoted scalar that strtod reads entirely. */
static bool read_number(const yaml_node_t *n, double *out) {
  const char *s = scalar(n);
  if (!s || !*s || n->data.scalar.length != strlen(s)) return false;
  char *end = NULL;
  errno = 0;
  double x = strtod(s, &end);
  if (*end || errno == ERANGE) return false;
  *out = x;
  return true;
}

static const char domain_forms[] =
    "positive, {value: V}, {range: [LO, HI]}, {distribution: normal, mean: M, std: S} or "
    "{distribution: uniform, low: L, high: H}";

/* `domain:` of input `name` (see the header comment). Validated here, so
 * the error carries the position. */
static leir_status read_domain(yctx *y, yaml_node_t *node, leir_dtype dt, leir_domain *out,
                               const char *name) {
  leir_domain d = LEIR_DOMAIN_INIT;
  char msg[600];
  if (node->type == YAML_SCALAR_NODE) {
    if (strcmp(scalar(node), "positive") != 0) {
      snprintf(msg, sizeof msg, "the domain of %s must be one of: %s", name, domain_forms);
      return derr(node, "%s", msg);
    }
    d.kind = LEIR_DOMAIN_POSITIVE;
  } else if (node->type == YAML_MAPPING_NODE) {
    yaml_node_t *value = NULL, *range = NULL, *dist = NULL, *mean = NULL, *std = NULL,
                *low = NULL, *high = NULL;
    for (yaml_node_pair_t *pr = node->data.mapping.pairs.start;
         pr < node->data.mapping.pairs.top; pr++) {
      yaml_node_t *k = yaml_document_get_node(&y->doc, pr->key);
      yaml_node_t *v = yaml_document_get_node(&y->doc, pr->value);
      const char *ks = scalar(k);
      yaml_node_t **slot = !ks                             ? NULL
                           : strcmp(ks, "value") == 0        ? &value
                           : strcmp(ks, "range") == 0        ? &range
                           : strcmp(ks, "distribution") == 0 ? &dist
                           : strcmp(ks, "mean") == 0         ? &mean
                           : strcmp(ks, "std") == 0          ? &std
                           : strcmp(ks, "low") == 0          ? &low
                           : strcmp(ks, "high") == 0         ? &high
                                                             : NULL;
      if (!slot) {
        snprintf(msg, sizeof msg,
                 "unknown domain field '%s' (expected value, range, distribution, mean, std, "
                 "low, high)",
                 ks ? ks : "?");
        return derr(k, "%s", msg);
      }
      if (*slot) return derr(k, "domain field '%s' is given twice", ks);
      *slot = v;
    }
    int forms = (value != NULL) + (range != NULL) + (dist != NULL);
    if (forms != 1) {
      snprintf(msg, sizeof msg, "the domain of %s must be one of: %s", name, domain_forms);
      return derr(node, "%s", msg);
    }
    if (value) {
      if (mean || std || low || high) return derr(node, "a {value: V} domain has no other field%s", "");
      d.kind = LEIR_DOMAIN_VALUE;
      if (!read_number(value, &d.value)) return derr(value, "the value of %s must be a number", name);
    } else if (range) {
      if (mean || std || low || high)
        return derr(node, "a {range: [LO, HI]} domain has no other field%s", "");
      d.kind = LEIR_DOMAIN_RANGE;
      yaml_node_item_t *it = range->type == YAML_SEQUENCE_NODE ? range->data.sequence.items.start : NULL;
      if (!it || range->data.sequence.items.top - it != 2 ||
          !read_number(yaml_document_get_node(&y->doc, it[0]), &d.low) ||
          !read_number(yaml_document_get_node(&y->doc, it[1]), &d.high))
        return derr(range, "the range of %s must be a list of two numbers [LO, HI]", name);
    } else {
      const char *ds = scalar(dist);
      if (ds && strcmp(ds, "normal") == 0) {
        if (low || high) return derr(node, "a normal distribution has mean and std, not low/high%s", "");
        d.kind = LEIR_DOMAIN_NORMAL;
        if (mean && !read_number(mean, &d.mean)) return derr(mean, "the mean of %s must be a number", name);
        if (std && !read_number(std, &d.std)) return derr(std, "the std of %s must be a number", name);
      } else if (ds && strcmp(ds, "uniform") == 0) {
        if (mean || std) return derr(node, "a uniform distribution has low and high, not mean/std%s", "");
        if (!low || !high) return derr(node, "a uniform distribution needs low and high%s", "");
        d.kind = LEIR_DOMAIN_UNIFORM;
        if (!read_number(low, &d.low)) return derr(low, "low of %s must be a number", name);
        if (!read_number(high, &d.high)) return derr(high, "high of %s must be a number", name);
      } else {
        return derr(dist, "unknown distribution '%s' (expected normal or uniform)", ds ? ds : "?");
      }
    }
  } else {
    snprintf(msg, sizeof msg, "the domain of %s must be one of: %s", name, domain_forms);
    return derr(node, "%s", msg);
  }
  char why[200];
  if (!leir__domain_validate(dt, &d, why, sizeof why)) {
    snprintf(msg, sizeof msg, "domain of %s: %s", name, why);
    return derr(node, "%s", msg);
  }
  *out = d;
  return LEIR_OK;
}

static leir_status read_decl(yctx *y, const char *name, yaml_node_t *spec, yaml_node_t *at,
                             leir_role role) {
  if (y->ndecls == MAX_DECLS) return yerr(at, "more than 4096 declarations%s", "");
  if (!name || !*name) return yerr(at, "a tensor name is missing%s", "");
  if (!leir__is_tensor_name(name, strlen(name)))
    return yerr(at,
                "'%s' is not a tensor name ([A-Z][a-z]*, not starting with L, P, V, U, B or T)",
                name);
  for (size_t j = 0; j < y->ndecls; j++)
    if (strcmp(y->decls[j].name, name) == 0) return yerr(at, "%s is declared twice", name);
  if (!spec || spec->type != YAML_MAPPING_NODE)
    return yerr(spec ? spec : at, "%s must map to {dtype: ..., shape: [...]}", name);
  if (y->ndecls == y->cap) {
    size_t cap = y->cap ? y->cap * 2 : 16;
    leir_tensor_decl *decls = realloc(y->decls, cap * sizeof *decls);
    if (decls) y->decls = decls;
    int64_t(*shapes)[LEIR_MAX_RANK] = decls ? realloc(y->shapes, cap * sizeof *shapes) : NULL;
    if (shapes) y->shapes = shapes;
    leir_domain *domains = shapes ? realloc(y->domains, cap * sizeof *domains) : NULL;
    if (!domains) return leir__error_nomem();
    y->domains = domains;
    y->cap = cap;
  }
  size_t i = y->ndecls;
  leir_tensor_decl *d = &y->decls[i];
  memset(d, 0, sizeof *d);
  d->name = name;
  d->role = role;
  leir_domain none = LEIR_DOMAIN_INIT;
  y->domains[i] = none;
  yaml_node_t *domain_node = NULL, *domain_key = NULL;
  bool have_dtype = false, have_shape = false;
  for (yaml_node_pair_t *pr = spec->data.mapping.pairs.start; pr < spec->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *v = yaml_document_get_node(&y->doc, pr->value);
    if (key_is(&y->doc, pr, "dtype")) {
      const char *s = scalar(v);
      if (!s || leir_dtype_from_name(s, &d->dtype) != LEIR_OK)
        return yerr(v, "unknown dtype '%s' (f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool)",
                    s ? s : "");
      have_dtype = true;
    } else if (key_is(&y->doc, pr, "shape")) {
      leir_status st = read_shape(y, v, y->shapes[i], &d->rank, name);
      if (st != LEIR_OK) return st;
      have_shape = true;
    } else if (key_is(&y->doc, pr, "name")) {
      /* sequence form: handled by the caller */
    } else if (key_is(&y->doc, pr, "domain")) {
      domain_node = v;
      domain_key = yaml_document_get_node(&y->doc, pr->key);
    } else {
      const char *k = scalar(yaml_document_get_node(&y->doc, pr->key));
      return yerr(yaml_document_get_node(&y->doc, pr->key),
                  "unknown field '%s' (expected dtype, shape, domain)", k ? k : "?");
    }
  }
  if (!have_dtype) return yerr(spec, "%s has no dtype", name);
  if (!have_shape) return yerr(spec, "%s has no shape (use [] for a scalar)", name);
  if (domain_node) {
    if (role != LEIR_ROLE_INPUT)
      return derr(domain_key, "%s is an output; only inputs have a domain", name);
    leir_status st = read_domain(y, domain_node, d->dtype, &y->domains[i], name);
    if (st != LEIR_OK) return st;
  }
  y->ndecls++;
  return LEIR_OK;
}

static leir_status read_decls(yctx *y, yaml_node_t *node, leir_role role, const char *section) {
  if (node->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t *pr = node->data.mapping.pairs.start;
         pr < node->data.mapping.pairs.top; pr++) {
      yaml_node_t *k = yaml_document_get_node(&y->doc, pr->key);
      leir_status st = read_decl(y, scalar(k), yaml_document_get_node(&y->doc, pr->value), k, role);
      if (st != LEIR_OK) return st;
    }
    return LEIR_OK;
  }
  if (node->type == YAML_SEQUENCE_NODE) {
    for (yaml_node_item_t *it = node->data.sequence.items.start;
         it < node->data.sequence.items.top; it++) {
      yaml_node_t *spec = yaml_document_get_node(&y->doc, *it);
      const char *name = NULL;
      if (spec && spec->type == YAML_MAPPING_NODE)
        for (yaml_node_pair_t *pr = spec->data.mapping.pairs.start;
             pr < spec->data.mapping.pairs.top; pr++)
          if (key_is(&y->doc, pr, "name")) name = scalar(yaml_document_get_node(&y->doc, pr->value));
      leir_status st = read_decl(y, name, spec, spec, role);
      if (st != LEIR_OK) return st;
    }
    return LEIR_OK;
  }
  return yerr(node, "'%s' must be a mapping (name: {dtype, shape}) or a list", section);
}

/* ---- hostile documents ---------------------------------------------------- */

/* Deepest nesting of collections a program file may have (the format
 * needs 4: root, inputs, a declaration, its shape or domain). */
#define MAX_YAML_DEPTH 64
/* libyaml's scanner slows down quadratically with open flow collections
 * before a single event comes out, so the bytes are checked first: the
 * running balance of [ and { against ] and } (anywhere, quotes and
 * comments included, so it only overestimates) must stay below this. */
#define MAX_BRACKET_BALANCE 1000

static leir_status prescan_depth(const char *text, size_t len, const char *what) {
  long depth = 0;
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < len; i++, col++) {
    char c = text[i];
    if (c == '\n') {
      line++;
      col = 0;
    } else if (c == '[' || c == '{') {
      if (++depth > MAX_BRACKET_BALANCE)
        return leir__error(LEIR_ERR_LIMIT, "limit.depth", NULL, line, col,
                           "more than %d nested '[' and '{' in %s", MAX_BRACKET_BALANCE, what);
    } else if ((c == ']' || c == '}') && depth > 0) {
      depth--;
    }
  }
  return LEIR_OK;
}

static leir_status parser_error(const yaml_parser_t *parser) {
  if (parser->error == YAML_MEMORY_ERROR) return leir__error_nomem();
  return leir__error(LEIR_ERR_PARSE, "yaml.syntax", NULL, (uint32_t)parser->problem_mark.line + 1,
                     (uint32_t)parser->problem_mark.column + 1, "YAML: %s%s%s",
                     parser->problem ? parser->problem : "syntax error",
                     parser->context ? " " : "", parser->context ? parser->context : "");
}

/* Walks the events once: syntax errors, out of memory, collections nested
 * deeper than max_depth and a second document (which every reader here
 * would silently ignore) stop it before a document is built. */
static leir_status check_events(const char *text, size_t len, int max_depth, const char *what) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return leir__error_nomem();
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  leir_status st = LEIR_OK;
  int depth = 0, documents = 0;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      st = parser_error(&parser);
      break;
    }
    yaml_event_type_t type = ev.type;
    if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
      if (++depth > max_depth)
        st = leir__error(LEIR_ERR_LIMIT, "limit.depth", NULL, (uint32_t)ev.start_mark.line + 1,
                         (uint32_t)ev.start_mark.column + 1,
                         "collections nested more than %d deep in %s", max_depth, what);
    } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
      depth--;
    } else if (type == YAML_DOCUMENT_START_EVENT && ++documents > 1) {
      st = leir__error(LEIR_ERR_PARSE, "yaml.structure", NULL, (uint32_t)ev.start_mark.line + 1,
                       (uint32_t)ev.start_mark.column + 1,
                       "a second YAML document ('---') in %s: give one document", what);
    }
    yaml_event_delete(&ev);
    if (st != LEIR_OK || type == YAML_STREAM_END_EVENT) break;
  }
  yaml_parser_delete(&parser);
  return st;
}

leir_status leir__yaml_guard(const char *text, size_t len, int max_depth, const char *what) {
  leir_status st = prescan_depth(text, len, what);
  return st == LEIR_OK ? check_events(text, len, max_depth, what) : st;
}

/* A scalar holding a NUL (a "\u0000" escape) would be cut short by every
 * C string use: refused wherever it is. */
static leir_status check_nul_scalars(yaml_document_t *doc) {
  for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top; n++)
    if (n->type == YAML_SCALAR_NODE &&
        memchr(n->data.scalar.value, '\0', n->data.scalar.length) != NULL)
      return leir__error(LEIR_ERR_PARSE, "yaml.structure", NULL, (uint32_t)n->start_mark.line + 1,
                         (uint32_t)n->start_mark.column + 1,
                         "a string holds a NUL character (\\u0000), which no name or field "
                         "may contain");
  return LEIR_OK;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Maps the position of a LEIR error inside the `leir` scalar back to the
 * YAML file. LEIR ignores whitespace, and every scalar style (plain,
 * quoted, literal, folded) keeps the file's non-whitespace characters in
 * order, so the k-th non-whitespace character of the value is the k-th one
 * of the scalar's text in the file (a quoted escape shifts this slightly). */
static void relocate(const char *text, size_t len, const yaml_node_t *node, const char *value,
                     size_t vlen) {
  const leir_error *e = leir_error_last();
  if (!e->line) return;
  size_t off = 0;
  for (uint32_t line = 1; off < vlen && line < e->line; off++)
    if (value[off] == '\n') line++;
  off += e->column - 1;
  if (off > vlen) off = vlen;
  size_t k = 0;
  for (size_t i = 0; i < off; i++) k += !is_space(value[i]);
  size_t i = node->start_mark.index, end = node->end_mark.index;
  if (end > len) end = len;
  yaml_scalar_style_t style = node->data.scalar.style;
  if (style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE) {
    while (i < end && text[i] != '\n') i++; /* the "|" or ">" header line */
  } else if (style != YAML_PLAIN_SCALAR_STYLE) {
    i++; /* the opening quote */
  }
  for (size_t seen = 0; i < end; i++) {
    if (is_space(text[i])) continue;
    if (seen++ == k) break;
  }
  if (i > end) i = end;
  /* an error at the end of the value points just past its last character */
  if (i == end && style != YAML_PLAIN_SCALAR_STYLE) {
    while (i > node->start_mark.index && is_space(text[i - 1])) i--;
    if (style != YAML_LITERAL_SCALAR_STYLE && style != YAML_FOLDED_SCALAR_STYLE && i > 0) i--;
  }
  uint32_t line = 1;
  size_t line_start = 0;
  for (size_t j = 0; j < i && j < len; j++)
    if (text[j] == '\n') {
      line++;
      line_start = j + 1;
    }
  leir__error_state st;
  leir__error_save(&st);
  st.line = line;
  st.column = (uint32_t)(i - line_start + 1);
  leir__error_restore(&st);
}

leir_status leir_program_parse_yaml(leir_program **out, const char *text, size_t len,
                                    const leir_parse_options *opts) {
  if (!out || (!text && len))
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_parse_options o;
  leir_status ost = leir__parse_options(opts, &o);
  if (ost != LEIR_OK) return ost;
  if (len > o.max_input_bytes)
    return leir__error(LEIR_ERR_LIMIT, "limit.input-size", NULL, 0, 0,
                       "input of %zu bytes exceeds the limit of %llu bytes", len,
                       (unsigned long long)o.max_input_bytes);
  if (memchr(text, '\0', len))
    return leir__error(LEIR_ERR_PARSE, "yaml.syntax", NULL, 0, 0,
                       "a program file cannot contain NUL bytes");
  leir_status pre = leir__yaml_guard(text, len, MAX_YAML_DEPTH, "a program file");
  if (pre != LEIR_OK) return pre;
  yctx *y = calloc(1, sizeof *y);
  if (!y) return leir__error_nomem();
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    free(y);
    return leir__error_nomem();
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  leir_status st = LEIR_OK;
  bool have_doc = false;
  if (!yaml_parser_load(&parser, &y->doc)) {
    st = parser_error(&parser);
    goto done;
  }
  have_doc = true;
  if ((st = check_nul_scalars(&y->doc)) != LEIR_OK) goto done;
  yaml_node_t *root = yaml_document_get_root_node(&y->doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    st = yerr(root, "a program file is a mapping with inputs, outputs and leir%s", "");
    goto done;
  }
  yaml_node_t *inputs = NULL, *outputs = NULL, *leir_node = NULL;
  const char *name = NULL;
  for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *v = yaml_document_get_node(&y->doc, pr->value);
    if (key_is(&y->doc, pr, "inputs"))
      inputs = v;
    else if (key_is(&y->doc, pr, "outputs"))
      outputs = v;
    else if (key_is(&y->doc, pr, "leir"))
      leir_node = v;
    else if (key_is(&y->doc, pr, "name")) {
      name = scalar(v);
      if (!name) {
        st = yerr(v, "name must be a string%s", "");
        goto done;
      }
    } else {
      yaml_node_t *k = yaml_document_get_node(&y->doc, pr->key);
      st = yerr(k, "unknown field '%s' (expected name, inputs, outputs, leir)",
                scalar(k) ? scalar(k) : "?");
      goto done;
    }
  }
  if (!leir_node) {
    st = yerr(root, "the 'leir' field (program text) is missing%s", "");
    goto done;
  }
  if (!scalar(leir_node)) {
    st = yerr(leir_node, "the 'leir' field must be the program text (a string)%s", "");
    goto done;
  }
  if (inputs && (st = read_decls(y, inputs, LEIR_ROLE_INPUT, "inputs")) != LEIR_OK) goto done;
  if (!outputs) {
    st = yerr(root, "the 'outputs' field is missing%s", "");
    goto done;
  }
  size_t ninputs = y->ndecls;
  if ((st = read_decls(y, outputs, LEIR_ROLE_OUTPUT, "outputs")) != LEIR_OK) goto done;
  if (y->ndecls == ninputs) {
    st = yerr(outputs, "'outputs' must declare at least one tensor%s", "");
    goto done;
  }
  leir_parse_options lo = o;
  lo.flags |= LEIR_PARSE_LENIENT;
  leir_program *p = NULL;
  const char *src = scalar(leir_node);
  st = leir_program_parse(&p, src, leir_node->data.scalar.length, &lo);
  if (st != LEIR_OK) {
    relocate(text, len, leir_node, src, leir_node->data.scalar.length);
    goto done;
  }
  for (size_t i = 0; i < y->ndecls; i++) y->decls[i].shape = y->shapes[i];
  st = leir_program_set_signature(p, y->decls, y->ndecls);
  for (size_t i = 0; st == LEIR_OK && i < y->ndecls; i++)
    if (y->domains[i].kind != LEIR_DOMAIN_DEFAULT)
      st = leir_program_domain_set(p, i, &y->domains[i]);
  if (st == LEIR_OK && name) st = leir_program_set_name(p, name);
  if (st != LEIR_OK) {
    leir_program_free(p);
    goto done;
  }
  *out = p;
done:
  if (have_doc) yaml_document_delete(&y->doc);
  yaml_parser_delete(&parser);
  free(y->decls);
  free(y->shapes);
  free(y->domains);
  free(y);
  return st;
}

/* Shortest text that strtod reads back as exactly x. */
static void put_number(leir__strbuf *b, double x) {
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) break;
  }
  leir__sb_puts(b, buf);
}

static void put_domain(leir__strbuf *b, const leir__decl *d) {
  switch ((leir_domain_kind)d->domain) {
    case LEIR_DOMAIN_POSITIVE: leir__sb_puts(b, ", domain: positive"); break;
    case LEIR_DOMAIN_VALUE:
      leir__sb_puts(b, ", domain: {value: ");
      put_number(b, d->dom_a);
      leir__sb_puts(b, "}");
      break;
    case LEIR_DOMAIN_RANGE:
      leir__sb_puts(b, ", domain: {range: [");
      put_number(b, d->dom_a);
      leir__sb_puts(b, ", ");
      put_number(b, d->dom_b);
      leir__sb_puts(b, "]}");
      break;
    case LEIR_DOMAIN_NORMAL:
      leir__sb_puts(b, ", domain: {distribution: normal, mean: ");
      put_number(b, d->dom_a);
      leir__sb_puts(b, ", std: ");
      put_number(b, d->dom_b);
      leir__sb_puts(b, "}");
      break;
    case LEIR_DOMAIN_UNIFORM:
      leir__sb_puts(b, ", domain: {distribution: uniform, low: ");
      put_number(b, d->dom_a);
      leir__sb_puts(b, ", high: ");
      put_number(b, d->dom_b);
      leir__sb_puts(b, "}");
      break;
    default: break;
  }
}

static void put_decls(leir__strbuf *b, const leir_program *p, leir_role role) {
  for (uint32_t i = 0; i < p->nsig; i++) {
    const leir__decl *d = &p->sig[i];
    if (d->role != role) continue;
    leir__sb_printf(b, "  %s: {dtype: %s, shape: [", leir__sym_name(p, d->sym),
                    leir_dtype_name((leir_dtype)d->dtype));
    for (uint32_t k = 0; k < d->rank; k++) {
      if (k) leir__sb_puts(b, ", ");
      leir__sb_put_i64(b, d->shape[k]);
    }
    leir__sb_puts(b, "]");
    put_domain(b, d);
    leir__sb_puts(b, "}\n");
  }
}

leir_status leir_program_to_yaml(const leir_program *p, char **out, size_t *out_len) {
  if (!p || !out) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  if (!p->nsig)
    return leir__error(LEIR_ERR_SIGNATURE, "signature.missing", NULL, 0, 0,
                       "a program file needs a signature (set or infer one first)");
  leir__strbuf b = LEIR__STRBUF_INIT;
  if (p->name) {
    leir__sb_puts(&b, "name: ");
    leir__sb_put_yaml_string(&b, p->name, strlen(p->name));
    leir__sb_putc(&b, '\n');
  }
  bool any_input = false;
  for (uint32_t i = 0; i < p->nsig; i++) any_input |= p->sig[i].role == LEIR_ROLE_INPUT;
  leir__sb_puts(&b, any_input ? "inputs:\n" : "inputs: {}\n");
  put_decls(&b, p, LEIR_ROLE_INPUT);
  leir__sb_puts(&b, "outputs:\n");
  put_decls(&b, p, LEIR_ROLE_OUTPUT);
  /* A literal block keeps LEIR's punctuation away from YAML syntax. */
  leir__sb_puts(&b, "leir: |-\n");
  leir__strbuf text = LEIR__STRBUF_INIT;
  leir__print_program(&text, p, LEIR_PRINT_PRETTY, NULL);
  if (text.failed) b.failed = 1;
  size_t start = 0;
  for (size_t k = 0; k <= text.len && !text.failed; k++) {
    if (k == text.len || text.data[k] == '\n') {
      if (k > start) {
        leir__sb_puts(&b, "  ");
        leir__sb_put(&b, text.data + start, k - start);
        leir__sb_putc(&b, '\n');
      }
      start = k + 1;
    }
  }
  leir__sb_release(&text);
  size_t n;
  *out = leir__sb_finish(&b, &n);
  if (!*out) return leir__error_nomem();
  if (out_len) *out_len = n;
  return LEIR_OK;
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

leir_status leir_program_load_file(leir_program **out, const char *path,
                                   const leir_parse_options *opts) {
  if (!out || !path) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_parse_options o;
  leir_status ost = leir__parse_options(opts, &o);
  if (ost != LEIR_OK) return ost;
  /* a regular file only (a FIFO would block the open), no larger than the
   * parse limit */
  char *text = NULL;
  size_t len = 0;
  size_t max = o.max_input_bytes > (uint64_t)SIZE_MAX - 1 ? SIZE_MAX - 1 : (size_t)o.max_input_bytes;
  leir_status rst = leir__read_regular_file(path, max, "io.open", &text, &len);
  if (rst == LEIR_ERR_NOT_FOUND) { /* this API has always said LEIR_ERR_IO for a missing file */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", leir_error_last()->message);
    return leir__error_set(LEIR_ERR_IO, "io.open", path, 0, 0, msg);
  }
  if (rst != LEIR_OK) return rst;
  leir_status st;
  if (has_suffix(path, ".yaml") || has_suffix(path, ".yml"))
    st = leir_program_parse_yaml(out, text, len, &o);
  else
    st = leir_program_parse(out, text, len, &o);
  free(text);
  return st;
}
