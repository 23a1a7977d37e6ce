/*
 * scenario.c - scenario files and trace files, parsed from text.
 *
 * A scenario is one directive per line; '#' starts a comment (docs/sim.md
 * has the reference).  Values that belong to the core (group files,
 * sysctls) are kept as text and written through the core's file interface
 * by cfsbw_sim_create(), so that the core's own validation (R2) is the one that
 * applies.  Every error names the line and quotes the offending text.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define MAX_TOKENS 64
#define MAX_WORKLOAD_NS (3600 * CFSBW_NSEC_PER_SEC) /* 1 h */
#define MAX_TRACE_STEPS 10000000u

void cfsbw_sim_scenario_init(struct cfsbw_sim_scenario *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->nr_cpus = 1;
	sc->hz = CFSBW_SIM_DEFAULT_HZ;
	sc->duration_ns = 10 * CFSBW_NSEC_PER_SEC;
	sc->max_events = CFSBW_SIM_DEFAULT_MAX_EVENTS;
	sc->seed = 1;
	sc->policy = CFSBW_POLICY_V4;
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
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

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(struct cfsbw_sim_error *err, unsigned line, const char *fmt, ...)
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

static int oom(struct cfsbw_sim_error *err, unsigned line)
{
	if (err) {
		err->line = line;
		snprintf(err->msg, sizeof(err->msg), "out of memory");
	}
	return -ENOMEM;
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

/* ---- numbers ------------------------------------------------------------ */

/* A decimal integer in [lo, hi] (kstrtoull's rules: common/helpers.h). */
static bool parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* A duration with its unit (ns, us, ms, s): a bare number is ambiguous. */
static bool parse_dur(const char *s, int64_t *out)
{
	size_t n = strlen(s);
	if (!n || !isalpha((unsigned char)s[n - 1]))
		return false;
	return cfsbw_parse_duration(s, CFSBW_NSEC_PER_USEC, out) == 0;
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

/* ---- directives ---------------------------------------------------------- */

struct parse_state {
	struct cfsbw_sim_scenario *sc;
	struct cfsbw_sim_error *err;
	unsigned line;
	unsigned seen_cpus, seen_hz, seen_duration, seen_seed, seen_policy;
	unsigned seen_max_events;
};

static bool group_declared(const struct cfsbw_sim_scenario *sc,
			   const char *path)
{
	if (!strcmp(path, "/"))
		return true;
	for (size_t i = 0; i < sc->nr_groups; i++)
		if (!strcmp(sc->groups[i].path, path))
			return true;
	return false;
}

static int once(struct parse_state *ps, unsigned *seen, const char *what)
{
	if (*seen)
		return fail(ps->err, ps->line, "'%s' given twice (first on line %u)",
			    what, *seen);
	*seen = ps->line;
	return 0;
}

static int dir_group(struct parse_state *ps, char **tok, int nt)
{
	struct cfsbw_sim_scenario *sc = ps->sc;
	if (nt < 2)
		return fail(ps->err, ps->line, "group: expected 'group PATH [FILE=VALUE...]'");
	const char *path = tok[1];
	if (path[0] != '/')
		return fail(ps->err, ps->line, "group '%s': a path starts with '/'", path);
	if (strcmp(path, "/") != 0) {
		if (group_declared(sc, path))
			return fail(ps->err, ps->line, "group '%s': declared twice", path);
		const char *slash = strrchr(path, '/');
		char parent[1024];
		size_t plen = (size_t)(slash - path);
		if (plen >= sizeof(parent))
			return fail(ps->err, ps->line, "group '%s': path too long", path);
		memcpy(parent, path, plen);
		parent[plen] = '\0';
		if (plen == 0)
			strcpy(parent, "/");
		if (!group_declared(sc, parent))
			return fail(ps->err, ps->line,
				    "group '%s': its parent '%s' must be declared before it",
				    path, parent);
	}
	struct cfsbw_sim_group_spec *g =
		grow((void **)&sc->groups, &sc->nr_groups, sizeof(*g));
	if (!g)
		return oom(ps->err, ps->line);
	g->line = ps->line;
	if (!(g->path = dup_str(path)))
		return oom(ps->err, ps->line);
	for (int i = 2; i < nt; i++) {
		char *eq = strchr(tok[i], '=');
		if (!eq || eq == tok[i])
			return fail(ps->err, ps->line,
				    "group %s: '%s' is not FILE=VALUE", path, tok[i]);
		struct cfsbw_sim_setting *st = grow(
			(void **)&g->settings, &g->nr_settings, sizeof(*st));
		if (!st)
			return oom(ps->err, ps->line);
		*eq = '\0';
		st->file = dup_str(tok[i]);
		st->value = dup_str(eq + 1);
		*eq = '=';
		if (!st->file || !st->value)
			return oom(ps->err, ps->line);
	}
	return 0;
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
		return !strcmp(key, "file") || !strcmp(key, "loop");
	case CFSBW_SIM_WL_COUNT:
		break;
	}
	return false;
}

static int task_arg(struct parse_state *ps, struct cfsbw_sim_task_spec *t,
		    const char *key, const char *val, const char *tok)
{
	uint64_t u;
	int64_t d;
	if (!strcmp(key, "count")) {
		if (!parse_uint(val, 1, CFSBW_SIM_MAX_COUNT, &u))
			return fail(ps->err, ps->line,
				    "'%s': count is an integer in 1..%u", tok,
				    CFSBW_SIM_MAX_COUNT);
		t->count = (unsigned)u;
	} else if (!strcmp(key, "run") || !strcmp(key, "sleep")) {
		bool run = key[0] == 'r';
		if (!parse_dur(val, &d) || d > MAX_WORKLOAD_NS ||
		    (run && d == 0))
			return fail(ps->err, ps->line,
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
			return fail(ps->err, ps->line,
				    "'%s': expected random or a duration with a "
				    "unit, at most 1h",
				    tok);
	} else if (!strcmp(key, "rate")) {
		if (!parse_rate(val, &t->mean_gap_ns) ||
		    t->mean_gap_ns > MAX_WORKLOAD_NS)
			return fail(ps->err, ps->line,
				    "'%s': expected a rate such as 200/s or 0.5/s, "
				    "from 1/3600s to %u/s",
				    tok, CFSBW_SIM_MAX_RATE_PER_SEC);
	} else if (!strcmp(key, "service")) {
		const char *v = val;
		t->service_exp = !strncmp(v, "exp:", 4);
		if (t->service_exp)
			v += 4;
		if (!parse_dur(v, &d) || d == 0 || d > MAX_WORKLOAD_NS)
			return fail(ps->err, ps->line,
				    "'%s': expected a duration above 0 with a "
				    "unit, or exp:DURATION, at most 1h",
				    tok);
		t->service_ns = d;
	} else if (!strcmp(key, "arrivals")) {
		if (!strcmp(val, "periodic"))
			t->arrivals_periodic = true;
		else if (!strcmp(val, "poisson"))
			t->arrivals_periodic = false;
		else
			return fail(ps->err, ps->line,
				    "'%s': arrivals is poisson or periodic", tok);
	} else if (!strcmp(key, "file")) {
		if (!*val)
			return fail(ps->err, ps->line, "'%s': no file name", tok);
		free(t->trace_file);
		if (!(t->trace_file = dup_str(val)))
			return oom(ps->err, ps->line);
	} else if (!strcmp(key, "loop")) {
		if (!strcmp(val, "yes") || !strcmp(val, "1"))
			t->trace_loop = true;
		else if (!strcmp(val, "no") || !strcmp(val, "0"))
			t->trace_loop = false;
		else
			return fail(ps->err, ps->line,
				    "'%s': loop is yes or no", tok);
	}
	return 0;
}

static int dir_task(struct parse_state *ps, char **tok, int nt)
{
	struct cfsbw_sim_scenario *sc = ps->sc;
	if (nt < 3)
		return fail(ps->err, ps->line,
			    "task: expected 'task GROUP WORKLOAD [KEY=VALUE...]'");
	if (!group_declared(sc, tok[1]))
		return fail(ps->err, ps->line,
			    "task: no group '%s' (declare it with a group line first)",
			    tok[1]);
	enum cfsbw_sim_workload wl = CFSBW_SIM_WL_COUNT;
	for (unsigned w = 0; w < CFSBW_SIM_WL_COUNT; w++)
		if (!strcmp(tok[2], cfsbw_sim_workload_name(
					    (enum cfsbw_sim_workload)w)))
			wl = (enum cfsbw_sim_workload)w;
	if (wl == CFSBW_SIM_WL_COUNT)
		return fail(ps->err, ps->line,
			    "task: unknown workload '%s' (busy, duty, requests, trace)",
			    tok[2]);
	struct cfsbw_sim_task_spec *t =
		grow((void **)&sc->tasks, &sc->nr_tasks, sizeof(*t));
	if (!t)
		return oom(ps->err, ps->line);
	t->line = ps->line;
	t->workload = wl;
	t->count = 1;
	t->sleep_ns = -1;
	if (!(t->group = dup_str(tok[1])))
		return oom(ps->err, ps->line);
	/* the workload as written, for the report */
	size_t len = 1;
	for (int i = 2; i < nt; i++)
		len += strlen(tok[i]) + 1;
	if (!(t->text = malloc(len)))
		return oom(ps->err, ps->line);
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
			return fail(ps->err, ps->line, "task: '%s' is not KEY=VALUE",
				    tok[i]);
		memcpy(key, tok[i], klen);
		key[klen] = '\0';
		if (!key_allowed(wl, key))
			return fail(ps->err, ps->line,
				    "task: '%s' is not an argument of %s", tok[i],
				    tok[2]);
		int rc = task_arg(ps, t, key, eq + 1, tok[i]);
		if (rc)
			return rc;
	}
	switch (wl) {
	case CFSBW_SIM_WL_DUTY:
		if (!t->run_ns || t->sleep_ns < 0)
			return fail(ps->err, ps->line,
				    "task: duty needs run=DURATION and sleep=DURATION");
		break;
	case CFSBW_SIM_WL_REQUESTS:
		if (!t->mean_gap_ns || !t->service_ns)
			return fail(ps->err, ps->line,
				    "task: requests needs rate=R/s and service=DURATION");
		break;
	case CFSBW_SIM_WL_TRACE:
		if (!t->trace_file)
			return fail(ps->err, ps->line, "task: trace needs file=FILE");
		break;
	case CFSBW_SIM_WL_BUSY:
	case CFSBW_SIM_WL_COUNT:
		break;
	}
	if (t->sleep_ns < 0)
		t->sleep_ns = 0;
	return 0;
}

static int directive(struct parse_state *ps, char **tok, int nt)
{
	struct cfsbw_sim_scenario *sc = ps->sc;
	const char *d = tok[0];
	uint64_t u;
	int64_t ns;
	int rc;

	if (!strcmp(d, "group"))
		return dir_group(ps, tok, nt);
	if (!strcmp(d, "task"))
		return dir_task(ps, tok, nt);
	if (!strcmp(d, "sysctl")) {
		if (nt != 3)
			return fail(ps->err, ps->line,
				    "sysctl: expected 'sysctl NAME VALUE'");
		struct cfsbw_sim_sysctl_spec *y = grow(
			(void **)&sc->sysctls, &sc->nr_sysctls, sizeof(*y));
		if (!y)
			return oom(ps->err, ps->line);
		y->line = ps->line;
		y->name = dup_str(tok[1]);
		y->value = dup_str(tok[2]);
		return y->name && y->value ? 0 : oom(ps->err, ps->line);
	}
	bool known = !strcmp(d, "cpus") || !strcmp(d, "hz") ||
		     !strcmp(d, "duration") || !strcmp(d, "seed") ||
		     !strcmp(d, "policy") || !strcmp(d, "max_events");
	if (!known)
		return fail(ps->err, ps->line,
			    "unknown directive '%s' (cpus, hz, duration, seed, "
			    "policy, max_events, sysctl, group, task)",
			    d);
	if (nt != 2)
		return fail(ps->err, ps->line, "%s: expected one value", d);
	const char *v = tok[1];
	if (!strcmp(d, "cpus")) {
		if ((rc = once(ps, &ps->seen_cpus, d)))
			return rc;
		if (!parse_uint(v, 1, CFSBW_SIM_MAX_CPUS, &u))
			return fail(ps->err, ps->line,
				    "cpus '%s': an integer in 1..%u", v,
				    CFSBW_SIM_MAX_CPUS);
		sc->nr_cpus = (unsigned)u;
	} else if (!strcmp(d, "hz")) {
		if ((rc = once(ps, &ps->seen_hz, d)))
			return rc;
		if (!parse_uint(v, CFSBW_SIM_MIN_HZ, CFSBW_SIM_MAX_HZ, &u))
			return fail(ps->err, ps->line,
				    "hz '%s': an integer in %u..%u", v,
				    CFSBW_SIM_MIN_HZ, CFSBW_SIM_MAX_HZ);
		sc->hz = (unsigned)u;
	} else if (!strcmp(d, "duration")) {
		if ((rc = once(ps, &ps->seen_duration, d)))
			return rc;
		if (!parse_dur(v, &ns) || ns <= 0 ||
		    ns > CFSBW_SIM_MAX_DURATION_NS)
			return fail(ps->err, ps->line,
				    "duration '%s': a duration above 0 with a unit "
				    "(ns, us, ms, s), at most 2^62 ns (146 years)",
				    v);
		sc->duration_ns = ns;
	} else if (!strcmp(d, "max_events")) {
		if ((rc = once(ps, &ps->seen_max_events, d)))
			return rc;
		if (!parse_uint(v, 1, UINT64_MAX, &u))
			return fail(ps->err, ps->line,
				    "max_events '%s': an integer above 0", v);
		sc->max_events = u;
	} else if (!strcmp(d, "seed")) {
		if ((rc = once(ps, &ps->seen_seed, d)))
			return rc;
		if (!parse_uint(v, 0, UINT64_MAX, &u))
			return fail(ps->err, ps->line,
				    "seed '%s': an unsigned 64-bit integer", v);
		sc->seed = u;
	} else {
		if ((rc = once(ps, &ps->seen_policy, d)))
			return rc;
		if (cfsbw_policy_parse(v, &sc->policy))
			return fail(ps->err, ps->line,
				    "policy '%s': v4, upstream or hardlimits", v);
	}
	return 0;
}

int cfsbw_sim_scenario_parse(struct cfsbw_sim_scenario *sc, const char *text,
			     struct cfsbw_sim_error *err)
{
	struct parse_state ps = {.sc = sc, .err = err};
	char buf[4096];
	const char *p = text;

	if (err) {
		err->line = 0;
		err->msg[0] = '\0';
	}
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		ps.line++;
		if (n >= sizeof(buf))
			return fail(err, ps.line, "line longer than %zu characters",
				    sizeof(buf) - 1);
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + (eol ? 1 : 0);
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *tok[MAX_TOKENS];
		int nt = 0;
		for (char *q = buf; *q;) {
			while (*q && isspace((unsigned char)*q))
				*q++ = '\0';
			if (!*q)
				break;
			if (nt == MAX_TOKENS)
				return fail(err, ps.line, "more than %d words",
					    MAX_TOKENS);
			tok[nt++] = q;
			while (*q && !isspace((unsigned char)*q))
				q++;
		}
		if (nt == 0)
			continue;
		int rc = directive(&ps, tok, nt);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- traces -------------------------------------------------------------- */

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
			return fail(err, line, "line too long");
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
			ok = parse_uint(a, 1, 3600000000u, &run) &&
			     parse_uint(b, 0, 3600000000u, &sleep);
		}
		if (!ok)
			return fail(err, line,
				    "'%s': expected run_us,sleep_us (integers, "
				    "run_us >= 1)",
				    s);
		if (t->trace_len == MAX_TRACE_STEPS)
			return fail(err, line, "more than %u steps",
				    MAX_TRACE_STEPS);
		if (t->trace_len == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct cfsbw_sim_trace_step *np =
				realloc(t->trace, ncap * sizeof(*np));
			if (!np)
				return oom(err, line);
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
		return fail(err, 0, "no steps in the trace");
	return 0;
}
