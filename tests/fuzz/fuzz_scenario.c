/*
 * fuzz_scenario.c - the scenario parser (cfsbw_sim_scenario_parse) on any text,
 * then a short run of what it accepted, twice, which must print the same.
 *
 * The input is the scenario text itself (docs/sim.md's format), so the seed
 * corpus is scenario files.  A rejected scenario must come back with -EINVAL
 * and a message (and -ENOMEM only if memory ran out); an accepted one is
 * capped so that one input takes milliseconds, whatever it asks: at most
 * 200 ms simulated on 16 CPUs and 64 tasks, a budget of 100 000 events
 * (which the simulator must refuse a scenario over, issue 16), and every
 * trace workload reads the same short trace.  It then runs three times
 * from the same scenario, each time in a fresh machine within a 64 MB
 * memory budget: twice plainly and once with a timeline, as `--timeline`
 * runs it.  All three must give the same JSON and text reports, byte for
 * byte (docs/sim.md: same scenario and seed, same output; the timeline's
 * samples are not events), and no run may process more events than its
 * budget.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "cfsbw_sim.h"

#define FZ_MAX_TEXT 8192
#define FZ_MAX_DURATION_NS (200 * CFSBW_NSEC_PER_MSEC)
#define FZ_MAX_CPUS 16u
#define FZ_MAX_TASKS 64u
#define FZ_MAX_EVENTS 100000u
#define FZ_MEMORY (64u << 20)

static const char fz_trace[] = "1000,2000\n300,0\n1,5000\n";

/* A memory budget, as `cfsbw sim --max-memory` keeps one. */
struct fz_budget {
	size_t used, limit;
};

static void *fz_alloc(size_t size, size_t align, void *ctx)
{
	struct fz_budget *b = ctx;
	const size_t header = 2 * sizeof(size_t);
	if (align < header)
		align = header;
	if (size > SIZE_MAX - align || size + align > b->limit - b->used)
		return NULL;
	void *base;
	if (posix_memalign(&base, align, size + align) != 0)
		return NULL;
	char *p = (char *)base + align;
	memset(p, 0, size);
	size_t *h = (size_t *)(void *)(p - header);
	h[0] = size + align;
	h[1] = align;
	b->used += size + align;
	return p;
}

static void fz_free(void *ptr, void *ctx)
{
	struct fz_budget *b = ctx;
	const size_t *h =
		(const size_t *)(const void *)((char *)ptr - 2 * sizeof(size_t));
	b->used -= h[0];
	free((char *)ptr - h[1]);
}

/*
 * Cap what one input may cost; false: not worth running at all.  The
 * time, the CPUs and the tasks are cut down; how short a workload's cycle
 * may be, and how high a rate, is left to the simulator's own bound: a
 * budget of FZ_MAX_EVENTS events, which it must refuse a scenario over
 * (with a message) rather than run it beyond.
 */
static bool fz_cap(struct cfsbw_sim_scenario *sc)
{
	if (sc->duration_ns > FZ_MAX_DURATION_NS)
		sc->duration_ns = FZ_MAX_DURATION_NS;
	if (sc->nr_cpus > FZ_MAX_CPUS)
		sc->nr_cpus = FZ_MAX_CPUS;
	if (sc->max_events > FZ_MAX_EVENTS)
		sc->max_events = FZ_MAX_EVENTS;
	unsigned tasks = 0;
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		struct cfsbw_sim_task_spec *t = &sc->tasks[i];
		if (t->count > FZ_MAX_TASKS - tasks)
			t->count = FZ_MAX_TASKS - tasks;
		if (!t->count)
			return false;
		tasks += t->count;
		if (t->workload == CFSBW_SIM_WL_TRACE) {
			struct cfsbw_sim_error err;
			FZ_CHECK(cfsbw_sim_trace_parse(t, fz_trace, &err) == 0,
				 "the harness's trace: %s", err.msg);
		}
	}
	return true;
}

/* --timeline's rows, counted: the report must not see them (issue 16). */
static void fz_timeline_row(void *ctx, const struct cfsbw_sim_timeline_row *row)
{
	unsigned long *rows = ctx;
	FZ_CHECK(row->group && row->period_ns > 0, "a timeline row of "
		 "nothing");
	++*rows;
}

/*
 * One run into a report: JSON then text, in a malloc'ed string; with
 * timeline, as `cfsbw sim --timeline` runs it.
 */
static char *fz_run(const struct cfsbw_sim_scenario *base, bool timeline,
		    size_t *len)
{
	struct fz_budget budget = {0, FZ_MEMORY};
	const struct cfsbw_allocator allocator = {fz_alloc, fz_free, &budget};
	struct cfsbw_sim_scenario sc = *base;
	sc.allocator = &allocator;
	struct cfsbw_sim *s = NULL;
	struct cfsbw_sim_error err;
	int rc = cfsbw_sim_create(&sc, &s, &err);
	if (rc) {
		FZ_CHECK(rc == -EINVAL || rc == -ENOMEM, "cfsbw_sim_create: %d",
			 rc);
		FZ_CHECK(rc == -ENOMEM || err.msg[0],
			 "cfsbw_sim_create: %d and no "
			 "message",
			 rc);
		FZ_CHECK(budget.used == 0,
			 "a failed cfsbw_sim_create kept %zu "
			 "bytes",
			 budget.used);
		char *msg = strdup(err.msg);
		FZ_CHECK(msg, "out of memory");
		*len = strlen(msg);
		return msg;
	}
	unsigned long rows = 0;
	if (timeline)
		cfsbw_sim_set_timeline(s, fz_timeline_row, &rows);
	FZ_CHECK(cfsbw_sim_run(s) == 0, "cfsbw_sim_run failed");
	struct cfsbw_sim_totals totals;
	cfsbw_sim_totals(s, &totals);
	FZ_CHECK(totals.events <= sc.max_events, "%llu events, over the "
		 "budget of %llu the estimate admitted",
		 (unsigned long long)totals.events,
		 (unsigned long long)sc.max_events);
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	FZ_CHECK(f, "open_memstream");
	cfsbw_sim_report_json(s, "fuzz.sim", f);
	cfsbw_sim_report_text(s, "fuzz.sim", f);
	FZ_CHECK(fclose(f) == 0, "report");
	cfsbw_sim_free(s);
	FZ_CHECK(budget.used == 0, "cfsbw_sim_free left %zu bytes",
		 budget.used);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FZ_MAX_TEXT)
		return 0;
	char *text = malloc(size + 1);
	FZ_CHECK(text, "out of memory");
	memcpy(text, data, size);
	text[size] = '\0';

	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	cfsbw_sim_scenario_init(&sc);
	int rc = cfsbw_sim_scenario_parse(&sc, text, &err);
	free(text);
	if (rc) {
		FZ_CHECK(rc == -EINVAL || rc == -ENOMEM, "parse: %d", rc);
		FZ_CHECK(rc == -ENOMEM ||
				 (err.msg[0] && memchr(err.msg, '\0',
						       sizeof err.msg)),
			 "parse: %d and no message", rc);
		cfsbw_sim_scenario_free(&sc);
		return 0;
	}
	if (fz_cap(&sc)) {
		size_t len1, len2, len3;
		char *one = fz_run(&sc, false, &len1);
		char *two = fz_run(&sc, false, &len2);
		char *three = fz_run(&sc, true, &len3);
		FZ_CHECK(len1 == len2 && !memcmp(one, two, len1),
			 "two runs differ:\n%s\n----\n%s", one, two);
		FZ_CHECK(len1 == len3 && !memcmp(one, three, len1),
			 "--timeline changed the report:\n%s\n----\n%s", one,
			 three);
		free(one);
		free(two);
		free(three);
	}
	cfsbw_sim_scenario_free(&sc);
	return 0;
}
