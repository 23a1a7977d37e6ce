/*
 * trace_csv.c - the simplest trace a `trace` task replays: one step a
 * line, "run_us,sleep_us" (docs/sim.md), '#' comments and an optional
 * "run_us,sleep_us" header; spaces around the fields are allowed.  Each
 * step runs for run_us (at least 1) of CPU, then sleeps for sleep_us.
 * Errors name the line and quote it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define MAX_TRACE_STEPS 10000000u

int cfsbw_sim_trace_parse(struct cfsbw_sim_task_spec *t, const char *text,
			  struct cfsbw_sim_error *err)
{
	unsigned line = 0;
	bool data = false;
	const char *p = text;
	size_t cap = 0;
	free(t->trace);
	t->trace = NULL;
	t->trace_len = 0;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char buf[256], a[128], b[128];
		line++;
		if (n >= sizeof(buf))
			return cfsbw_sim__input_fail(err, line, "line too long");
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + (eol ? 1 : 0);
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *s = buf, *e = buf + strlen(buf);
		while (*s && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (!*s)
			continue;
		if (!data && !strcmp(s, "run_us,sleep_us")) {
			data = true; /* the optional header */
			continue;
		}
		data = true;
		uint64_t run, sleep;
		const char *comma = strchr(s, ',');
		bool ok = false;
		if (comma && (size_t)(comma - s) < sizeof(a) &&
		    strlen(comma + 1) < sizeof(b)) {
			/* fields, spaces around them trimmed */
			size_t la = (size_t)(comma - s);
			while (la > 0 && isspace((unsigned char)s[la - 1]))
				la--;
			memcpy(a, s, la);
			a[la] = '\0';
			const char *bs = comma + 1;
			while (*bs && isspace((unsigned char)*bs))
				bs++;
			strcpy(b, bs);
			ok = sim_parse_uint(a, 1, 3600000000u, &run) &&
			     sim_parse_uint(b, 0, 3600000000u, &sleep);
		}
		if (!ok)
			return cfsbw_sim__input_fail(
				err, line,
				"'%s': expected run_us,sleep_us (integers, "
				"run_us >= 1)",
				s);
		if (t->trace_len == MAX_TRACE_STEPS)
			return cfsbw_sim__input_fail(err, line,
						     "more than %u steps",
						     MAX_TRACE_STEPS);
		if (t->trace_len == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct cfsbw_sim_trace_step *np =
				realloc(t->trace, ncap * sizeof(*np));
			if (!np)
				return cfsbw_sim__input_oom(err, line);
			t->trace = np;
			cap = ncap;
		}
		t->trace[t->trace_len] = (struct cfsbw_sim_trace_step){
			.run_ns = (int64_t)run * CFSBW_NSEC_PER_USEC,
			.sleep_ns = (int64_t)sleep * CFSBW_NSEC_PER_USEC,
		};
		t->trace_len++;
	}
	if (!t->trace_len)
		return cfsbw_sim__input_fail(err, 0, "no steps in the trace");
	return 0;
}
