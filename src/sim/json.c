/*
 * json.c - the small JSON reader of json.h: recursive descent over the
 * text, depth bounded so that a hostile file cannot exhaust the stack.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/json.h"

#define MAX_DEPTH 64

struct json_parser {
	const char *p;
	unsigned line;
	struct cfsbw_sim_error *err;
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static int jfail(struct json_parser *jp, const char *fmt, ...)
{
	if (jp->err) {
		va_list ap;
		va_start(ap, fmt);
		jp->err->line = jp->line;
		vsnprintf(jp->err->msg, sizeof(jp->err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int skip_blank(struct json_parser *jp)
{
	for (;;) {
		char c = *jp->p;
		if (c == '\n') {
			jp->line++;
			jp->p++;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			jp->p++;
		} else if (c == '/' && jp->p[1] == '/') {
			while (*jp->p && *jp->p != '\n')
				jp->p++;
		} else if (c == '/' && jp->p[1] == '*') {
			unsigned start = jp->line;
			jp->p += 2;
			while (*jp->p && !(jp->p[0] == '*' && jp->p[1] == '/'))
				jp->line += *jp->p++ == '\n';
			if (!*jp->p) {
				jp->line = start;
				return jfail(jp, "a comment that never ends");
			}
			jp->p += 2;
		} else {
			return 0;
		}
	}
}

static int parse_string(struct json_parser *jp, char **out)
{
	const char *s = ++jp->p; /* after the quote */
	size_t n = 0;
	while (s[n] && s[n] != '"' && s[n] != '\n') {
		if (s[n] == '\\' && s[n + 1])
			n++;
		n++;
	}
	if (s[n] != '"')
		return jfail(jp, "a string that does not end on its line");
	char *d = malloc(n + 1);
	if (!d)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\') {
			c = s[++i];
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
		}
		d[k++] = c;
	}
	d[k] = '\0';
	jp->p = s + n + 1;
	*out = d;
	return 0;
}

static int parse_value(struct json_parser *jp, struct json_value *v,
		       unsigned depth);

static int grow_items(struct json_value *v, size_t *cap, bool keys)
{
	if (v->len < *cap)
		return 0;
	size_t ncap = *cap ? 2 * *cap : 8;
	struct json_value *ni = realloc(v->items, ncap * sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	v->items = ni;
	if (keys) {
		char **nk = realloc(v->keys, ncap * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		v->keys = nk;
	}
	*cap = ncap;
	return 0;
}

static int parse_container(struct json_parser *jp, struct json_value *v,
			   unsigned depth)
{
	bool object = *jp->p == '{';
	char close = object ? '}' : ']';
	size_t cap = 0;
	int rc;
	v->kind = object ? JSON_OBJECT : JSON_ARRAY;
	jp->p++;
	if ((rc = skip_blank(jp)))
		return rc;
	if (*jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		if ((rc = grow_items(v, &cap, object)))
			return rc;
		char *key = NULL;
		if (object) {
			if ((rc = skip_blank(jp)))
				return rc;
			if (*jp->p != '"')
				return jfail(jp, "expected a member name in "
						 "quotes");
			if ((rc = parse_string(jp, &key)))
				return rc;
			if ((rc = skip_blank(jp))) {
				free(key);
				return rc;
			}
			if (*jp->p != ':') {
				rc = jfail(jp, "expected ':' after \"%.60s\"",
					   key);
				free(key);
				return rc;
			}
			jp->p++;
			v->keys[v->len] = key;
		}
		struct json_value *item = &v->items[v->len];
		memset(item, 0, sizeof(*item));
		v->len++;
		if ((rc = parse_value(jp, item, depth + 1)))
			return rc;
		if ((rc = skip_blank(jp)))
			return rc;
		if (*jp->p == ',') {
			jp->p++;
			continue;
		}
		if (*jp->p == close) {
			jp->p++;
			return 0;
		}
		return jfail(jp, "expected ',' or '%c'", close);
	}
}

static int parse_value(struct json_parser *jp, struct json_value *v,
		       unsigned depth)
{
	int rc = skip_blank(jp);
	if (rc)
		return rc;
	if (depth > MAX_DEPTH)
		return jfail(jp, "nested deeper than %d", MAX_DEPTH);
	v->line = jp->line;
	char c = *jp->p;
	if (c == '{' || c == '[')
		return parse_container(jp, v, depth);
	if (c == '"') {
		v->kind = JSON_STRING;
		return parse_string(jp, &v->text);
	}
	static const struct {
		const char *word;
		enum json_kind kind;
		bool value;
	} words[] = {{"true", JSON_BOOL, true},
		     {"false", JSON_BOOL, false},
		     {"null", JSON_NULL, false}};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
		size_t n = strlen(words[i].word);
		if (!strncmp(jp->p, words[i].word, n)) {
			v->kind = words[i].kind;
			v->boolean = words[i].value;
			jp->p += n;
			return 0;
		}
	}
	size_t n = strspn(jp->p, "-+.0123456789eE");
	if (!n || !(c == '-' || (c >= '0' && c <= '9')))
		return jfail(jp, "expected a value, found '%.20s'", jp->p);
	v->kind = JSON_NUMBER;
	if (!(v->text = malloc(n + 1)))
		return -ENOMEM;
	memcpy(v->text, jp->p, n);
	v->text[n] = '\0';
	jp->p += n;
	return 0;
}

int cfsbw_sim__json_parse(const char *text, struct json_value *out,
			  struct cfsbw_sim_error *err)
{
	struct json_parser jp = {.p = text, .line = 1, .err = err};
	memset(out, 0, sizeof(*out));
	int rc = parse_value(&jp, out, 0);
	if (!rc && !(rc = skip_blank(&jp)) && *jp.p)
		rc = jfail(&jp, "text after the JSON value: '%.20s'", jp.p);
	if (rc == -ENOMEM && err) {
		err->line = jp.line;
		snprintf(err->msg, sizeof(err->msg), "out of memory");
	}
	if (rc)
		cfsbw_sim__json_free(out);
	return rc;
}

void cfsbw_sim__json_free(struct json_value *v)
{
	for (size_t i = 0; i < v->len; i++) {
		cfsbw_sim__json_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
	memset(v, 0, sizeof(*v));
}

bool cfsbw_sim__json_int(const struct json_value *v, long long *out)
{
	if (v->kind != JSON_NUMBER)
		return false;
	const char *s = v->text;
	bool neg = *s == '-';
	s += neg;
	if (!*s)
		return false;
	long long x = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (LLONG_MAX - 9) / 10)
			return false;
		x = x * 10 + (*s - '0');
	}
	*out = neg ? -x : x;
	return true;
}

const char *cfsbw_sim__json_kind_name(enum json_kind k)
{
	static const char *const names[] = {"null",   "true or false",
					    "a number", "a string",
					    "an array", "an object"};
	return names[k];
}
