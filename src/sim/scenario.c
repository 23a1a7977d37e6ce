/*
 * scenario.c - a scenario's life (init, free) and how scenario text is
 * read: lines, '#' comments, words, and errors that name the line.
 *
 * What each line's words mean is scenario_directives.c's; the run_us,
 * sleep_us trace text is trace_csv.c's.  Both report their errors through
 * cfsbw_sim__input_fail(), so every message has the same form: the line and
 * the offending text (docs/sim.md).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define MAX_LINE 4096 /* characters of a line, with its terminating NUL */
#define MAX_WORDS 64

void cfsbw_sim_scenario_init(struct cfsbw_sim_scenario *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->nr_cpus = 1;
	sc->hz = CFSBW_SIM_DEFAULT_HZ;
	sc->duration_ns = 10 * CFSBW_NSEC_PER_SEC;
	sc->max_events = CFSBW_SIM_DEFAULT_MAX_EVENTS;
	sc->seed = 1;
	sc->migration_cost_ns = CFSBW_SIM_DEFAULT_MIGRATION_COST_NS;
	sc->policy = CFSBW_POLICY_V4;
}

/* Which of a two-valued setting's names, the default first, name is:
 * 0 or 1; -EINVAL for neither. */
static int two_names(const char *name, const char *first, const char *second)
{
	return !strcmp(name, first) ? 0 : !strcmp(name, second) ? 1 : -EINVAL;
}

int cfsbw_sim_scheduler_parse(const char *name, enum cfsbw_sim_scheduler *out)
{
	int i = two_names(name, "cfs", "eevdf");
	if (i >= 0)
		*out = i ? CFSBW_SIM_SCHED_EEVDF : CFSBW_SIM_SCHED_CFS;
	return i < 0 ? i : 0;
}

const char *cfsbw_sim_scheduler_name(enum cfsbw_sim_scheduler sched)
{
	return sched == CFSBW_SIM_SCHED_EEVDF ? "eevdf" : "cfs";
}

int cfsbw_sim_balance_load_parse(const char *name,
				 enum cfsbw_sim_balance_load *out)
{
	int i = two_names(name, "instant", "pelt");
	if (i >= 0)
		*out = i ? CFSBW_SIM_LOAD_PELT : CFSBW_SIM_LOAD_INSTANT;
	return i < 0 ? i : 0;
}

const char *cfsbw_sim_balance_load_name(enum cfsbw_sim_balance_load load)
{
	return load == CFSBW_SIM_LOAD_PELT ? "pelt" : "instant";
}

int cfsbw_sim_wake_scan_parse(const char *name, enum cfsbw_sim_wake_scan *out)
{
	int i = two_names(name, "all", "util");
	if (i >= 0)
		*out = i ? CFSBW_SIM_WAKE_UTIL : CFSBW_SIM_WAKE_ALL;
	return i < 0 ? i : 0;
}

const char *cfsbw_sim_wake_scan_name(enum cfsbw_sim_wake_scan scan)
{
	return scan == CFSBW_SIM_WAKE_UTIL ? "util" : "all";
}

void cfsbw_sim_scenario_free(struct cfsbw_sim_scenario *sc)
{
	for (size_t i = 0; i < sc->nr_sysctls; i++) {
		free(sc->sysctls[i].name);
		free(sc->sysctls[i].value);
	}
	for (size_t i = 0; i < sc->nr_groups; i++) {
		struct cfsbw_sim_group_spec *g = &sc->groups[i];
		for (size_t k = 0; k < g->nr_settings; k++) {
			free(g->settings[k].file);
			free(g->settings[k].value);
		}
		free(g->settings);
		free(g->path);
	}
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		struct cfsbw_sim_task_spec *t = &sc->tasks[i];
		free(t->group);
		free(t->text);
		free(t->trace_file);
		free(t->trace);
		cfsbw_sim_trace_threads_free(t);
	}
	free(sc->sysctls);
	free(sc->groups);
	free(sc->tasks);
	cfsbw_sim_scenario_init(sc);
}

int cfsbw_sim__input_fail(struct cfsbw_sim_error *err, unsigned line,
			  const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->line = line;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int cfsbw_sim__input_oom(struct cfsbw_sim_error *err, unsigned line)
{
	if (err) {
		err->line = line;
		snprintf(err->msg, sizeof(err->msg), "out of memory");
	}
	return -ENOMEM;
}

int cfsbw_sim__scenario_read_words(const char *text,
				   struct cfsbw_sim_error *err,
				   cfsbw_sim__words_fn *fn, void *ctx)
{
	char buf[MAX_LINE];
	const char *p = text;
	unsigned line = 0;

	if (err) {
		err->line = 0;
		err->msg[0] = '\0';
	}
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		line++;
		if (n >= sizeof(buf))
			return cfsbw_sim__input_fail(
				err, line, "line longer than %zu characters",
				sizeof(buf) - 1);
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + (eol ? 1 : 0);
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *word[MAX_WORDS];
		int nr_words = 0;
		for (char *q = buf; *q;) {
			while (*q && isspace((unsigned char)*q))
				*q++ = '\0';
			if (!*q)
				break;
			if (nr_words == MAX_WORDS)
				return cfsbw_sim__input_fail(err, line,
							     "more than %d words",
							     MAX_WORDS);
			word[nr_words++] = q;
			while (*q && !isspace((unsigned char)*q))
				q++;
		}
		if (nr_words == 0)
			continue;
		int rc = fn(ctx, line, word, nr_words);
		if (rc)
			return rc;
	}
	return 0;
}
