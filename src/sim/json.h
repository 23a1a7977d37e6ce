/*
 * json.h - a small JSON reader for rt-app files (rtapp.c): the whole text
 * into a tree of values, each knowing its line, object members in the
 * order written (rt-app's events run in that order).  Comments (C and C++
 * style, which rt-app's own examples use) are skipped.  Numbers are kept
 * as text, read by the caller in integers.
 */
#ifndef CFSBW_SIM_JSON_H
#define CFSBW_SIM_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "cfsbw_sim.h"

enum json_kind {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_value {
	enum json_kind kind;
	unsigned line;
	bool boolean;
	char *text;                 /* number or string, NUL-terminated */
	struct json_value *items;   /* array elements or member values */
	char **keys;                /* object member names */
	size_t len;
};

/* Parse text; *out must be freed with cfsbw_sim__json_free().  Errors name the
 * line and what was expected: -EINVAL (err filled) or -ENOMEM. */
int cfsbw_sim__json_parse(const char *text, struct json_value *out,
			  struct cfsbw_sim_error *err);
void cfsbw_sim__json_free(struct json_value *v);
/* A JSON integer, optionally negative, no fraction or exponent. */
bool cfsbw_sim__json_int(const struct json_value *v, long long *out);
const char *cfsbw_sim__json_kind_name(enum json_kind k);

#endif /* CFSBW_SIM_JSON_H */
