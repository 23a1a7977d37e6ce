/*
 * sim_load.c - the scenario or trace a `cfsbw sim` or `cfsbw plan` run
 * needs, read and prepared (sim_load.h), and one run of it.
 */
/* madvise(): huge pages for the simulator's bulk memory */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli/sim_load.h"
#include "common/helpers.h"
#include "common/read_all.h"

/* the command, for messages: "sim" or "plan" */
static const char *g_cmd = "sim";

/*
 * A NUL byte would end the text where the parser stops reading, and the
 * rest of the file would be ignored without a word: refuse it, naming its
 * line.  Returns that line, or 0 when the text has none.
 */
static unsigned nul_line(const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	if (!nul)
		return 0;
	unsigned line = 1;
	for (const char *c = text; c < nul; c++)
		line += *c == '\n';
	return line;
}

/*
 * The simulator's memory, within a budget (--max-memory): a scenario whose
 * request queues or latency records would outgrow it loses requests or
 * records, counted in the report, instead of taking the machine's memory
 * (a task with 10^9 arrivals a second once took 2 GB in 50 ms of simulated
 * time).  The budget is a fixed number, not a share of this machine's
 * memory, so that a scenario gives the same output everywhere.
 */
struct mem_budget {
	size_t used, limit;
	uint64_t refused; /* allocations the budget refused */
};

#define DEFAULT_MAX_MEMORY ((size_t)2 << 30)

/* The simulator asks for this alignment for memory it writes through in
 * order (its latencies): worth a huge page. */
#define HUGE_PAGE ((size_t)2 << 20)

static void *budget_alloc(size_t size, size_t align, void *ctx)
{
	struct mem_budget *b = ctx;
	/* A header before the block keeps its size and offset for free.  It
	 * counts with the block; the rest of a large alignment's padding is
	 * address space, never written. */
	const size_t header = 2 * sizeof(size_t);
	if (align < header)
		align = header;
	if (size > SIZE_MAX - align || size + header > b->limit - b->used) {
		b->refused++;
		return NULL;
	}
	void *base;
	if (posix_memalign(&base, align, size + align) != 0) {
		b->refused++;
		return NULL;
	}
	char *p = (char *)base + align;
#ifdef MADV_HUGEPAGE
	/* before the first write, so that the pages faulted in are huge */
	if (align >= HUGE_PAGE)
		(void)madvise(p, size, MADV_HUGEPAGE);
#endif
	memset(p, 0, size); /* the allocator contract: zeroed memory */
	size_t *h = (size_t *)(void *)(p - header);
	h[0] = size + header;
	h[1] = align;
	b->used += size + header;
	return p;
}

static void budget_free(void *ptr, void *ctx)
{
	struct mem_budget *b = ctx;
	const size_t *h = (const size_t *)(const void *)((char *)ptr -
							 2 * sizeof(size_t));
	b->used -= h[0];
	free((char *)ptr - h[1]);
}

/* "512M", "2G", "1048576": a size in bytes, K/M/G binary multiples. */
static bool parse_size(const char *s, size_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (errno || *end || v == 0 || v > (SIZE_MAX >> shift))
		return false;
	*out = (size_t)v << shift;
	return true;
}

static void print_error(const char *file, const struct cfsbw_sim_error *err)
{
	if (err->line)
		fprintf(stderr, "cfsbw %s: %s:%u: %s\n", g_cmd, file, err->line,
			err->msg);
	else
		fprintf(stderr, "cfsbw %s: %s: %s\n", g_cmd, file, err->msg);
}

/* A trace file named in the scenario, relative to the scenario's folder. */
/* Where an error in a trace is: "SCENARIO:LINE: in trace ", or nothing
 * more than the trace's own name for --replay (scenario NULL). */
static void trace_where(const char *scenario, const struct cfsbw_sim_task_spec *t)
{
	if (scenario)
		fprintf(stderr, "cfsbw %s: %s:%u: in trace ", g_cmd, scenario,
			t->line);
	else
		fprintf(stderr, "cfsbw %s: ", g_cmd);
}

static int load_trace(const char *scenario, struct cfsbw_sim_task_spec *t)
{
	char path[4096];
	if (!scenario) { /* --replay: the trace as named */
		snprintf(path, sizeof path, "%s", t->trace_file);
		goto named;
	}
	const char *slash = strrchr(scenario, '/');
	if (t->trace_file[0] == '/' || !slash || !strcmp(scenario, "-"))
		snprintf(path, sizeof path, "%s", t->trace_file);
	else
		snprintf(path, sizeof path, "%.*s/%s",
			 (int)(slash - scenario), scenario, t->trace_file);
named:;
	size_t len;
	char *text = read_all(path, CFSBW_SIM_MAX_INPUT_BYTES, &len);
	if (!text) {
		if (scenario)
			fprintf(stderr, "cfsbw %s: %s:%u: trace file '%s': %s\n",
				g_cmd, scenario, t->line, path, strerror(errno));
		else
			fprintf(stderr, "cfsbw %s: %s: %s\n", g_cmd, path,
				strerror(errno));
		return -1;
	}
	unsigned nul = nul_line(text, len);
	if (nul) {
		trace_where(scenario, t);
		fprintf(stderr, "%s:%u: a NUL byte: not a text file\n", path, nul);
		free(text);
		return -1;
	}
	struct cfsbw_sim_error err;
	int rc = cfsbw_sim_replay_parse(t, text, &err);
	free(text);
	if (rc) {
		trace_where(scenario, t);
		if (err.line)
			fprintf(stderr, "%s:%u: %s\n", path, err.line, err.msg);
		else
			fprintf(stderr, "%s: %s\n", path, err.msg);
		return -1;
	}
	return 0;
}

static int bad_flag(const char *flag, const char *value, const char *why)
{
	fprintf(stderr, "cfsbw %s: %s '%s': %s\n", g_cmd, flag, value ? value : "",
		why);
	return 2;
}

/* A decimal integer up to max (kstrtoull's rules: common/helpers.h). */
static bool parse_u64_text(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v;
	if (*s < '0' || *s > '9' || parse_u64(s, &v) || v > max)
		return false;
	*out = v;
	return true;
}

static int apply_overrides(const struct cli_sim_opts *o,
			   struct cfsbw_sim_scenario *sc)
{
	uint64_t u;
	if (o->policy && cfsbw_policy_parse(o->policy, &sc->policy))
		return bad_flag("--policy", o->policy,
				"expected v4, upstream or hardlimits");
	if (o->scheduler &&
	    cfsbw_sim_scheduler_parse(o->scheduler, &sc->scheduler))
		return bad_flag("--scheduler", o->scheduler,
				"expected cfs or eevdf");
	if (o->balance_load &&
	    cfsbw_sim_balance_load_parse(o->balance_load, &sc->balance_load))
		return bad_flag("--balance-load", o->balance_load,
				"expected instant or pelt");
	if (o->wake_scan &&
	    cfsbw_sim_wake_scan_parse(o->wake_scan, &sc->wake_scan))
		return bad_flag("--wake-scan", o->wake_scan,
				"expected all or util");
	if (o->seed) {
		if (!parse_u64_text(o->seed, UINT64_MAX, &u))
			return bad_flag("--seed", o->seed,
					"expected an unsigned 64-bit integer");
		sc->seed = u;
	}
	if (o->duration) {
		int64_t ns;
		size_t n = strlen(o->duration);
		if (!n || o->duration[n - 1] < 'a' ||
		    cfsbw_parse_duration(o->duration, CFSBW_NSEC_PER_USEC, &ns) ||
		    ns <= 0)
			return bad_flag("--duration", o->duration,
					"expected a duration above 0 with a "
					"unit: ns, us, ms or s");
		sc->duration_ns = ns;
	}
	if (o->cpus) {
		if (!parse_u64_text(o->cpus, CFSBW_SIM_MAX_CPUS, &u) || u == 0)
			return bad_flag("--cpus", o->cpus, "expected 1..4096");
		sc->nr_cpus = (unsigned)u;
	}
	if (o->hz) {
		if (!parse_u64_text(o->hz, CFSBW_SIM_MAX_HZ, &u) ||
		    u < CFSBW_SIM_MIN_HZ)
			return bad_flag("--hz", o->hz, "expected 100..10000");
		sc->hz = (unsigned)u;
	}
	return 0;
}


bool cli_set_value(const char *file, const char *text, char *out, size_t size)
{
	size_t n = strlen(text), fn = strlen(file);
	bool us_file = fn > 3 && !strcmp(file + fn - 3, "_us");
	if (us_file && n && text[n - 1] >= 'a' && text[n - 1] <= 'z') {
		int64_t ns;
		if (cfsbw_parse_duration(text, CFSBW_NSEC_PER_USEC, &ns) ||
		    ns < 0 || ns % CFSBW_NSEC_PER_USEC)
			return false;
		snprintf(out, size, "%lld", (long long)(ns / 1000));
		return true;
	}
	if (!n || n >= size || strchr(text, ':'))
		return false;
	memcpy(out, text, n + 1);
	return true;
}

int cli_set_parse(const char *cmd, const char *flag, const char *arg,
		  struct cli_set *out)
{
	memset(out, 0, sizeof(*out));
	const char *eq = strchr(arg, '=');
	const char *colon = arg[0] == '/' ? strchr(arg, ':') : NULL;
	const char *file = colon && (!eq || colon < eq) ? colon + 1 : arg;
	if (!eq || eq == file) {
		fprintf(stderr,
			"cfsbw %s: %s '%s': expected [GROUP:]FILE=VALUE, e.g. "
			"/web:cpu.cfs_quota_us=50ms\n",
			cmd, flag, arg);
		return 2;
	}
	if (file != arg) {
		size_t gl = (size_t)(file - 1 - arg);
		if (gl >= sizeof out->group)
			gl = sizeof out->group - 1;
		memcpy(out->group, arg, gl);
	}
	size_t fl = (size_t)(eq - file);
	if (fl >= sizeof out->file) {
		fprintf(stderr, "cfsbw %s: %s '%s': no such file\n", cmd, flag,
			arg);
		return 2;
	}
	memcpy(out->file, file, fl);
	size_t vl = strlen(eq + 1);
	if (vl >= sizeof out->value) {
		fprintf(stderr, "cfsbw %s: %s '%s': value too long\n", cmd,
			flag, arg);
		return 2;
	}
	memcpy(out->value, eq + 1, vl + 1);
	return 0;
}

const char *cli_set_group(const struct cli_set *s,
			  const struct cfsbw_sim_scenario *sc)
{
	if (s->group[0])
		return s->group;
	const char *only = NULL;
	for (size_t i = 0; i < sc->nr_groups; i++) {
		if (!strcmp(sc->groups[i].path, "/"))
			continue;
		if (only)
			return NULL; /* several: the user must name one */
		only = sc->groups[i].path;
	}
	return only;
}

void cli_groups_text(const struct cfsbw_sim_scenario *sc, char *buf,
		     size_t size)
{
	size_t n = 0, len = 0;
	for (size_t i = 0; i < sc->nr_groups; i++)
		n += strcmp(sc->groups[i].path, "/") != 0;
	if (!n) {
		snprintf(buf, size, "no group below the root");
		return;
	}
	len = (size_t)snprintf(buf, size, "%zu groups:", n);
	size_t shown = 0;
	for (size_t i = 0; i < sc->nr_groups && len < size; i++) {
		if (!strcmp(sc->groups[i].path, "/"))
			continue;
		if (shown == 4) {
			snprintf(buf + len, size - len, ", ...");
			return;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s %s",
					shown ? "," : "", sc->groups[i].path);
		shown++;
	}
}

/*
 * The settings the command line added to the scenario's group lines, so
 * that a value the core refuses is blamed on the flag that gave it, not on
 * the group's line in the file.
 */
static struct {
	char pair[160];   /* "cpu.cfs_period_us=100", as written */
	char origin[400]; /* "--set /app:cpu.cfs_period_us=100us" */
} g_added[CLI_MAX_SETS + 8];
static size_t g_nr_added;

static void remember(const struct cli_set *s, const char *path,
		     const char *value, const char *flag)
{
	if (g_nr_added == sizeof g_added / sizeof g_added[0])
		return;
	snprintf(g_added[g_nr_added].pair, sizeof g_added[0].pair, "%s=%s",
		 s->file, value);
	snprintf(g_added[g_nr_added].origin, sizeof g_added[0].origin,
		 "%s %s:%s=%s", flag, path, s->file, s->value);
	g_nr_added++;
}

/* An error about a setting the command line added: name the flag. */
static bool blame_flag(const struct cfsbw_sim_error *err)
{
	for (size_t i = g_nr_added; i-- > 0;) {
		size_t n = strlen(g_added[i].pair);
		if (!strncmp(err->msg, g_added[i].pair, n) &&
		    err->msg[n] == ':') {
			fprintf(stderr, "cfsbw %s: %s:%s\n", g_cmd,
				g_added[i].origin, err->msg + n + 1);
			return true;
		}
	}
	return false;
}

/* Append file=value to the group's settings, written after the file's. */
static int apply_set(const struct cli_set *s, const char *flag,
		     struct cfsbw_sim_scenario *sc)
{
	const char *path = cli_set_group(s, sc);
	if (!path) {
		char groups[256];
		cli_groups_text(sc, groups, sizeof groups);
		fprintf(stderr,
			"cfsbw %s: %s=%s: name the group (GROUP:FILE=VALUE): "
			"the scenario has %s\n",
			g_cmd, s->file, s->value, groups);
		return 2;
	}
	char value[64];
	if (!cli_set_value(s->file, s->value, value, sizeof value)) {
		fprintf(stderr,
			"cfsbw %s: %s=%s: expected a number, or a duration "
			"with a unit for a *_us file\n",
			g_cmd, s->file, s->value);
		return 2;
	}
	struct cfsbw_sim_group_spec *g = NULL;
	for (size_t i = 0; i < sc->nr_groups; i++)
		if (!strcmp(sc->groups[i].path, path))
			g = &sc->groups[i];
	if (!g) {
		fprintf(stderr, "cfsbw %s: %s:%s=%s: no group %s in %s\n",
			g_cmd, path, s->file, s->value, path, "the scenario");
		return 2;
	}
	struct cfsbw_sim_setting *ns =
		realloc(g->settings, (g->nr_settings + 1) * sizeof(*ns));
	if (!ns)
		return 1;
	g->settings = ns;
	struct cfsbw_sim_setting *st = &ns[g->nr_settings];
	st->file = strdup(s->file);
	st->value = strdup(value);
	if (!st->file || !st->value) {
		free(st->file);
		free(st->value);
		return 1;
	}
	g->nr_settings++;
	remember(s, path, value, flag);
	return 0;
}

int cli_sim_prepare(const struct cli_sim_opts *o, const struct cli_set *extra,
		    size_t nr_extra, struct cfsbw_sim_scenario *sc)
{
	struct cfsbw_sim_error err;
	char *text = NULL;
	size_t len = 0;
	int rc;
	g_cmd = o->cmd;
	g_nr_added = 0;
	cfsbw_sim_scenario_init(sc);
	if (o->wakeups && strcmp(o->wakeups, "progress") &&
	    strcmp(o->wakeups, "recorded"))
		return bad_flag("--wakeups", o->wakeups,
				"expected progress (each wake-up tied to the "
				"work done before it) or recorded (at the "
				"recorded times)");
	if (o->wakeups && !o->replay)
		return bad_flag("--wakeups", o->wakeups,
				"goes with --replay (in a scenario: "
				"wakeups=recorded on the trace's task line)");
	if (o->replay) {
		/* one group, the trace's threads in it, until the last exits
		 * (at most a day of simulated time) */
		const char *f = o->file;
		size_t n = strlen(f) + 128;
		if (strchr(f, ' ') || strchr(f, '#') || strchr(f, '\t')) {
			fprintf(stderr,
				"cfsbw %s: --replay '%s': a file name "
				"without blanks or '#', please\n",
				g_cmd, f);
			return 2;
		}
		if (!(text = malloc(n)))
			return 1;
		snprintf(text, n, "duration 86400s\ngroup /app\ntask /app trace "
				  "file=%s wakeups=%s\n",
			 f, o->wakeups ? o->wakeups : "progress");
		sc->until_done = true;
	} else {
		text = read_all(o->file, CFSBW_SIM_MAX_INPUT_BYTES, &len);
		if (!text) {
			int e = errno;
			fprintf(stderr, "cfsbw %s: %s: %s%s\n", g_cmd, o->file,
				strerror(e),
				e == EFBIG ? " (a scenario or trace has at most "
					     "64 MiB)"
					   : "");
			return 2;
		}
		unsigned nul = nul_line(text, len);
		if (nul) {
			fprintf(stderr,
				"cfsbw %s: %s:%u: a NUL byte: not a text file\n",
				g_cmd, o->file, nul);
			free(text);
			return 2;
		}
	}
	rc = cfsbw_sim_scenario_parse(sc, text, &err);
	free(text);
	if (rc) {
		print_error(o->file, &err);
		return rc == -ENOMEM ? 1 : 2;
	}
	if ((rc = apply_overrides(o, sc)))
		return rc;
	for (size_t i = 0; i < o->nr_sets; i++)
		if ((rc = apply_set(&o->sets[i], "--set", sc)))
			return rc;
	for (size_t i = 0; i < nr_extra; i++)
		if ((rc = apply_set(&extra[i], g_cmd[0] == 'p' ? "the plan's"
							    : "--sweep",
				    sc)))
			return rc;
	/* a replayed trace's path is the user's, not relative to a scenario */
	const char *base = o->replay ? NULL : o->file;
	for (size_t i = 0; i < sc->nr_tasks; i++)
		if (sc->tasks[i].workload == CFSBW_SIM_WL_TRACE &&
		    load_trace(base, &sc->tasks[i]))
			return 2;
	return 0;
}

int cli_sim_run(const struct cli_sim_opts *o, struct cfsbw_sim_scenario *sc,
		const struct cli_run *how, struct cfsbw_sim_point *pt)
{
	struct mem_budget budget = {.limit = DEFAULT_MAX_MEMORY};
	if (o->max_memory && !parse_size(o->max_memory, &budget.limit))
		return bad_flag("--max-memory", o->max_memory,
				"expected a size above 0 in bytes, or with "
				"K, M or G");
	const struct cfsbw_allocator allocator = {budget_alloc, budget_free,
						  &budget};
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	const char *name = o->file;
	sc->allocator = &allocator;
	int rc = cfsbw_sim_create(sc, &s, &err);
	if (rc) {
		if (rc == -ENOMEM && budget.refused)
			fprintf(stderr,
				"cfsbw %s: %s: the machine needs more than "
				"--max-memory %s (%zu bytes)\n",
				g_cmd, name, o->max_memory ? o->max_memory : "2G",
				budget.limit);
		else
			if (!blame_flag(&err))
				print_error(name, &err);
		sc->allocator = NULL;
		return rc == -ENOMEM ? 1 : 2;
	}
	if (how->timeline)
		cfsbw_sim_set_timeline(s, how->timeline, how->timeline_ctx);
	cfsbw_sim_run(s);
	if (budget.refused)
		fprintf(stderr,
			"cfsbw %s: %s: the run reached --max-memory %s: "
			"latencies not recorded are counted in the report\n",
			g_cmd, name, o->max_memory ? o->max_memory : "2G");
	if (how->report == 2)
		cfsbw_sim_report_json(s, name, stdout);
	else if (how->report == 1) {
		cfsbw_sim_report_text(s, name, stdout);
		/* a replay's end: when its last thread exited */
		for (size_t i = 0; i < cfsbw_sim_nr_lines(s); i++) {
			struct cfsbw_sim_line_result r;
			cfsbw_sim_line_result(s, i, &r);
			if (r.exited)
				printf("%u: %" PRIu64 " of %u threads exited, the "
				       "last at %" PRId64 ".%03" PRId64 " s\n",
				       r.spec->line, r.exited, r.spec->count,
				       r.last_exit_ns / 1000000000,
				       r.last_exit_ns / 1000000 % 1000);
		}
	}
	rc = 0;
	if (pt && how->group && cfsbw_sim_point_measure(s, how->group, pt)) {
		fprintf(stderr, "cfsbw %s: %s: no group %s\n", g_cmd, name,
			how->group);
		rc = 2;
	}
	cfsbw_sim_free(s);
	sc->allocator = NULL;
	return rc;
}
