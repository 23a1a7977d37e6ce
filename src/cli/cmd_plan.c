/*
 * cmd_plan.c - `cfsbw plan`: the smallest CPU limit that keeps a workload
 * out of trouble, found in the simulator (issue 14, item 3).
 *
 * For one group of a scenario (or a replayed trace), at a given period and
 * burst: the smallest quota, to 1% of the period, under which the group is
 * throttled in at most a target share of its periods (default 10%, the aim
 * people cite; the CPUThrottlingHigh alert fires at 25%) and, if asked,
 * under which no latency line's p99 grows by more than a target against
 * the same workload unlimited.  Each seed is searched on its own (in
 * parallel workers); the answer is the largest, with the spread shown: how
 * sure the answer is.  A workload that draws nothing at random (a replay,
 * periodic requests) gives the same run for every seed: one is searched.
 * The search halves the range of quotas, so it assumes more quota never
 * throttles more (true of the model, up to a seed's noise, which the
 * spread shows).  It first says what the limit as written does, in the
 * terms of kubernetes-mixin#108: use against the limit, throttled
 * periods, and per request the periods it was throttled in among those
 * it spans.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sim_sweep.h"

static const char usage[] =
	"usage: cfsbw plan FILE | --replay TRACE [--wakeups W] [--group G]\n"
	"                  [--period D] [--burst D] [--throttled PCT] [--p99 D]\n"
	"                  [--seeds N]\n"
	"                  [--policy P] [--scheduler S] [--balance-load L]\n"
	"                  [--wake-scan W] [--cpus N] [--hz N]\n"
	"                  [--duration D] [--set [G:]FILE=VALUE]... [--json]\n"
	"\n"
	"Find, in the simulator, the smallest quota for group G that keeps its\n"
	"throttled periods at or under PCT (default 10%), and its added p99\n"
	"latency at or under D if --p99 is given, at the given period (default:\n"
	"the group's) and burst (default 0).  Each of N seeds (default 5) is\n"
	"searched on its own, in parallel; the answer is the largest, with the\n"
	"spread; a workload that draws nothing at random (a replay, periodic\n"
	"requests) is the same for every seed, and is searched once.  Under the\n"
	"upstream policy it also finds the smallest quota that does it with a\n"
	"burst as large as the quota.\n"
	"\n"
	"  FILE / --replay T  the scenario, or a trace replayed in group /app\n"
	"  --wakeups W        progress or recorded: as `cfsbw sim --replay`\n"
	"  --group G          the group to limit (default: the only one)\n"
	"  --period D         cpu.cfs_period_us for the search, e.g. 100ms\n"
	"  --burst D          cpu.cfs_burst_us for the search (upstream)\n"
	"  --throttled PCT    target share of throttled periods, e.g. 10%\n"
	"  --p99 D            target added p99 latency, e.g. 20ms\n"
	"  --seeds N          seeds to search, 1..64 (default 5)\n"
	"  --scheduler S      cfs (default) or eevdf (Linux 6.6 and later),\n"
	"                     as `cfsbw sim --scheduler`\n"
	"  --balance-load L   instant (default) or pelt, as `cfsbw sim`\n"
	"  --wake-scan W      all (default) or util, as `cfsbw sim`\n"
	"  --json             the same answers as one JSON object\n"
	"\n"
	"Exit status: 0 found, 3 no quota up to all CPUs meets the target,\n"
	"2 bad usage or input, 1 out of memory.\n";

#define MAX_SEEDS 64

struct plan {
	struct cli_sim_opts o;
	char group[256];
	char period_us[32], burst_us[32];
	int64_t period_ns;
	unsigned nr_cpus;
	int64_t target_bp;      /* hundredths of a percent */
	int64_t target_p99_ns;  /* -1: none */
	unsigned seeds;
	bool random;            /* the workload draws: seeds differ */
	bool with_burst;        /* search quota with burst = quota */
	bool json;
	bool per_cpu;           /* hardlimits: the runtime is each CPU's */
	char seed_text[MAX_SEEDS][24];
};

/* Run the plan's group at quota_us (-1: unlimited) with seed k. */
static int evaluate(const struct plan *p, unsigned k, long long quota_us,
		    bool burst_as_quota, struct cfsbw_sim_point *out)
{
	struct cli_sim_opts o = p->o;
	struct cli_set extra[3];
	size_t n = 0;
	o.seed = p->seed_text[k];
	memset(extra, 0, sizeof extra);
	if (p->period_us[0]) {
		snprintf(extra[n].group, sizeof extra[n].group, "%s", p->group);
		snprintf(extra[n].file, sizeof extra[n].file, "cpu.cfs_period_us");
		snprintf(extra[n++].value, sizeof extra[n].value, "%s",
			 p->period_us);
	}
	snprintf(extra[n].group, sizeof extra[n].group, "%s", p->group);
	snprintf(extra[n].file, sizeof extra[n].file, "cpu.cfs_quota_us");
	snprintf(extra[n++].value, sizeof extra[n].value, "%lld", quota_us);
	if (quota_us > 0 && (burst_as_quota || p->burst_us[0])) {
		snprintf(extra[n].group, sizeof extra[n].group, "%s", p->group);
		snprintf(extra[n].file, sizeof extra[n].file, "cpu.cfs_burst_us");
		if (burst_as_quota)
			snprintf(extra[n++].value, sizeof extra[n].value, "%lld",
				 quota_us);
		else
			snprintf(extra[n++].value, sizeof extra[n].value, "%s",
				 p->burst_us);
	}
	struct cfsbw_sim_scenario sc;
	int rc = cli_sim_prepare(&o, extra, n, &sc);
	if (!rc) {
		struct cli_run how = {.group = p->group};
		rc = cli_sim_run(&o, &sc, &how, out);
	}
	cfsbw_sim_scenario_free(&sc);
	return rc;
}

static bool meets(const struct plan *p, const struct cfsbw_sim_point *pt,
		  const struct cfsbw_sim_point *base)
{
	if (cfsbw_sim_point_throttled_bp(pt) > p->target_bp)
		return false;
	if (p->target_p99_ns < 0)
		return true;
	for (size_t l = 0; l < pt->nr_lines && l < base->nr_lines; l++) {
		const struct cfsbw_sim_point_line *a = &pt->lines[l],
						  *b = &base->lines[l];
		int64_t added = b->count ? a->p99_ns - b->p99_ns
					 : a->last_exit_ns - b->last_exit_ns;
		if (added > p->target_p99_ns)
			return false;
	}
	return true;
}

/*
 * Job i: seed i % seeds; i >= seeds: with a burst as large as the quota.
 * The smallest quota, in steps of 1% of the period (at least 1 ms... or
 * the period itself when shorter), that meets the target: out->quota_ns
 * (-1 when not even all CPUs do).
 */
static int search(size_t i, void *ctx, struct cfsbw_sim_point *out)
{
	const struct plan *p = ctx;
	unsigned k = (unsigned)(i % p->seeds);
	bool burst = i >= p->seeds;
	struct cfsbw_sim_point base, pt;
	int rc = evaluate(p, k, -1, false, &base);
	if (rc)
		return rc;
	long long period_us = p->period_ns / 1000;
	long long step = period_us / 100 > 0 ? period_us / 100 : 1;
	long long lo = 0, hi = ((long long)p->nr_cpus * period_us + step - 1) /
			       step; /* in steps */
	if ((rc = evaluate(p, k, hi * step, burst, &pt)))
		return rc;
	if (!meets(p, &pt, &base)) {
		*out = pt;
		out->quota_ns = -1;
		return 0;
	}
	*out = pt;
	while (hi - lo > 1) { /* meets at hi, not known at lo */
		long long mid = lo + (hi - lo) / 2;
		if ((rc = evaluate(p, k, mid * step, burst, &pt)))
			return rc;
		if (meets(p, &pt, &base)) {
			hi = mid;
			*out = pt;
		} else {
			lo = mid;
		}
	}
	return 0;
}

static const char *ms(char *buf, size_t size, int64_t ns)
{
	return cli_fmt_ms(buf, size, ns, false);
}

/* What the limit as written does, against the workload unlimited. */
static void print_now(const struct cfsbw_sim_point *now,
		      const struct cfsbw_sim_point *base,
		      const struct cfsbw_sim_scenario *sc)
{
	char a[32], b[32], c[32], d[32];
	int64_t use = cfsbw_sim_cores_micro(now->usage_ns, now->span_ns);
	int64_t bp = cfsbw_sim_point_throttled_bp(now);
	printf("as written: ");
	if (now->quota_ns < 0) {
		printf("no quota; ");
	} else if (sc->policy == CFSBW_POLICY_HARDLIMITS) {
		/* SPEC 6: each CPU's runtime, borrowed between CPUs: no
		 * share of one limit to set the use against */
		printf("runtime %s ms per %s ms on each CPU; uses %" PRId64
		       ".%03" PRId64 " CPU; ",
		       ms(a, sizeof a, now->quota_ns),
		       ms(b, sizeof b, now->period_ns), use / 1000000,
		       use % 1000000 / 1000);
	} else {
		int64_t lim =
			cfsbw_sim_cores_micro(now->quota_ns, now->period_ns);
		printf("quota %s ms per %s ms (%" PRId64 ".%03" PRId64
		       " CPU); ",
		       ms(a, sizeof a, now->quota_ns), ms(b, sizeof b, now->period_ns),
		       lim / 1000000, lim % 1000000 / 1000);
		if (lim > 0)
			printf("uses %" PRId64 ".%03" PRId64 " CPU, %" PRId64
			       "%% of the limit on average; ",
			       use / 1000000, use % 1000000 / 1000,
			       (use * 100 + lim / 2) / lim);
	}
	printf("throttled in %" PRIu64 " of %" PRIu64 " periods (%" PRId64
	       ".%02" PRId64 "%%%s)\n",
	       now->nr_throttled, now->nr_periods, bp / 100, bp % 100,
	       bp > 2500 ? ": CPUThrottlingHigh fires above 25%" : "");
	size_t shown = cli_shown_lines(now);
	for (size_t l = 0; l < shown && l < base->nr_lines; l++) {
		const struct cfsbw_sim_point_line *x = &now->lines[l],
						  *y = &base->lines[l];
		const struct cfsbw_sim_task_spec *ts = NULL;
		for (size_t t = 0; t < sc->nr_tasks; t++)
			if (sc->tasks[t].line == x->line)
				ts = &sc->tasks[t];
		if (!x->count) {
			printf("  line %u (%s): done at %s s, %s s later than "
			       "unlimited\n",
			       x->line, ts ? ts->text : "?",
			       ms(a, sizeof a, x->last_exit_ns / 1000),
			       ms(b, sizeof b,
				  (x->last_exit_ns - y->last_exit_ns) / 1000));
			continue;
		}
		printf("  line %u (%s): p50 %s ms, p99 %s ms; unlimited %s ms, "
		       "%s ms: ",
		       x->line, ts ? ts->text : "?", ms(a, sizeof a, x->p50_ns),
		       ms(b, sizeof b, x->p99_ns), ms(c, sizeof c, y->p50_ns),
		       ms(d, sizeof d, y->p99_ns));
		printf("%s ms later at p50\n",
		       ms(a, sizeof a, x->p50_ns - y->p50_ns));
		/* requests sparser than periods: each one's own periods */
		if (now->period_ns > 0 && x->count && now->nr_lines == 1 &&
		    x->count <= now->nr_periods) {
			/* periods a request spans, from its start on the
			 * period grid (worst case: at a period's start) */
			int64_t spans = (x->p50_ns + now->period_ns - 1) /
					now->period_ns;
			uint64_t tenths = (now->nr_throttled * 10 + x->count / 2) /
					  x->count;
			printf("  each of the %" PRIu64 " completed: throttled in "
			       "%" PRIu64 ".%" PRIu64 " periods on average, of "
			       "the %" PRId64 " its p50 of %s ms spans\n",
			       x->count, tenths / 10, tenths % 10, spans,
			       ms(a, sizeof a, x->p50_ns));
		}
	}
	if (now->nr_lines_all > shown)
		printf("  (the first %zu of its %zu task lines with latencies "
		       "shown; a plan watches %s %u)\n",
		       shown, now->nr_lines_all,
		       now->nr_lines_all > now->nr_lines ? "at most" : "all",
		       now->nr_lines_all > now->nr_lines
			       ? CFSBW_SIM_POINT_MAX_LINES
			       : (unsigned)now->nr_lines_all);
}

/* The seeds whose search found no quota; *worst: the seed that needs the
 * most (the answer, when none failed). */
static unsigned seed_answers(const struct plan *p,
			     const struct cfsbw_sim_point *pts, size_t *worst)
{
	unsigned failed = 0;
	*worst = 0;
	for (unsigned i = 0; i < p->seeds; i++) {
		failed += pts[i].quota_ns < 0;
		if (pts[i].quota_ns > pts[*worst].quota_ns)
			*worst = i;
	}
	return failed;
}

/* The seeds' answers and the recommendation (their largest), as the
 * value of a JSON member, with the run that found it against the same
 * seed unlimited; 3 when a seed found none. */
static int json_found(const struct plan *p, const struct cfsbw_sim_point *pts)
{
	unsigned n = p->seeds;
	size_t worst;
	unsigned failed = seed_answers(p, pts, &worst);
	printf("{\"found\": %s, \"seed_quota_ns\": [", failed ? "false" : "true");
	for (unsigned i = 0; i < n; i++)
		printf("%s%" PRId64, i ? ", " : "", pts[i].quota_ns);
	printf("]");
	if (!failed) {
		int64_t q = pts[worst].quota_ns;
		int64_t cores = cfsbw_sim_cores_micro(q, p->period_ns);
		char value[32];
		snprintf(value, sizeof value, "%" PRId64, q / 1000);
		printf(", \"quota_ns\": %" PRId64 ", \"cores\": %" PRId64
		       ".%06" PRId64 ", \"millicores\": %" PRId64,
		       q, cores / 1000000, cores % 1000000, (cores + 500) / 1000);
		/* the search kept its seed's unlimited run to itself: again */
		struct cfsbw_sim_point base;
		int rc = evaluate(p, (unsigned)worst, -1, false, &base);
		if (rc) {
			printf("}");
			return rc;
		}
		printf(", \"seed\": %s,\n  \"at\": ", p->seed_text[worst]);
		cli_json_point(value, &pts[worst], &base);
	}
	printf("}");
	return failed ? 3 : 0;
}

/* The seeds' answers, smallest to largest, and the recommendation. */
static int print_found(const struct plan *p, const struct cfsbw_sim_point *pts,
		       const char *how)
{
	char a[32], b[32];
	unsigned n = p->seeds;
	size_t worst;
	unsigned failed = seed_answers(p, pts, &worst);
	if (failed) {
		if (p->per_cpu)
			printf("%s: none meets the target, not even the whole "
			       "period on each CPU (%u of %u seeds)\n",
			       how, failed, n);
		else
			printf("%s: no quota up to %u CPUs meets the target (%u "
			       "of %u seeds)\n",
			       how, p->nr_cpus, failed, n);
		return 3;
	}
	int64_t lo = pts[0].quota_ns, hi = pts[worst].quota_ns;
	for (unsigned i = 1; i < n; i++)
		if (pts[i].quota_ns < lo)
			lo = pts[i].quota_ns;
	int64_t cores = cfsbw_sim_cores_micro(hi, p->period_ns);
	if (p->per_cpu)
		printf("%s: %s ms per %s ms on each CPU", how,
		       ms(a, sizeof a, hi), ms(b, sizeof b, p->period_ns));
	else
		printf("%s: %s ms per %s ms (%" PRId64 ".%03" PRId64
		       " CPU, %" PRId64 "m)",
		       how, ms(a, sizeof a, hi),
		       ms(b, sizeof b, p->period_ns), cores / 1000000,
		       cores % 1000000 / 1000, (cores + 500) / 1000);
	if (!p->random)
		printf("; the same for every seed\n");
	else if (lo == hi)
		printf(n > 1 ? "; all %u seeds agree\n"
			     : "; from %u seed: --seeds N says how sure\n",
		       n);
	else
		printf("; seeds need %s to %s ms\n", ms(a, sizeof a, lo),
		       ms(b, sizeof b, hi));
	const struct cfsbw_sim_point *w = &pts[worst];
	int64_t bp = cfsbw_sim_point_throttled_bp(w);
	printf("  there: throttled in %" PRId64 ".%02" PRId64 "%% of periods",
	       bp / 100, bp % 100);
	for (size_t l = 0; l < cli_shown_lines(w); l++)
		if (w->lines[l].count)
			printf(", line %u p99 %s ms", w->lines[l].line,
			       ms(a, sizeof a, w->lines[l].p99_ns));
		else
			printf(", line %u done at %s s", w->lines[l].line,
			       ms(a, sizeof a, w->lines[l].last_exit_ns / 1000));
	if (w->nr_lines > cli_shown_lines(w))
		printf(", and %zu more lines", w->nr_lines - cli_shown_lines(w));
	putchar('\n');
	return 0;
}

/* --json: the plan as one object, the seeds' searches in pts (with a
 * burst as large as the quota after the first p->seeds); 3 when some
 * seed found no quota, as the text's exit status. */
static int print_json(const struct plan *p,
		      const struct cfsbw_sim_scenario *sc,
		      const struct cfsbw_sim_point *now,
		      const struct cfsbw_sim_point *base,
		      const struct cfsbw_sim_point *pts)
{
	int64_t burst_ns =
		p->burst_us[0] ? strtoll(p->burst_us, NULL, 10) * 1000 : 0;
	char fp[16];
	printf("{\"group\": \"%s\", \"policy\": \"%s\", \"scheduler\": "
	       "\"%s\", \"balance_load\": \"%s\", \"wake_scan\": \"%s\", "
	       "\"first_period\": \"%s\", \"cpus\": %u, "
	       "\"period_ns\": %" PRId64
	       ", \"burst_ns\": %" PRId64 ", \"quota_per_cpu\": %s, "
	       "\"seeds\": [",
	       p->group, cfsbw_policy_name(sc->policy),
	       cfsbw_sim_scheduler_name(sc->scheduler),
	       cfsbw_sim_balance_load_name(sc->balance_load),
	       cfsbw_sim_wake_scan_name(sc->wake_scan),
	       cfsbw_sim_first_period_text(sc->first_period, fp, sizeof fp),
	       sc->nr_cpus,
	       p->period_ns, burst_ns, p->per_cpu ? "true" : "false");
	for (unsigned k = 0; k < p->seeds; k++)
		printf("%s%s", k ? ", " : "", p->seed_text[k]);
	printf("], \"random\": %s,\n \"target\": {\"throttled_pct\": %" PRId64
	       ".%02" PRId64 ", \"added_p99_ns\": %" PRId64
	       "},\n \"as_written\": ",
	       p->random ? "true" : "false", p->target_bp / 100,
	       p->target_bp % 100, p->target_p99_ns);
	char value[32];
	snprintf(value, sizeof value, "%" PRId64,
		 now->quota_ns < 0 ? -1 : now->quota_ns / 1000);
	cli_json_point(value, now, base);
	printf(",\n \"unlimited\": ");
	cli_json_point("-1", base, base);
	printf(",\n \"smallest\": ");
	int status = json_found(p, pts);
	if (p->with_burst) {
		printf(",\n \"smallest_with_burst_as_quota\": ");
		int st = json_found(p, pts + p->seeds);
		status = status ? status : st;
	}
	printf("}\n");
	return status;
}

static int bad(const char *flag, const char *value, const char *why)
{
	fprintf(stderr, "cfsbw plan: %s '%s': %s\n", flag, value, why);
	return 2;
}

/* "10%", "10", "2.5%": hundredths of a percent. */
static bool parse_pct(const char *s, int64_t *bp)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%")) || v < 0 || v > 100)
		return false;
	*bp = (int64_t)(v * 100 + 0.5);
	return true;
}

int cli_plan_main(int argc, char **argv)
{
	struct plan p = {.o = {.cmd = "plan"}, .target_bp = 1000,
			 .target_p99_ns = -1, .seeds = 5};
	const char *group = NULL, *period = NULL, *burst = NULL, *p99 = NULL;
	const char *seeds = NULL;
	char cpus_buf[24];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--json")) {
			p.json = true;
			continue;
		}
		if (a[0] != '-' || !a[1]) {
			if (p.o.file)
				return bad("FILE", a, "one scenario at a time");
			p.o.file = a;
			continue;
		}
		if (!v) {
			fprintf(stderr, "cfsbw plan: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--replay")) {
			if (p.o.file)
				return bad(a, v, "one scenario at a time");
			p.o.file = v;
			p.o.replay = true;
		} else if (!strcmp(a, "--wakeups")) {
			p.o.wakeups = v;
		} else if (!strcmp(a, "--group")) {
			group = v;
		} else if (!strcmp(a, "--period")) {
			period = v;
		} else if (!strcmp(a, "--burst")) {
			burst = v;
		} else if (!strcmp(a, "--throttled")) {
			if (!parse_pct(v, &p.target_bp))
				return bad(a, v, "expected a percentage, e.g. 10%");
		} else if (!strcmp(a, "--p99")) {
			p99 = v;
			const char *d = v[0] == '+' ? v + 1 : v;
			size_t n = strlen(d);
			if (!n || d[n - 1] < 'a' ||
			    cfsbw_parse_duration(d, CFSBW_NSEC_PER_USEC,
						 &p.target_p99_ns) ||
			    p.target_p99_ns < 0)
				return bad(a, v, "expected a duration, e.g. 20ms");
		} else if (!strcmp(a, "--seeds")) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > MAX_SEEDS)
				return bad(a, v, "expected 1..64");
			p.seeds = (unsigned)n;
			seeds = v;
		} else if (!strcmp(a, "--policy")) {
			p.o.policy = v;
		} else if (!strcmp(a, "--scheduler")) {
			p.o.scheduler = v;
		} else if (!strcmp(a, "--balance-load")) {
			p.o.balance_load = v;
		} else if (!strcmp(a, "--wake-scan")) {
			p.o.wake_scan = v;
		} else if (!strcmp(a, "--cpus")) {
			p.o.cpus = v;
		} else if (!strcmp(a, "--hz")) {
			p.o.hz = v;
		} else if (!strcmp(a, "--duration")) {
			p.o.duration = v;
		} else if (!strcmp(a, "--max-memory")) {
			p.o.max_memory = v;
		} else if (!strcmp(a, "--set")) {
			if (p.o.nr_sets == CLI_MAX_SETS)
				return bad(a, v, "too many --set");
			if (cli_set_parse("plan", a, v, &p.o.sets[p.o.nr_sets++]))
				return 2;
		} else {
			fprintf(stderr, "cfsbw plan: unknown option '%s'\n\n%s",
				a, usage);
			return 2;
		}
	}
	if (!p.o.file) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(p.o.file, "-"))
		return bad("FILE", "-", "plan reads the scenario once per run: "
					"name a file");
	if (p.o.replay && !p.o.cpus) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		snprintf(cpus_buf, sizeof cpus_buf, "%ld", n < 1 ? 1L : n > 4096 ? 4096L : n);
		p.o.cpus = cpus_buf;
	}
	if (period && !cli_set_value("cpu.cfs_period_us", period, p.period_us,
				     sizeof p.period_us))
		return bad("--period", period, "expected a duration, e.g. 100ms");
	if (burst && !cli_set_value("cpu.cfs_burst_us", burst, p.burst_us,
				    sizeof p.burst_us))
		return bad("--burst", burst, "expected a duration, e.g. 20ms");

	/* the scenario as written: checks it, names the group */
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_point now, base;
	int status = cli_sim_prepare(&p.o, NULL, 0, &sc);
	if (status)
		goto out;
	struct cli_set probe;
	memset(&probe, 0, sizeof probe);
	if (group)
		snprintf(probe.group, sizeof probe.group, "%s", group);
	const char *g = cli_set_group(&probe, &sc);
	if (!g) {
		char groups[256];
		cli_groups_text(&sc, groups, sizeof groups);
		fprintf(stderr,
			"cfsbw plan: %s: no group to limit given (--group G), "
			"and the scenario has %s\n",
			p.o.file, groups);
		status = 2;
		goto out;
	}
	snprintf(p.group, sizeof p.group, "%s", g);
	p.nr_cpus = sc.nr_cpus;
	p.with_burst = sc.policy == CFSBW_POLICY_UPSTREAM && !burst;
	p.per_cpu = sc.policy == CFSBW_POLICY_HARDLIMITS;
	/* more seeds of a workload that draws nothing would be the same run
	 * again, and "all 5 seeds agree" would claim a certainty they do
	 * not give */
	p.random = cfsbw_sim_scenario_is_random(&sc);
	if (!p.random)
		p.seeds = 1;
	for (unsigned k = 0; k < p.seeds; k++)
		snprintf(p.seed_text[k], sizeof p.seed_text[k], "%" PRIu64,
			 sc.seed + k);
	struct cli_run how = {.group = p.group};
	if ((status = cli_sim_run(&p.o, &sc, &how, &now)))
		goto out;
	if ((status = evaluate(&p, 0, -1, false, &base)))
		goto out;
	if (p.target_p99_ns >= 0 && base.nr_lines_all > base.nr_lines) {
		/* a target on lines it cannot see would be met by luck */
		char why[400];
		snprintf(why, sizeof why,
			 "%s has %zu task lines with latencies, and a plan "
			 "watches at most %u: give the ones that matter a "
			 "group of their own (--group)",
			 p.group, base.nr_lines_all, CFSBW_SIM_POINT_MAX_LINES);
		status = bad("--p99", p99, why);
		goto out;
	}
	p.period_ns = p.period_us[0] ? strtoll(p.period_us, NULL, 10) * 1000
				     : now.period_ns;
	char a[32], model[96];
	if (p.json)
		goto search;
	printf("plan for %s: %u CPUs, policy %s, scheduler %s%s, %s, period "
	       "%s ms, burst %s; ",
	       p.group, sc.nr_cpus, cfsbw_policy_name(sc.policy),
	       cfsbw_sim_scheduler_name(sc.scheduler),
	       cfsbw_sim_model_text(&sc, false, model, sizeof model),
	       p.o.replay ? "replay until the trace ends" : "as long as the "
							    "scenario says",
	       ms(a, sizeof a, p.period_ns), burst ? burst : "0");
	if (p.random)
		printf("%u seed%s from %s\n", p.seeds, p.seeds > 1 ? "s" : "",
		       p.seed_text[0]);
	else
		printf("one run: nothing in the workload is drawn at "
		       "random%s%s%s\n",
		       seeds ? " (--seeds " : "", seeds ? seeds : "",
		       seeds ? " would repeat it)" : "");
	/* a trace says nothing of the kernel it will run on: the default,
	 * the seeds' v4 and its 500 ms, is not what a deployment has today */
	if (p.o.replay && !p.o.policy && sc.policy == CFSBW_POLICY_V4)
		printf("  (the seeds' v4 and its 500 ms period: for today's "
		       "kernels and Kubernetes, --policy upstream, 100 ms)\n");
	print_now(&now, &base, &sc);
	printf("target: throttled in at most %" PRId64 ".%02" PRId64
	       "%% of periods",
	       p.target_bp / 100, p.target_bp % 100);
	if (p.target_p99_ns >= 0) {
		/* what meets() compares: a line's p99, or when a replay
		 * without latencies ended */
		size_t timed = 0;
		for (size_t l = 0; l < base.nr_lines; l++)
			timed += base.lines[l].count > 0;
		printf(", %s at most %s ms later than unlimited",
		       timed == base.nr_lines ? "p99"
		       : timed			? "p99 (a replay without "
						  "latencies: its end)"
						: "the replay's end",
		       ms(a, sizeof a, p.target_p99_ns));
	}
	putchar('\n');
search:;
	size_t jobs = p.seeds * (p.with_burst ? 2u : 1u);
	struct cfsbw_sim_point *pts = calloc(jobs, sizeof(*pts));
	if (!pts) {
		status = 1;
		goto out;
	}
	status = cli_parallel(jobs, search, &p, pts, "plan");
	if (!status && p.json) {
		status = print_json(&p, &sc, &now, &base, pts);
	} else if (!status) {
		status = print_found(&p, pts,
				     p.per_cpu ? "smallest runtime"
					       : "smallest quota");
		if (p.with_burst) {
			int st = print_found(&p, pts + p.seeds,
					     "or, with cpu.cfs_burst_us as large "
					     "as the quota, the smallest quota");
			status = status ? status : st;
		}
	}
	free(pts);
out:
	cfsbw_sim_scenario_free(&sc);
	return status;
}
