/*
 * Steps as data: the text form ("loop_tiling nest=0 loops=tx,a factors=2,2")
 * and the JSON form, both parsed into one validated, canonical text.
 */
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "error.h"

typedef enum vtype { T_PATH, T_NAME, T_TNAME, T_INT, T_WORD, T_EXPR } vtype;

static const struct {
  const char *name;
  uint8_t type;
  uint8_t list; /* 1: comma-separated list */
  const char *words; /* T_WORD: allowed values, space-separated */
} keys[LEIR__K_COUNT] = {
#define LEIR__PARAM(id, nm, type, list, words) [LEIR__K_##id] = {nm, T_##type, list, words},
#include "params.def"
};

static int key_of(const char *s, size_t len) {
  for (int k = 0; k < LEIR__K_COUNT; k++)
    if (strlen(keys[k].name) == len && memcmp(keys[k].name, s, len) == 0) return k;
  return -1;
}

static bool is_lower(char ch) { return ch >= 'a' && ch <= 'z'; }
static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

static bool valid_token(vtype t, const leir__tok *tok, const char *words) {
  const char *s = tok->s;
  uint32_t n = tok->len;
  if (n == 0) return false;
  switch (t) {
    case T_PATH: {
      /* components are decimal indices that fit in 32 bits: a longer one
       * must not wrap around to name an existing nest (put_tok prints each
       * component through leir__tok_int) */
      uint32_t i = 0;
      while (i < n) {
        uint32_t j = i;
        while (j < n && s[j] != '.') j++;
        leir__tok part = {s + i, j - i};
        int64_t v;
        if (!leir__tok_int(&part, &v) || v > UINT32_MAX) return false;
        if (j == n) return true;
        i = j + 1;
        if (i == n) return false; /* a trailing '.' */
      }
      return false;
    }
    case T_NAME: return leir__is_loop_var_name(s, n);
    case T_TNAME: return leir__is_tensor_name(s, n);
    case T_INT: {
      int64_t v;
      return leir__tok_int(tok, &v);
    }
    case T_WORD: {
      const char *w = words;
      while (*w) {
        size_t wl = strcspn(w, " ");
        if (wl == n && memcmp(w, s, n) == 0) return true;
        w += wl;
        while (*w == ' ') w++;
      }
      return false;
    }
    case T_EXPR:
      for (uint32_t i = 0; i < n; i++)
        if (!(is_lower(s[i]) || is_digit(s[i]) || strchr("_+-*/%()", s[i]))) return false;
      return true;
  }
  return false;
}

static bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

leir_status leir__step_parse_text(leir__pstep *ps, const char *text, size_t len) {
  memset(ps, 0, sizeof *ps);
  size_t i = 0;
  while (i < len && is_space(text[i])) i++;
  size_t start = i;
  while (i < len && !is_space(text[i])) i++;
  if (i == start)
    return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_EMPTY), NULL, 0, 0, "empty step (expected a strategy name)");
  int s = leir__strategy_index(text + start, i - start);
  if (s < 0) return leir__strategy_unknown(text + start, i - start);
  ps->strategy = s;
  const leir__strategy_impl *impl = leir__strategies[s].impl;
  uint32_t allowed = impl ? impl->keys : (1u << LEIR__K_COUNT) - 1;
  uint32_t seen = 0;
  for (;;) {
    while (i < len && is_space(text[i])) i++;
    if (i >= len) break;
    size_t ks = i;
    while (i < len && text[i] != '=' && !is_space(text[i])) i++;
    if (i >= len || text[i] != '=')
      return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_SYNTAX), leir__strategy_name(s), 0, (uint32_t)ks + 1,
                         "expected KEY=VALUE at column %zu", ks + 1);
    int k = key_of(text + ks, i - ks);
    if (k < 0 || !(allowed & LEIR__KEY(k)))
      return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_KEY), leir__strategy_name(s), 0, (uint32_t)ks + 1,
                         "%s takes no parameter '%.*s'", leir__strategy_name(s), (int)(i - ks),
                         text + ks);
    if (seen & LEIR__KEY(k))
      return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_KEY), leir__strategy_name(s), 0, (uint32_t)ks + 1,
                         "parameter '%s' is given twice", keys[k].name);
    if (ps->nparams == LEIR__STEP_MAX_PARAMS)
      return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_LIMIT), NULL, 0, 0, "too many parameters");
    seen |= LEIR__KEY(k);
    i++; /* '=' */
    size_t vs = i;
    while (i < len && !is_space(text[i])) i++;
    uint32_t tok0 = ps->ntoks, ntok = 0;
    size_t ts = vs;
    for (size_t j = vs; j <= i; j++) {
      if (j == i || text[j] == ',') {
        if (ps->ntoks == LEIR__STEP_MAX_TOKENS)
          return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_LIMIT), NULL, 0, 0, "too many values");
        leir__tok *t = &ps->toks[ps->ntoks++];
        t->s = text + ts;
        t->len = (uint32_t)(j - ts);
        if (!valid_token((vtype)keys[k].type, t, keys[k].words))
          return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_VALUE), keys[k].name, 0, (uint32_t)ts + 1,
                             "invalid value '%.*s' for parameter '%s'", (int)t->len, t->s,
                             keys[k].name);
        ntok++;
        ts = j + 1;
      }
    }
    if (ntok > 1 && !keys[k].list)
      return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_VALUE), keys[k].name, 0, (uint32_t)vs + 1,
                         "parameter '%s' takes one value", keys[k].name);
    /* keep the parameters sorted by key (canonical order) */
    uint32_t at = ps->nparams;
    while (at > 0 && ps->params[at - 1].key > k) {
      ps->params[at] = ps->params[at - 1];
      at--;
    }
    ps->params[at].key = (uint8_t)k;
    ps->params[at].ntok = (uint8_t)ntok;
    ps->params[at].tok0 = (uint8_t)tok0;
    ps->nparams++;
  }
  if (impl && (seen & impl->required) != impl->required) {
    for (int k = 0; k < LEIR__K_COUNT; k++)
      if ((impl->required & LEIR__KEY(k)) && !(seen & LEIR__KEY(k)))
        return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_MISSING), leir__strategy_name(s), 0, 0,
                           "%s needs parameter '%s'", leir__strategy_name(s), keys[k].name);
  }
  return LEIR_OK;
}

static void put_tok(leir__strbuf *b, vtype t, const leir__tok *tok) {
  if (t == T_INT) {
    int64_t v = 0;
    leir__tok_int(tok, &v);
    leir__sb_put_i64(b, v);
  } else if (t == T_PATH) {
    /* canonical integers in each component */
    uint32_t i = 0;
    while (i < tok->len) {
      uint32_t j = i;
      while (j < tok->len && tok->s[j] != '.') j++;
      leir__tok part = {tok->s + i, j - i};
      int64_t v = 0;
      leir__tok_int(&part, &v);
      if (i) leir__sb_putc(b, '.');
      leir__sb_put_i64(b, v);
      i = j + 1;
    }
  } else {
    leir__sb_put(b, tok->s, tok->len);
  }
}

void leir__step_print(leir__strbuf *b, const leir__pstep *ps) {
  leir__sb_puts(b, leir__strategy_name(ps->strategy));
  for (uint32_t i = 0; i < ps->nparams; i++) {
    int k = ps->params[i].key;
    leir__sb_putc(b, ' ');
    leir__sb_puts(b, keys[k].name);
    leir__sb_putc(b, '=');
    for (uint32_t j = 0; j < ps->params[i].ntok; j++) {
      if (j) leir__sb_putc(b, ',');
      put_tok(b, (vtype)keys[k].type, &ps->toks[ps->params[i].tok0 + j]);
    }
  }
}

/* ---- JSON input ------------------------------------------------------------ */

typedef struct jp {
  const char *s;
  size_t n, i;
} jp;

static void jws(jp *j) {
  while (j->i < j->n && is_space(j->s[j->i])) j->i++;
}

static leir_status jerr(const jp *j, const char *what) {
  return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_JSON), NULL, 1, (uint32_t)j->i + 1,
                     "invalid JSON step: %s at column %zu", what, j->i + 1);
}

/* A string or a non-negative integer, appended to b (strings must not
 * contain spaces, commas or '='). */
static leir_status jscalar(jp *j, leir__strbuf *b) {
  jws(j);
  if (j->i >= j->n) return jerr(j, "unexpected end");
  if (j->s[j->i] == '"') {
    j->i++;
    while (j->i < j->n && j->s[j->i] != '"') {
      char ch = j->s[j->i];
      if (ch == '\\' || is_space(ch) || ch == ',' || ch == '=' || (unsigned char)ch < 0x20)
        return jerr(j, "unsupported character in a string value");
      leir__sb_putc(b, ch);
      j->i++;
    }
    if (j->i >= j->n) return jerr(j, "unterminated string");
    j->i++;
    return LEIR_OK;
  }
  if (is_digit(j->s[j->i])) {
    while (j->i < j->n && is_digit(j->s[j->i])) leir__sb_putc(b, j->s[j->i++]);
    if (j->i < j->n && (j->s[j->i] == '.' || j->s[j->i] == 'e' || j->s[j->i] == 'E'))
      return jerr(j, "numbers must be non-negative integers");
    return LEIR_OK;
  }
  return jerr(j, "expected a string or an integer");
}

static leir_status jvalue(jp *j, leir__strbuf *b) {
  jws(j);
  if (j->i < j->n && j->s[j->i] == '[') {
    j->i++;
    jws(j);
    if (j->i < j->n && j->s[j->i] == ']') return jerr(j, "empty list");
    for (bool first = true;; first = false) {
      if (!first) leir__sb_putc(b, ',');
      leir_status st = jscalar(j, b);
      if (st != LEIR_OK) return st;
      jws(j);
      if (j->i < j->n && j->s[j->i] == ',') {
        j->i++;
        continue;
      }
      if (j->i < j->n && j->s[j->i] == ']') {
        j->i++;
        return LEIR_OK;
      }
      return jerr(j, "expected ',' or ']'");
    }
  }
  return jscalar(j, b);
}

/* The members of a step's JSON form that record its listing's domain
 * (leir_step_to_json writes them for a step listed outside the reference
 * domain); not parameters of the step. */
#define LISTING_FLAGS_KEY "listing_flags"
#define LISTING_WIDTH_KEY "listing_vector_width"
#define MAX_LISTING_WIDTH 65536u

static bool key_is(const leir__strbuf *key, const char *name) {
  return key->len == strlen(name) && memcmp(key->data, name, key->len) == 0;
}

/* A listing member's value: a non-negative integer within `max`. */
static leir_status listing_value(jp *j, uint32_t max, uint32_t *v) {
  leir__strbuf num = LEIR__STRBUF_INIT;
  leir_status st = jscalar(j, &num);
  if (st == LEIR_OK && (num.len == 0 || num.len > 10 || !is_digit(num.data[0])))
    st = jerr(j, "a listing member must be an integer");
  if (st == LEIR_OK) {
    uint64_t x = 0;
    for (size_t k = 0; k < num.len; k++) x = x * 10 + (uint64_t)(num.data[k] - '0');
    if (x > max) st = jerr(j, "listing member out of range");
    else *v = (uint32_t)x;
  }
  leir__sb_release(&num);
  return st;
}

/* Converts a JSON object into the text form (strategy first); the listing
 * members go to *flags and *width. */
static leir_status json_to_text(const char *s, size_t n, leir__strbuf *out, uint32_t *flags,
                                uint32_t *width) {
  jp j = {s, n, 0};
  leir__strbuf params = LEIR__STRBUF_INIT, name = LEIR__STRBUF_INIT;
  leir_status st = LEIR_OK;
  jws(&j);
  if (j.i >= j.n || s[j.i] != '{') return jerr(&j, "expected '{'");
  j.i++;
  jws(&j);
  bool have_name = false;
  if (j.i < j.n && s[j.i] == '}') {
    j.i++;
  } else {
    for (;;) {
      leir__strbuf key = LEIR__STRBUF_INIT;
      jws(&j);
      if (j.i >= j.n || s[j.i] != '"') {
        st = jerr(&j, "expected a key");
      } else {
        st = jscalar(&j, &key);
      }
      if (st == LEIR_OK) {
        jws(&j);
        if (j.i >= j.n || s[j.i] != ':') st = jerr(&j, "expected ':'");
        else j.i++;
      }
      if (st == LEIR_OK) {
        if (key.len == 8 && memcmp(key.data, "strategy", 8) == 0) {
          if (have_name) st = jerr(&j, "'strategy' given twice");
          have_name = true;
          if (st == LEIR_OK) st = jscalar(&j, &name);
        } else if (key_is(&key, LISTING_FLAGS_KEY)) {
          st = listing_value(&j, UINT32_MAX, flags);
          if (st == LEIR_OK && (*flags & ~(uint32_t)LEIR__REPLAY_FLAGS))
            st = jerr(&j, "unknown " LISTING_FLAGS_KEY " bits");
        } else if (key_is(&key, LISTING_WIDTH_KEY)) {
          st = listing_value(&j, MAX_LISTING_WIDTH, width);
          if (st == LEIR_OK && *width == 0) st = jerr(&j, LISTING_WIDTH_KEY " must be positive");
        } else {
          leir__sb_putc(&params, ' ');
          leir__sb_put(&params, key.data, key.len);
          leir__sb_putc(&params, '=');
          st = jvalue(&j, &params);
        }
      }
      leir__sb_release(&key);
      if (st != LEIR_OK) break;
      jws(&j);
      if (j.i < j.n && s[j.i] == ',') {
        j.i++;
        continue;
      }
      if (j.i < j.n && s[j.i] == '}') {
        j.i++;
        break;
      }
      st = jerr(&j, "expected ',' or '}'");
      break;
    }
  }
  if (st == LEIR_OK) {
    jws(&j);
    if (j.i != j.n) st = jerr(&j, "trailing characters");
    else if (!have_name) st = jerr(&j, "missing \"strategy\"");
  }
  if (st == LEIR_OK) {
    leir__sb_put(out, name.data, name.len);
    leir__sb_put(out, params.data, params.len);
    if (out->failed || name.failed || params.failed) st = leir__error_nomem();
  }
  leir__sb_release(&params);
  leir__sb_release(&name);
  return st;
}

/* ---- public API -------------------------------------------------------------- */

leir_status leir_step_parse(leir_step **out, const char *text, size_t len) {
  if (!out || (!text && len))
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  if (memchr(text, '\0', len))
    return leir__error(LEIR_ERR_PARSE, leir__rule_name(LEIR__R_STEP_SYNTAX), NULL, 0, 0, "NUL byte in a step");
  size_t k = 0;
  while (k < len && is_space(text[k])) k++;
  leir__strbuf src = LEIR__STRBUF_INIT;
  leir_status st = LEIR_OK;
  const char *t = text;
  size_t tl = len;
  uint32_t flags = 0, width = LEIR__REFERENCE_VECTOR_WIDTH;
  if (k < len && text[k] == '{') {
    st = json_to_text(text, len, &src, &flags, &width);
    t = src.data;
    tl = src.len;
  }
  leir__pstep ps;
  leir__strbuf canon = LEIR__STRBUF_INIT;
  if (st == LEIR_OK) st = leir__step_parse_text(&ps, t ? t : "", tl);
  if (st == LEIR_OK) {
    leir__step_print(&canon, &ps);
    leir_step *s = calloc(1, sizeof *s);
    size_t n;
    char *txt = leir__sb_finish(&canon, &n);
    if (!s || !txt) {
      free(s);
      free(txt);
      st = leir__error_nomem();
    } else {
      s->strategy = (uint16_t)ps.strategy;
      s->owned = 1;
      s->len = (uint32_t)n;
      s->text = txt;
      s->domain_flags = flags;
      s->vector_width = width;
      *out = s;
    }
  }
  leir__sb_release(&canon);
  leir__sb_release(&src);
  return st;
}

void leir_step_free(leir_step *step) {
  if (!step || !step->owned) return;
  free((char *)step->text);
  free(step);
}

leir_status leir_step_clone(leir_step **out, const leir_step *step) {
  if (!out || !step) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_step *s = calloc(1, sizeof *s);
  char *txt = malloc(step->len + 1);
  if (!s || !txt) {
    free(s);
    free(txt);
    return leir__error_nomem();
  }
  memcpy(txt, step->text, step->len);
  txt[step->len] = '\0';
  *s = *step;
  s->owned = 1;
  s->text = txt;
  *out = s;
  return LEIR_OK;
}

const char *leir_step_text(const leir_step *step) { return step ? step->text : ""; }
size_t leir_step_strategy(const leir_step *step) { return step ? step->strategy : 0; }

size_t leir_step_param_count(const leir_step *step) {
  if (!step) return 0;
  leir__pstep ps;
  leir__error_state saved;
  leir__error_save(&saved);
  size_t n = leir__step_parse_text(&ps, step->text, step->len) == LEIR_OK ? ps.nparams : 0;
  leir__error_restore(&saved);
  return n;
}

leir_status leir_step_param(const leir_step *step, size_t i, const char **key, const char **value,
                            size_t *value_len) {
  if (!step) return leir__error_arg(NULL, "NULL argument");
  leir__pstep ps;
  leir_status st = leir__step_parse_text(&ps, step->text, step->len);
  if (st != LEIR_OK) return st;
  if (i >= ps.nparams)
    return leir__error_arg(NULL, "parameter %zu out of range", i);
  const leir__tok *first = &ps.toks[ps.params[i].tok0];
  const leir__tok *last = &ps.toks[ps.params[i].tok0 + ps.params[i].ntok - 1];
  if (key) *key = keys[ps.params[i].key].name;
  if (value) *value = first->s;
  if (value_len) *value_len = (size_t)(last->s + last->len - first->s);
  return LEIR_OK;
}

leir_status leir_step_to_json(const leir_step *step, char **out, size_t *out_len) {
  if (!step || !out) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir__pstep ps;
  leir_status st = leir__step_parse_text(&ps, step->text, step->len);
  if (st != LEIR_OK) return st;
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "{\"strategy\":\"");
  leir__sb_puts(&b, leir__strategy_name(ps.strategy));
  leir__sb_putc(&b, '"');
  for (uint32_t i = 0; i < ps.nparams; i++) {
    int k = ps.params[i].key;
    vtype t = (vtype)keys[k].type;
    const leir__tok *toks = &ps.toks[ps.params[i].tok0];
    uint32_t n = ps.params[i].ntok;
    leir__sb_printf(&b, ",\"%s\":", keys[k].name);
    if (keys[k].list) leir__sb_putc(&b, '[');
    for (uint32_t j = 0; j < n; j++) {
      if (j) leir__sb_putc(&b, ',');
      bool number = t == T_INT || (t == T_PATH && !memchr(toks[j].s, '.', toks[j].len));
      if (!number) leir__sb_putc(&b, '"');
      put_tok(&b, t, &toks[j]);
      if (!number) leir__sb_putc(&b, '"');
    }
    if (keys[k].list) leir__sb_putc(&b, ']');
  }
  /* what a replay needs of a step listed outside the reference domain */
  if (leir__step_domain_widened(step))
    leir__sb_printf(&b, ",\"" LISTING_FLAGS_KEY "\":%u,\"" LISTING_WIDTH_KEY "\":%u",
                    (unsigned)step->domain_flags, (unsigned)step->vector_width);
  leir__sb_putc(&b, '}');
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}
