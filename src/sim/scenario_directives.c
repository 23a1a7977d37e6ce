/*
 * scenario_directives.c - what each line of a scenario says: the table of
 * directives (docs/sim.md) and the reader of each.
 *
 * A setting (cpus, hz, duration, seed, policy, max_events,
 * wakeup_latency, migration_cost, scheduler, base_slice) is one value,
 * given at most once; sysctl, group and task lines may repeat.  Values that belong to the core (group files,
 * sysctls) are kept as text and written through the core's file
 * interface by cfsbw_sim_create(), so that the core's own validation (R2)
 * is the one that applies.  Every error names the line and quotes the
 * offending text.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define MAX_WORKLOAD_NS (3600 * CFSBW_NSEC_PER_SEC) /* 1 h */

struct scenario_parse;
struct directive;

/* A line whose directive may repeat: all its words. */
typedef int line_reader(struct scenario_parse *ps, char **tok, int nt);
/* A setting's one value, into the scenario at d->offset. */
typedef int setting_reader(struct scenario_parse *ps,
			   const struct directive *d, const char *v);

static line_reader read_sysctl, read_group, read_task;
static setting_reader read_uint, read_duration, read_policy, read_scheduler,
	read_balance_load, read_wake_scan, read_first_period;

/* Where a setting's value goes in struct cfsbw_sim_scenario. */
#define SETTING(field)                                                         \
	.offset = offsetof(struct cfsbw_sim_scenario, field),                  \
	.size = sizeof(((struct cfsbw_sim_scenario *)0)->field)

/*
 * The directives, in the order the unknown-directive error lists them.
 * A line directive has a line reader; a setting has a value reader, the
 * value's place in the scenario, its range, and what the error calls a
 * valid value (NULL: "an integer in min..max").
 */
static const struct directive {
	const char *name;
	line_reader *read_line;
	setting_reader *read_value;
	size_t offset, size;
	uint64_t min, max;
	const char *valid;
} directives[] = {
	{.name = "cpus", .read_value = read_uint, SETTING(nr_cpus),
	 .min = 1, .max = CFSBW_SIM_MAX_CPUS},
	{.name = "hz", .read_value = read_uint, SETTING(hz),
	 .min = CFSBW_SIM_MIN_HZ, .max = CFSBW_SIM_MAX_HZ},
	{.name = "duration", .read_value = read_duration, SETTING(duration_ns),
	 .min = 1, .max = CFSBW_SIM_MAX_DURATION_NS,
	 .valid = "a duration above 0 with a unit (ns, us, ms, s), at most "
		  "2^62 ns (146 years)"},
	{.name = "seed", .read_value = read_uint, SETTING(seed),
	 .min = 0, .max = UINT64_MAX, .valid = "an unsigned 64-bit integer"},
	{.name = "policy", .read_value = read_policy, SETTING(policy),
	 .valid = "v4, upstream or hardlimits"},
	{.name = "max_events", .read_value = read_uint, SETTING(max_events),
	 .min = 1, .max = UINT64_MAX, .valid = "an integer above 0"},
	{.name = "wakeup_latency", .read_value = read_duration,
	 SETTING(wakeup_latency_ns), .min = 0,
	 .max = CFSBW_SIM_MAX_WAKEUP_LATENCY_NS,
	 .valid = "a duration with a unit (ns, us, ms, s), at most 1s"},
	{.name = "migration_cost", .read_value = read_duration,
	 SETTING(migration_cost_ns), .min = 0,
	 .max = CFSBW_SIM_MAX_MIGRATION_COST_NS,
	 .valid = "a duration with a unit (ns, us, ms, s), at most 1s"},
	{.name = "scheduler", .read_value = read_scheduler, SETTING(scheduler),
	 .valid = "cfs or eevdf"},
	{.name = "base_slice", .read_value = read_duration,
	 SETTING(base_slice_ns), .min = 1000,
	 .max = CFSBW_SIM_MAX_BASE_SLICE_NS,
	 .valid = "a duration with a unit (ns, us, ms, s), from 1us to 1s"},
	{.name = "balance_load", .read_value = read_balance_load,
	 SETTING(balance_load), .valid = "instant or pelt"},
	{.name = "wake_scan", .read_value = read_wake_scan,
	 SETTING(wake_scan), .valid = "all or util"},
	{.name = "first_period", .read_value = read_first_period,
	 SETTING(first_period),
	 .valid = "whole, random, or a share of a period from 1% to 100%"},
	{.name = "sysctl", .read_line = read_sysctl},
	{.name = "group", .read_line = read_group},
	{.name = "task", .read_line = read_task},
};

#define NR_DIRECTIVES (sizeof directives / sizeof directives[0])

struct scenario_parse {
	struct cfsbw_sim_scenario *sc;
	struct cfsbw_sim_error *err;
	unsigned line;
	unsigned seen[NR_DIRECTIVES]; /* the line a setting was given on */
	/*
	 * The declared groups' paths, hashed: open addressing, each slot
	 * 1 + an index into sc->groups (0: empty), a power of two of them,
	 * at most half used.  Scanning the groups instead made a scenario of
	 * 20,000 groups quadratic: each group and task line looked at every
	 * group before it.
	 */
	uint32_t *paths;
	size_t nr_paths_slots;
};

/* An error naming the line being read. */
#define fail(ps, ...) cfsbw_sim__input_fail((ps)->err, (ps)->line, __VA_ARGS__)

static int oom(const struct scenario_parse *ps)
{
	return cfsbw_sim__input_oom(ps->err, ps->line);
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

/* Grow an array of n elements by one; returns the new element or NULL. */
static void *grow(void **arr, size_t *n, size_t size)
{
	void *p = realloc(*arr, (*n + 1) * size);
	if (!p)
		return NULL;
	*arr = p;
	char *e = (char *)p + *n * size;
	memset(e, 0, size);
	(*n)++;
	return e;
}

/* ---- one line ------------------------------------------------------------ */

static const struct directive *directive_find(const char *name)
{
	for (size_t i = 0; i < NR_DIRECTIVES; i++)
		if (!strcmp(directives[i].name, name))
			return &directives[i];
	return NULL;
}

static int unknown_directive(struct scenario_parse *ps, const char *name)
{
	char known[224] = ""; /* every name, with room to grow */
	size_t used = 0;
	for (size_t i = 0; i < NR_DIRECTIVES && used < sizeof known; i++)
		used += (size_t)snprintf(known + used, sizeof known - used,
					 "%s%s", i ? ", " : "",
					 directives[i].name);
	return fail(ps, "unknown directive '%s' (%s)", name, known);
}

static int read_directive(void *ctx, unsigned line, char **tok, int nt)
{
	struct scenario_parse *ps = ctx;
	const struct directive *d = directive_find(tok[0]);

	ps->line = line;
	if (!d)
		return unknown_directive(ps, tok[0]);
	if (d->read_line)
		return d->read_line(ps, tok, nt);
	if (nt != 2)
		return fail(ps, "%s: expected one value", d->name);
	unsigned *seen = &ps->seen[d - directives];
	if (*seen)
		return fail(ps, "'%s' given twice (first on line %u)", d->name,
			    *seen);
	*seen = ps->line;
	return d->read_value(ps, d, tok[1]);
}

/* The slot of path in the index: its group's, or the empty one where it
 * would go. */
static uint32_t *path_slot(const struct scenario_parse *ps, const char *path)
{
	size_t mask = ps->nr_paths_slots - 1;
	size_t i = text_hash(path, strlen(path)) & mask;
	for (;; i = (i + 1) & mask) {
		uint32_t v = ps->paths[i];
		if (!v || !strcmp(ps->sc->groups[v - 1].path, path))
			return &ps->paths[i];
	}
}

/* Room in the index for the groups declared so far and one more; false
 * for want of memory (or of 32-bit indexes). */
static bool paths_room(struct scenario_parse *ps)
{
	size_t n = ps->sc->nr_groups + 1;
	if (n < ps->nr_paths_slots / 2)
		return true;
	size_t cap = ps->nr_paths_slots ? 2 * ps->nr_paths_slots : 64;
	while (cap / 2 <= n)
		cap *= 2;
	if (n >= UINT32_MAX || cap > SIZE_MAX / sizeof(uint32_t))
		return false;
	uint32_t *old = ps->paths;
	ps->paths = calloc(cap, sizeof(uint32_t));
	if (!ps->paths) {
		ps->paths = old;
		return false;
	}
	ps->nr_paths_slots = cap;
	free(old);
	for (size_t i = 0; i < ps->sc->nr_groups; i++)
		if (ps->sc->groups[i].path && strcmp(ps->sc->groups[i].path, "/"))
			*path_slot(ps, ps->sc->groups[i].path) = (uint32_t)(i + 1);
	return true;
}

int cfsbw_sim_scenario_parse(struct cfsbw_sim_scenario *sc, const char *text,
			     struct cfsbw_sim_error *err)
{
	struct scenario_parse ps = {.sc = sc, .err = err};
	int rc;
	if (!paths_room(&ps))
		rc = cfsbw_sim__input_oom(err, 0);
	else
		rc = cfsbw_sim__scenario_read_words(text, err, read_directive,
						    &ps);
	free(ps.paths);
	return rc;
}

/* ---- settings ------------------------------------------------------------ */

static void *setting_field(const struct scenario_parse *ps,
			   const struct directive *d)
{
	return (char *)ps->sc + d->offset;
}

static int read_uint(struct scenario_parse *ps, const struct directive *d,
		     const char *v)
{
	uint64_t u;
	if (!sim_parse_uint(v, d->min, d->max, &u)) {
		if (d->valid)
			return fail(ps, "%s '%s': %s", d->name, v, d->valid);
		return fail(ps, "%s '%s': an integer in %" PRIu64 "..%" PRIu64,
			    d->name, v, d->min, d->max);
	}
	if (d->size == sizeof(uint64_t))
		*(uint64_t *)setting_field(ps, d) = u;
	else
		*(unsigned *)setting_field(ps, d) = (unsigned)u;
	return 0;
}

/* A duration with its unit (ns, us, ms, s): a bare number is ambiguous. */
static bool parse_dur(const char *s, int64_t *out)
{
	size_t n = strlen(s);
	if (!n || !isalpha((unsigned char)s[n - 1]))
		return false;
	return cfsbw_parse_duration(s, CFSBW_NSEC_PER_USEC, out) == 0;
}

static int read_duration(struct scenario_parse *ps, const struct directive *d,
			 const char *v)
{
	int64_t ns;
	if (!parse_dur(v, &ns) || ns < (int64_t)d->min || ns > (int64_t)d->max)
		return fail(ps, "%s '%s': %s", d->name, v, d->valid);
	*(int64_t *)setting_field(ps, d) = ns;
	return 0;
}

static int read_policy(struct scenario_parse *ps, const struct directive *d,
		       const char *v)
{
	if (cfsbw_policy_parse(v, setting_field(ps, d)))
		return fail(ps, "%s '%s': %s", d->name, v, d->valid);
	return 0;
}

static int read_scheduler(struct scenario_parse *ps, const struct directive *d,
			  const char *v)
{
	if (cfsbw_sim_scheduler_parse(v, setting_field(ps, d)))
		return fail(ps, "%s '%s': %s", d->name, v, d->valid);
	return 0;
}

static int read_balance_load(struct scenario_parse *ps,
			     const struct directive *d, const char *v)
{
	if (cfsbw_sim_balance_load_parse(v, setting_field(ps, d)))
		return fail(ps, "%s '%s': %s", d->name, v, d->valid);
	return 0;
}

static int read_wake_scan(struct scenario_parse *ps, const struct directive *d,
			  const char *v)
{
	if (cfsbw_sim_wake_scan_parse(v, setting_field(ps, d)))
		return fail(ps, "%s '%s': %s", d->name, v, d->valid);
	return 0;
}

static int read_first_period(struct scenario_parse *ps,
			     const struct directive *d, const char *v)
{
	if (cfsbw_sim_first_period_parse(v, setting_field(ps, d)))
		return fail(ps, "%s '%s': %s", d->name, v, d->valid);
	return 0;
}

const char *cfsbw_sim_first_period_text(int fp, char *buf, size_t size)
{
	if (fp == CFSBW_SIM_FIRST_PERIOD_RANDOM)
		return "random";
	if (fp <= 0)
		return "whole";
	snprintf(buf, size, "%d%%", fp);
	return buf;
}

int cfsbw_sim_first_period_parse(const char *text, int *out)
{
	if (!strcmp(text, "whole")) {
		*out = 0;
		return 0;
	}
	if (!strcmp(text, "random")) {
		*out = CFSBW_SIM_FIRST_PERIOD_RANDOM;
		return 0;
	}
	unsigned pct = 0;
	size_t n = 0;
	while (text[n] >= '0' && text[n] <= '9' && n < 4)
		pct = pct * 10 + (unsigned)(text[n++] - '0');
	if (n == 0 || strcmp(text + n, "%") || pct < 1 || pct > 100)
		return -EINVAL;
	*out = (int)pct;
	return 0;
}

/* ---- sysctl, group and task lines ---------------------------------------- */

static int read_sysctl(struct scenario_parse *ps, char **tok, int nt)
{
	struct cfsbw_sim_scenario *sc = ps->sc;
	if (nt != 3)
		return fail(ps, "sysctl: expected 'sysctl NAME VALUE'");
	struct cfsbw_sim_sysctl_spec *y =
		grow((void **)&sc->sysctls, &sc->nr_sysctls, sizeof(*y));
	if (!y)
		return oom(ps);
	y->line = ps->line;
	y->name = dup_str(tok[1]);
	y->value = dup_str(tok[2]);
	return y->name && y->value ? 0 : oom(ps);
}

static bool group_declared(const struct scenario_parse *ps, const char *path)
{
	return !strcmp(path, "/") || *path_slot(ps, path) != 0;
}

static int read_group(struct scenario_parse *ps, char **tok, int nt)
{
	struct cfsbw_sim_scenario *sc = ps->sc;
	if (nt < 2)
		return fail(ps, "group: expected 'group PATH [FILE=VALUE...]'");
	const char *path = tok[1];
	if (path[0] != '/')
		return fail(ps, "group '%s': a path starts with '/'", path);
	if (strcmp(path, "/") != 0) {
		if (group_declared(ps, path))
			return fail(ps, "group '%s': declared twice", path);
		const char *slash = strrchr(path, '/');
		char parent[1024];
		size_t plen = (size_t)(slash - path);
		if (plen >= sizeof(parent))
			return fail(ps, "group '%s': path too long", path);
		memcpy(parent, path, plen);
		parent[plen] = '\0';
		if (plen == 0)
			strcpy(parent, "/");
		if (!group_declared(ps, parent))
			return fail(ps,
				    "group '%s': its parent '%s' must be declared before it",
				    path, parent);
	}
	if (!paths_room(ps))
		return oom(ps);
	struct cfsbw_sim_group_spec *g =
		grow((void **)&sc->groups, &sc->nr_groups, sizeof(*g));
	if (!g)
		return oom(ps);
	g->line = ps->line;
	if (!(g->path = dup_str(path)))
		return oom(ps);
	if (strcmp(path, "/") != 0)
		*path_slot(ps, path) = (uint32_t)sc->nr_groups;
	for (int i = 2; i < nt; i++) {
		char *eq = strchr(tok[i], '=');
		if (!eq || eq == tok[i])
			return fail(ps,
				    "group %s: '%s' is not FILE=VALUE", path, tok[i]);
		struct cfsbw_sim_setting *st = grow(
			(void **)&g->settings, &g->nr_settings, sizeof(*st));
		if (!st)
			return oom(ps);
		*eq = '\0';
		st->file = dup_str(tok[i]);
		st->value = dup_str(eq + 1);
		*eq = '=';
		if (!st->file || !st->value)
			return oom(ps);
	}
	return 0;
}

/*
 * A rate "R/s" (or "R"), R a decimal with up to 6 fraction digits, into
 * the mean gap between arrivals in ns (integers only: 1e15 / micro-rate).
 */
static bool parse_rate(const char *s, int64_t *gap_ns)
{
	char buf[64];
	size_t n = strlen(s);
	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n + 1);
	if (n > 2 && !strcmp(buf + n - 2, "/s"))
		buf[n - 2] = '\0';
	uint64_t micro = 0;
	int frac = -1;
	for (const char *p = buf; *p; p++) {
		if (*p == '.' && frac < 0) {
			frac = 0;
			continue;
		}
		if (!isdigit((unsigned char)*p) || frac == 6)
			return false;
		if (micro > UINT64_C(1000000000000000))
			return false;
		micro = micro * 10 + (uint64_t)(*p - '0');
		if (frac >= 0)
			frac++;
	}
	if (!buf[0] || frac == 0)
		return false;
	/* 1e9 per second at most (CFSBW_SIM_MAX_RATE_PER_SEC, a gap of 1 ns):
	 * checked before each scaling step, so that nothing wraps */
	for (int f = frac < 0 ? 0 : frac; f < 6; f++) {
		if (micro > UINT64_C(1000000000000000) / 10)
			return false;
		micro *= 10;
	}
	if (micro == 0 ||
	    micro > (uint64_t)CFSBW_SIM_MAX_RATE_PER_SEC * 1000000)
		return false;
	*gap_ns = (int64_t)(UINT64_C(1000000000000000) / micro);
	return true;
}

/* The k=v arguments a workload accepts. */
static bool key_allowed(enum cfsbw_sim_workload wl, const char *key)
{
	if (!strcmp(key, "count"))
		return true;
	switch (wl) {
	case CFSBW_SIM_WL_BUSY:
		return false;
	case CFSBW_SIM_WL_DUTY:
		return !strcmp(key, "run") || !strcmp(key, "sleep") ||
		       !strcmp(key, "phase");
	case CFSBW_SIM_WL_REQUESTS:
		return !strcmp(key, "rate") || !strcmp(key, "service") ||
		       !strcmp(key, "arrivals");
	case CFSBW_SIM_WL_TRACE:
		return !strcmp(key, "file") || !strcmp(key, "loop") ||
		       !strcmp(key, "wakeups");
	case CFSBW_SIM_WL_COUNT:
		break;
	}
	return false;
}

/* A value that is one of two words: *flag true for on, false for off;
 * false when it is neither (and *flag as it was). */
static bool word_flag(const char *val, const char *on, const char *off,
		      bool *flag)
{
	if (strcmp(val, on) && strcmp(val, off))
		return false;
	*flag = !strcmp(val, on);
	return true;
}

static int task_arg(struct scenario_parse *ps, struct cfsbw_sim_task_spec *t,
		    const char *key, const char *val, const char *tok)
{
	uint64_t u;
	int64_t d;
	if (!strcmp(key, "count")) {
		if (!sim_parse_uint(val, 1, CFSBW_SIM_MAX_COUNT, &u))
			return fail(ps,
				    "'%s': count is an integer in 1..%u", tok,
				    CFSBW_SIM_MAX_COUNT);
		t->count = (unsigned)u;
	} else if (!strcmp(key, "run") || !strcmp(key, "sleep")) {
		bool run = key[0] == 'r';
		if (!parse_dur(val, &d) || d > MAX_WORKLOAD_NS ||
		    (run && d == 0))
			return fail(ps,
				    "'%s': expected a duration with a unit "
				    "(ns, us, ms, s)%s, at most 1h",
				    tok, run ? " above 0" : "");
		if (run)
			t->run_ns = d;
		else
			t->sleep_ns = d;
	} else if (!strcmp(key, "phase")) {
		t->phase_random = !strcmp(val, "random");
		if (!t->phase_random &&
		    (!parse_dur(val, &t->phase_ns) || t->phase_ns > MAX_WORKLOAD_NS))
			return fail(ps,
				    "'%s': expected random or a duration with a "
				    "unit, at most 1h",
				    tok);
	} else if (!strcmp(key, "rate")) {
		if (!parse_rate(val, &t->mean_gap_ns) ||
		    t->mean_gap_ns > MAX_WORKLOAD_NS)
			return fail(ps,
				    "'%s': expected a rate such as 200/s or 0.5/s, "
				    "from 1/3600s to %u/s",
				    tok, CFSBW_SIM_MAX_RATE_PER_SEC);
	} else if (!strcmp(key, "service")) {
		const char *v = val;
		t->service_exp = !strncmp(v, "exp:", 4);
		if (t->service_exp)
			v += 4;
		if (!parse_dur(v, &d) || d == 0 || d > MAX_WORKLOAD_NS)
			return fail(ps,
				    "'%s': expected a duration above 0 with a "
				    "unit, or exp:DURATION, at most 1h",
				    tok);
		t->service_ns = d;
	} else if (!strcmp(key, "arrivals")) {
		if (!word_flag(val, "periodic", "poisson", &t->arrivals_periodic))
			return fail(ps,
				    "'%s': arrivals is poisson or periodic", tok);
	} else if (!strcmp(key, "file")) {
		if (!*val)
			return fail(ps, "'%s': no file name", tok);
		free(t->trace_file);
		if (!(t->trace_file = dup_str(val)))
			return oom(ps);
	} else if (!strcmp(key, "loop")) {
		if (!word_flag(val, "yes", "no", &t->trace_loop) &&
		    !word_flag(val, "1", "0", &t->trace_loop))
			return fail(ps, "'%s': loop is yes or no", tok);
	} else if (!strcmp(key, "wakeups")) {
		if (!word_flag(val, "recorded", "progress", &t->trace_open))
			return fail(ps,
				    "'%s': wakeups is progress (tied to the "
				    "work done) or recorded (at the recorded "
				    "times)",
				    tok);
	}
	return 0;
}

static int read_task(struct scenario_parse *ps, char **tok, int nt)
{
	struct cfsbw_sim_scenario *sc = ps->sc;
	if (nt < 3)
		return fail(ps,
			    "task: expected 'task GROUP WORKLOAD [KEY=VALUE...]'");
	if (!group_declared(ps, tok[1]))
		return fail(ps,
			    "task: no group '%s' (declare it with a group line first)",
			    tok[1]);
	enum cfsbw_sim_workload wl = CFSBW_SIM_WL_COUNT;
	for (unsigned w = 0; w < CFSBW_SIM_WL_COUNT; w++)
		if (!strcmp(tok[2], cfsbw_sim_workload_name(
					    (enum cfsbw_sim_workload)w)))
			wl = (enum cfsbw_sim_workload)w;
	if (wl == CFSBW_SIM_WL_COUNT)
		return fail(ps,
			    "task: unknown workload '%s' (busy, duty, requests, trace)",
			    tok[2]);
	struct cfsbw_sim_task_spec *t =
		grow((void **)&sc->tasks, &sc->nr_tasks, sizeof(*t));
	if (!t)
		return oom(ps);
	t->line = ps->line;
	t->workload = wl;
	t->count = 1;
	t->sleep_ns = -1;
	if (!(t->group = dup_str(tok[1])))
		return oom(ps);
	/* the workload as written, for the report */
	size_t len = 1;
	for (int i = 2; i < nt; i++)
		len += strlen(tok[i]) + 1;
	if (!(t->text = malloc(len)))
		return oom(ps);
	t->text[0] = '\0';
	for (int i = 2; i < nt; i++) {
		if (!strncmp(tok[i], "count=", 6))
			continue;
		if (t->text[0])
			strcat(t->text, " ");
		strcat(t->text, tok[i]);
	}
	for (int i = 3; i < nt; i++) {
		char key[64];
		const char *eq = strchr(tok[i], '=');
		size_t klen = eq ? (size_t)(eq - tok[i]) : 0;
		if (!eq || klen == 0 || klen >= sizeof(key))
			return fail(ps, "task: '%s' is not KEY=VALUE", tok[i]);
		memcpy(key, tok[i], klen);
		key[klen] = '\0';
		if (!key_allowed(wl, key))
			return fail(ps,
				    "task: '%s' is not an argument of %s", tok[i],
				    tok[2]);
		int rc = task_arg(ps, t, key, eq + 1, tok[i]);
		if (rc)
			return rc;
	}
	switch (wl) {
	case CFSBW_SIM_WL_DUTY:
		if (!t->run_ns || t->sleep_ns < 0)
			return fail(ps,
				    "task: duty needs run=DURATION and sleep=DURATION");
		break;
	case CFSBW_SIM_WL_REQUESTS:
		if (!t->mean_gap_ns || !t->service_ns)
			return fail(ps,
				    "task: requests needs rate=R/s and service=DURATION");
		break;
	case CFSBW_SIM_WL_TRACE:
		if (!t->trace_file)
			return fail(ps, "task: trace needs file=FILE");
		break;
	case CFSBW_SIM_WL_BUSY:
	case CFSBW_SIM_WL_COUNT:
		break;
	}
	if (t->sleep_ns < 0)
		t->sleep_ns = 0;
	return 0;
}
