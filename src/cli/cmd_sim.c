/*
 * cmd_sim.c - `cfsbw sim`: run a scenario file in the simulator and report.
 *
 * The command reads the files (the scenario, the traces it names), hands
 * their text to the simulator, and prints what the simulator measured.
 * Every error names the file, the line and the offending text, and exits
 * with status 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/helpers.h"
#include "sim/sim.h"

static const char usage[] =
	"usage: cfsbw sim FILE [--json] [--timeline FILE.csv] [--policy P]\n"
	"                 [--seed N] [--duration D] [--cpus N] [--hz N]\n"
	"\n"
	"Simulate a scenario of groups and tasks on 1..4096 virtual CPUs under a\n"
	"model of Linux's completely fair scheduler, with CFS bandwidth control\n"
	"(quota per period) enforced by the cfsbw core, on a virtual clock.  The\n"
	"same scenario and seed give the same output, byte for byte, everywhere.\n"
	"\n"
	"  FILE               the scenario ('-': standard input)\n"
	"  --json             print one JSON object instead of the text report\n"
	"  --timeline F.csv   write one row per group per period: start, CPU\n"
	"                     used, accounts throttled, throttled time\n"
	"  --policy P         v4 | upstream | hardlimits (overrides the file)\n"
	"  --seed N           the random seed (overrides the file)\n"
	"  --duration D       simulated time, e.g. 10s, 500ms (overrides the file)\n"
	"  --cpus N, --hz N   the machine (override the file)\n"
	"  --max-memory SIZE  memory the simulation may use (default 2G; K, M,\n"
	"                     G): beyond it, requests are dropped and counted\n"
	"\n"
	"Scenario files, one directive per line, '#' starts a comment:\n"
	"  cpus 4                  # 1..4096, default 1\n"
	"  hz 250                  # 100..10000, default 250\n"
	"  duration 10s            # ns, us, ms or s; default 10s\n"
	"  seed 42                 # default 1\n"
	"  policy v4               # v4 | upstream | hardlimits\n"
	"  sysctl sched_cfs_bandwidth_slice_us 10000\n"
	"  group /web cpu.cfs_quota_us=100000 cpu.cfs_period_us=500000\n"
	"  task /web busy count=4\n"
	"  task /web duty run=30ms sleep=70ms count=2 # phase=random: out of step\n"
	"  task /db requests rate=200/s service=2ms   # or service=exp:2ms\n"
	"  task /db trace file=steps.csv loop=yes     # run_us,sleep_us lines\n"
	"\n"
	"The reference is docs/sim.md; examples are in scenarios/.\n"
	"Exit status: 0 done, 2 bad usage or a bad scenario, 1 out of memory.\n";

/* The whole file (or standard input) as a NUL-terminated string. */
static char *read_all(const char *path, size_t *len_out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (len < cap - 1) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int saved = errno;
	if (f != stdin)
		fclose(f);
	errno = saved;
	if (buf)
		buf[len] = '\0';
	*len_out = len;
	return buf;
}

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

static void *budget_alloc(size_t size, size_t align, void *ctx)
{
	struct mem_budget *b = ctx;
	/* A header before the block keeps its size and offset for free. */
	const size_t header = 2 * sizeof(size_t);
	if (align < header)
		align = header;
	if (size > SIZE_MAX - align || size + align > b->limit - b->used) {
		b->refused++;
		return NULL;
	}
	void *base;
	if (posix_memalign(&base, align, size + align) != 0) {
		b->refused++;
		return NULL;
	}
	char *p = (char *)base + align;
	memset(p, 0, size); /* the allocator contract: zeroed memory */
	size_t *h = (size_t *)(void *)(p - header);
	h[0] = size + align;
	h[1] = align;
	b->used += size + align;
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

static void print_error(const char *file, const struct sim_error *err)
{
	if (err->line)
		fprintf(stderr, "cfsbw sim: %s:%u: %s\n", file, err->line,
			err->msg);
	else
		fprintf(stderr, "cfsbw sim: %s: %s\n", file, err->msg);
}

/* A trace file named in the scenario, relative to the scenario's folder. */
static int load_trace(const char *scenario, struct sim_task_spec *t)
{
	char path[4096];
	const char *slash = strrchr(scenario, '/');
	if (t->trace_file[0] == '/' || !slash || !strcmp(scenario, "-"))
		snprintf(path, sizeof path, "%s", t->trace_file);
	else
		snprintf(path, sizeof path, "%.*s/%s",
			 (int)(slash - scenario), scenario, t->trace_file);
	size_t len;
	char *text = read_all(path, &len);
	if (!text) {
		fprintf(stderr, "cfsbw sim: %s:%u: trace file '%s': %s\n",
			scenario, t->line, path, strerror(errno));
		return -1;
	}
	unsigned nul = nul_line(text, len);
	if (nul) {
		fprintf(stderr,
			"cfsbw sim: %s:%u: in trace %s:%u: a NUL byte: not a "
			"text file\n",
			scenario, t->line, path, nul);
		free(text);
		return -1;
	}
	struct sim_error err;
	int rc = sim_replay_parse(t, text, &err);
	free(text);
	if (rc) {
		fprintf(stderr, "cfsbw sim: %s:%u: in trace ", scenario, t->line);
		if (err.line)
			fprintf(stderr, "%s:%u: %s\n", path, err.line, err.msg);
		else
			fprintf(stderr, "%s: %s\n", path, err.msg);
		return -1;
	}
	return 0;
}

struct timeline_out {
	FILE *f;
	int64_t span_ns;
};

static void timeline_row(void *ctx, const struct sim_timeline_row *row)
{
	struct timeline_out *t = ctx;
	int64_t micro = sim_cores_micro(row->used_ns, row->period_ns);
	fprintf(t->f,
		"%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ".%06" PRId64
		",%u,%" PRId64 "\n",
		row->group, row->start_ns, row->period_ns, row->used_ns,
		micro / 1000000, micro % 1000000, row->throttled_accounts,
		row->throttled_time_ns);
}

static int bad_flag(const char *flag, const char *value, const char *why)
{
	fprintf(stderr, "cfsbw sim: %s '%s': %s\n", flag, value ? value : "",
		why);
	return 2;
}

/* A decimal integer up to max (kstrtoull's rules: common/helpers.h). */
static bool parse_u64_text(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) || v > max)
		return false;
	*out = v;
	return true;
}

struct overrides {
	const char *policy, *seed, *duration, *cpus, *hz, *max_memory;
};

static int apply_overrides(const struct overrides *o, struct sim_scenario *sc)
{
	uint64_t u;
	if (o->policy && cfsbw_policy_parse(o->policy, &sc->policy))
		return bad_flag("--policy", o->policy,
				"expected v4, upstream or hardlimits");
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
		if (!parse_u64_text(o->cpus, SIM_MAX_CPUS, &u) || u == 0)
			return bad_flag("--cpus", o->cpus, "expected 1..4096");
		sc->nr_cpus = (unsigned)u;
	}
	if (o->hz) {
		if (!parse_u64_text(o->hz, SIM_MAX_HZ, &u) || u < SIM_MIN_HZ)
			return bad_flag("--hz", o->hz, "expected 100..10000");
		sc->hz = (unsigned)u;
	}
	return 0;
}

int cli_sim_main(int argc, char **argv)
{
	const char *file = NULL, *timeline = NULL;
	struct overrides o = {0};
	bool json = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--json")) {
			json = true;
			continue;
		} else if (!strcmp(a, "--timeline")) {
			slot = &timeline;
		} else if (!strcmp(a, "--policy")) {
			slot = &o.policy;
		} else if (!strcmp(a, "--seed")) {
			slot = &o.seed;
		} else if (!strcmp(a, "--duration")) {
			slot = &o.duration;
		} else if (!strcmp(a, "--cpus")) {
			slot = &o.cpus;
		} else if (!strcmp(a, "--hz")) {
			slot = &o.hz;
		} else if (!strcmp(a, "--max-memory")) {
			slot = &o.max_memory;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "cfsbw sim: unknown option '%s'\n\n%s", a,
				usage);
			return 2;
		} else if (!file) {
			file = a;
			continue;
		} else {
			fprintf(stderr, "cfsbw sim: one scenario at a time ('%s')\n",
				a);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "cfsbw sim: %s needs a value\n", a);
			return 2;
		}
		*slot = argv[++i];
	}
	if (!file) {
		fputs(usage, stderr);
		return 2;
	}

	struct mem_budget budget = {.limit = DEFAULT_MAX_MEMORY};
	if (o.max_memory && !parse_size(o.max_memory, &budget.limit))
		return bad_flag("--max-memory", o.max_memory,
				"expected a size above 0 in bytes, or with "
				"K, M or G");
	const struct cfsbw_allocator allocator = {budget_alloc, budget_free,
						  &budget};

	int status = 2;
	struct sim_scenario sc;
	struct sim_error err;
	struct sim *s = NULL;
	struct timeline_out tl = {0};
	sim_scenario_init(&sc);
	sc.allocator = &allocator;

	size_t len;
	char *text = read_all(file, &len);
	if (!text) {
		fprintf(stderr, "cfsbw sim: %s: %s\n", file, strerror(errno));
		goto out;
	}
	unsigned nul = nul_line(text, len);
	if (nul) {
		fprintf(stderr, "cfsbw sim: %s:%u: a NUL byte: not a text file\n",
			file, nul);
		free(text);
		goto out;
	}
	int rc = sim_scenario_parse(&sc, text, &err);
	free(text);
	if (rc) {
		print_error(file, &err);
		goto out;
	}
	if (apply_overrides(&o, &sc))
		goto out;
	for (size_t i = 0; i < sc.nr_tasks; i++)
		if (sc.tasks[i].workload == SIM_WL_TRACE &&
		    load_trace(file, &sc.tasks[i]))
			goto out;
	if ((rc = sim_create(&sc, &s, &err))) {
		if (rc == -ENOMEM && budget.refused)
			fprintf(stderr,
				"cfsbw sim: %s: the machine needs more than "
				"--max-memory %s (%zu bytes)\n",
				file, o.max_memory ? o.max_memory : "2G",
				budget.limit);
		else
			print_error(file, &err);
		status = rc == -ENOMEM ? 1 : 2;
		goto out;
	}
	if (timeline) {
		tl.f = fopen(timeline, "w");
		if (!tl.f) {
			fprintf(stderr, "cfsbw sim: %s: %s\n", timeline,
				strerror(errno));
			goto out;
		}
		fputs("group,start_ns,period_ns,used_ns,cores,"
		      "throttled_accounts,throttled_time_ns\n",
		      tl.f);
		sim_set_timeline(s, timeline_row, &tl);
	}
	if (sim_run(s)) {
		fprintf(stderr, "cfsbw sim: %s: out of memory\n", file);
		status = 1;
		goto out;
	}
	if (budget.refused)
		fprintf(stderr,
			"cfsbw sim: %s: the run reached --max-memory %s: "
			"requests dropped or latencies not recorded are "
			"counted in the report\n",
			file, o.max_memory ? o.max_memory : "2G");
	if (json)
		sim_report_json(s, file, stdout);
	else
		sim_report_text(s, file, stdout);
	status = 0;
	if (tl.f && fclose(tl.f)) {
		fprintf(stderr, "cfsbw sim: %s: %s\n", timeline, strerror(errno));
		status = 1;
	}
	tl.f = NULL;
	if (fflush(stdout)) {
		fprintf(stderr, "cfsbw sim: standard output: %s\n",
			strerror(errno));
		status = 1;
	}
out:
	if (tl.f)
		fclose(tl.f);
	sim_free(s);
	sim_scenario_free(&sc);
	return status;
}
