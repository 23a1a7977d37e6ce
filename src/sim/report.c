/*
 * report.c - the results of a run: accessors, the text report and the JSON
 * object of `cfsbw sim`.
 *
 * Numbers are formatted from integers (cores as millionths, times in ns),
 * never through floating point, so that reports are identical byte for
 * byte on every machine.  cpu.stat columns come from the core's
 * CFSBW_STAT_MAP, like the file itself.
 */
#include <inttypes.h>
#include <string.h>

#include "sim/sim_int.h"

int64_t cfsbw_sim_cores_micro(int64_t used_ns, int64_t span_ns)
{
	if (span_ns <= 0 || used_ns <= 0)
		return 0;
	/* keep r * 1e6 within 64 bits for spans up to hours */
	while (span_ns > INT64_C(9000000000000)) {
		span_ns /= 1000;
		used_ns /= 1000;
	}
	int64_t q = used_ns / span_ns, r = used_ns % span_ns;
	return q * 1000000 + (r * 1000000 + span_ns / 2) / span_ns;
}

size_t cfsbw_sim_nr_groups(const struct cfsbw_sim *s)
{
	return s->nr_groups;
}

void cfsbw_sim_group_result(const struct cfsbw_sim *s, size_t i,
			    struct cfsbw_sim_group_result *out)
{
	struct sim_group *g = s->groups[i];
	out->path = cfsbw_group_path(g->cg);
	out->group = g->cg;
	out->usage_ns = g->usage_ns;
	out->quota_ns = cfsbw_group_quota_ns(g->cg);
	out->period_ns = cfsbw_group_period_ns(g->cg);
	out->shares = cfsbw_group_shares(g->cg);
	out->throttles = g->throttles;
	cfsbw_group_stats(g->cg, &out->stats);
}

int cfsbw_sim_group_result_by_path(const struct cfsbw_sim *s, const char *path,
				   struct cfsbw_sim_group_result *out)
{
	for (size_t i = 0; i < s->nr_groups; i++) {
		if (!strcmp(cfsbw_group_path(s->groups[i]->cg), path)) {
			cfsbw_sim_group_result(s, i, out);
			return 0;
		}
	}
	return -2; /* -ENOENT, without <errno.h> in a report file */
}

size_t cfsbw_sim_nr_lines(const struct cfsbw_sim *s)
{
	return s->nr_lines;
}

void cfsbw_sim_line_result(const struct cfsbw_sim *s, size_t i,
			   struct cfsbw_sim_line_result *out)
{
	const struct sim_line *l = &s->lines[i];
	out->spec = l->spec;
	out->cpu_ns = l->state_ns[SIM_TS_RUNNING];
	out->wait_ns = l->state_ns[SIM_TS_WAITING];
	out->throttled_ns = l->state_ns[SIM_TS_THROTTLED];
	out->sleep_ns = l->state_ns[SIM_TS_SLEEPING];
	out->migrations = l->migrations;
	out->completed = l->completed;
	out->pending = l->pending;
	out->latency_lost = l->lat_lost;
	out->exited = l->exited;
	out->last_exit_ns = l->last_exit_ns;
	cfsbw_sim__line_latency(l, &out->latency);
}

void cfsbw_sim_totals(const struct cfsbw_sim *s, struct cfsbw_sim_totals *out)
{
	out->nr_cpus = s->nr_cpus;
	out->hz = s->sc->hz;
	out->duration_ns = s->end_ns;
	out->seed = s->sc->seed;
	out->policy = cfsbw_tree_policy(s->tree);
	out->scheduler = s->sc->scheduler;
	out->balance_load = s->sc->balance_load;
	out->wake_scan = s->sc->wake_scan;
	out->slice_ns = cfsbw_tree_slice_ns(s->tree);
	out->events = s->events;
	out->switches = s->switches;
	out->migrations = s->migrations;
	out->busy_ns = s->busy_ns;
}

struct cfsbw_tree *cfsbw_sim_tree(struct cfsbw_sim *s)
{
	return s->tree;
}

/* ---- formatting ------------------------------------------------------- */

/* ns as "S.mmm" seconds, rounded to the millisecond. */
static const char *fmt_sec(char *buf, size_t n, int64_t ns)
{
	int64_t ms = (ns + 500000) / 1000000;
	snprintf(buf, n, "%" PRId64 ".%03" PRId64, ms / 1000, ms % 1000);
	return buf;
}

/* ns as "M.uuu" milliseconds, rounded to the microsecond. */
static const char *fmt_ms(char *buf, size_t n, int64_t ns)
{
	int64_t us = (ns + 500) / 1000;
	snprintf(buf, n, "%" PRId64 ".%03" PRId64, us / 1000, us % 1000);
	return buf;
}

static const char *fmt_cores(char *buf, size_t n, int64_t micro)
{
	snprintf(buf, n, "%" PRId64 ".%06" PRId64, micro / 1000000,
		 micro % 1000000);
	return buf;
}

static bool stat_shown(const struct cfsbw_sim *s, int upstream_only)
{
	return !upstream_only ||
	       cfsbw_tree_policy(s->tree) == CFSBW_POLICY_UPSTREAM;
}

/* Does the line measure latencies: duty cycles, requests, a trace whose
 * steps wait for an rt-app timer, and an open-loop replay (workload.c)? */
static bool has_latency(const struct cfsbw_sim_task_spec *t)
{
	if (t->workload == CFSBW_SIM_WL_DUTY ||
	    t->workload == CFSBW_SIM_WL_REQUESTS)
		return true;
	if (t->workload != CFSBW_SIM_WL_TRACE)
		return false;
	if (t->trace_open)
		return true;
	for (size_t i = 0; i < t->trace_len; i++)
		if (t->trace[i].timer_ns > 0)
			return true;
	for (size_t k = 0; k < t->nr_threads; k++)
		for (size_t i = 0; i < t->threads[k].nr_steps; i++)
			if (t->threads[k].steps[i].timer_ns > 0)
				return true;
	return false;
}

const char *cfsbw_sim_model_text(const struct cfsbw_sim_scenario *sc,
				 bool with_scheduler, char *buf, size_t size)
{
	char fp[16];
	snprintf(buf, size, "%s%s%s%s%s",
		 with_scheduler && sc->scheduler == CFSBW_SIM_SCHED_EEVDF
			 ? ", scheduler eevdf"
			 : "",
		 sc->balance_load == CFSBW_SIM_LOAD_PELT ? ", balance load pelt"
							 : "",
		 sc->wake_scan == CFSBW_SIM_WAKE_UTIL ? ", wake scan util" : "",
		 sc->first_period ? ", first period " : "",
		 sc->first_period ? cfsbw_sim_first_period_text(
					    sc->first_period, fp, sizeof fp)
				  : "");
	return buf;
}

void cfsbw_sim_report_text(const struct cfsbw_sim *s, const char *name, FILE *f)
{
	struct cfsbw_sim_totals tot;
	char a[32], b[32], c[32], model[96];
	cfsbw_sim_totals(s, &tot);

	fprintf(f, "scenario %s: %u CPUs, HZ %u, %s s simulated, policy %s, "
		   "scheduler %s%s, slice %" PRId64 " us, seed %" PRIu64 "\n",
		name, tot.nr_cpus, tot.hz, fmt_sec(a, sizeof a, tot.duration_ns),
		cfsbw_policy_name(tot.policy),
		cfsbw_sim_scheduler_name(tot.scheduler),
		cfsbw_sim_model_text(s->sc, false, model, sizeof model),
		tot.slice_ns / 1000, tot.seed);
	fprintf(f,
		"  %" PRIu64 " events, %" PRIu64 " context switches, %" PRIu64
		" migrations, machine busy %s of %u cores\n\n",
		tot.events, tot.switches, tot.migrations,
		fmt_cores(b, sizeof b,
			  cfsbw_sim_cores_micro(tot.busy_ns, tot.duration_ns)),
		tot.nr_cpus);

	int gw = 8;
	for (size_t i = 0; i < s->nr_groups; i++) {
		int n = (int)strlen(cfsbw_group_path(s->groups[i]->cg));
		gw = n > gw ? n : gw;
	}
	/* hardlimits: the runtime is each CPU's, not the group's (SPEC 6) */
	fprintf(f, "%-*s %10s %21s", gw, "group", "cores",
		cfsbw_tree_policy(s->tree) == CFSBW_POLICY_HARDLIMITS
			? "runtime/period us/CPU"
			: "quota/period us");
#define STAT_HEAD(field, up)                                                   \
	if (stat_shown(s, up))                                                 \
		fprintf(f, " %15s", #field);
	CFSBW_STAT_MAP(STAT_HEAD)
#undef STAT_HEAD
	fputc('\n', f);
	for (size_t i = 0; i < s->nr_groups; i++) {
		struct cfsbw_sim_group_result r;
		char qp[48];
		cfsbw_sim_group_result(s, i, &r);
		if (r.quota_ns == CFSBW_RUNTIME_INF)
			snprintf(qp, sizeof qp, "-1/%" PRId64, r.period_ns / 1000);
		else
			snprintf(qp, sizeof qp, "%" PRId64 "/%" PRId64,
				 r.quota_ns / 1000, r.period_ns / 1000);
		fprintf(f, "%-*s %10s %21s", gw, r.path,
			fmt_cores(a, sizeof a,
				  cfsbw_sim_cores_micro(r.usage_ns,
							tot.duration_ns)),
			qp);
#define STAT_VAL(field, up)                                                    \
	if (stat_shown(s, up))                                                 \
		fprintf(f, " %15" PRIu64, r.stats.field);
		CFSBW_STAT_MAP(STAT_VAL)
#undef STAT_VAL
		fputc('\n', f);
	}

	/* the first column as wide as its widest entry */
	char what[256];
	int width = (int)strlen("line: group workload xcount");
	for (size_t i = 0; i < s->nr_lines; i++) {
		const struct cfsbw_sim_task_spec *ts = s->lines[i].spec;
		int n = snprintf(what, sizeof what, "%u: %s %s x%u", ts->line,
				 ts->group, ts->text, ts->count);
		if (n > width)
			width = n < (int)sizeof what ? n : (int)sizeof what - 1;
	}
	fprintf(f, "\n%-*s %9s %9s %9s %10s %10s %10s\n", width,
		"line: group workload xcount", "cpu s", "wait s", "thrott s",
		"p50 ms", "p99 ms", "max ms");
	for (size_t i = 0; i < s->nr_lines; i++) {
		struct cfsbw_sim_line_result r;
		char l50[32], l99[32], lmax[32];
		cfsbw_sim_line_result(s, i, &r);
		snprintf(what, sizeof what, "%u: %s %s x%u", r.spec->line,
			 r.spec->group, r.spec->text, r.spec->count);
		fprintf(f, "%-*s %9s %9s %9s", width, what,
			fmt_sec(a, sizeof a, r.cpu_ns),
			fmt_sec(b, sizeof b, r.wait_ns),
			fmt_sec(c, sizeof c, r.throttled_ns));
		if (has_latency(r.spec) && r.latency.count)
			fprintf(f, " %10s %10s %10s  (%" PRIu64 " done",
				fmt_ms(l50, sizeof l50, r.latency.p50_ns),
				fmt_ms(l99, sizeof l99, r.latency.p99_ns),
				fmt_ms(lmax, sizeof lmax, r.latency.max_ns),
				r.latency.count);
		else if (has_latency(r.spec))
			fprintf(f, " %10s %10s %10s  (0 done", "-", "-", "-");
		if (r.spec->workload == CFSBW_SIM_WL_REQUESTS)
			fprintf(f, ", %" PRIu64 " queued at the end", r.pending);
		if (r.latency_lost)
			fprintf(f, "; out of memory: %" PRIu64
				   " latencies not recorded",
				r.latency_lost);
		if (has_latency(r.spec))
			fputc(')', f);
		fputc('\n', f);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void cfsbw_sim_report_json(const struct cfsbw_sim *s, const char *name, FILE *f)
{
	struct cfsbw_sim_totals tot;
	char a[32], fp[16];
	cfsbw_sim_totals(s, &tot);

	fputs("{\"scenario\": {\"name\": ", f);
	json_str(f, name);
	fprintf(f, ", \"cpus\": %u, \"hz\": %u, \"duration_ns\": %" PRId64
		   ", \"seed\": %" PRIu64 ", \"policy\": \"%s\", "
		   "\"scheduler\": \"%s\", \"balance_load\": \"%s\", "
		   "\"wake_scan\": \"%s\", \"first_period\": \"%s\", "
		   "\"slice_us\": %" PRId64 "},\n",
		tot.nr_cpus, tot.hz, tot.duration_ns, tot.seed,
		cfsbw_policy_name(tot.policy),
		cfsbw_sim_scheduler_name(tot.scheduler),
		cfsbw_sim_balance_load_name(tot.balance_load),
		cfsbw_sim_wake_scan_name(tot.wake_scan),
		cfsbw_sim_first_period_text(s->sc->first_period, fp, sizeof fp),
		tot.slice_ns / 1000);

	fputs(" \"groups\": {", f);
	for (size_t i = 0; i < s->nr_groups; i++) {
		struct cfsbw_sim_group_result r;
		cfsbw_sim_group_result(s, i, &r);
		fputs(i ? ",\n  " : "\n  ", f);
		json_str(f, r.path);
		fprintf(f,
			": {\"usage\": %s, \"cpu_time_ns\": %" PRId64
			", \"quota_us\": %" PRId64 ", \"period_us\": %" PRId64
			", \"shares\": %u, \"throttles\": %" PRIu64,
			fmt_cores(a, sizeof a,
				  cfsbw_sim_cores_micro(r.usage_ns,
							tot.duration_ns)),
			r.usage_ns,
			r.quota_ns == CFSBW_RUNTIME_INF ? -1
							: r.quota_ns / 1000,
			r.period_ns / 1000, r.shares, r.throttles);
#define STAT_JSON(field, up)                                                   \
	if (stat_shown(s, up))                                                 \
		fprintf(f, ", \"" #field "\": %" PRIu64, r.stats.field);
		CFSBW_STAT_MAP(STAT_JSON)
#undef STAT_JSON
		fputc('}', f);
	}
	fputs("},\n \"tasks\": [", f);
	for (size_t i = 0; i < s->nr_lines; i++) {
		struct cfsbw_sim_line_result r;
		cfsbw_sim_line_result(s, i, &r);
		fputs(i ? ",\n  " : "\n  ", f);
		fprintf(f, "{\"line\": %u, \"group\": ", r.spec->line);
		json_str(f, r.spec->group);
		fprintf(f, ", \"workload\": \"%s\", \"args\": ",
			cfsbw_sim_workload_name(r.spec->workload));
		json_str(f, r.spec->text);
		fprintf(f, ", \"count\": %u, \"cpu_time_ns\": %" PRId64
			   ", \"wait_time_ns\": %" PRId64
			   ", \"throttled_time_ns\": %" PRId64
			   ", \"sleep_time_ns\": %" PRId64
			   ", \"migrations\": %" PRIu64 ", \"completed\": %" PRIu64,
			r.spec->count, r.cpu_ns, r.wait_ns, r.throttled_ns,
			r.sleep_ns, r.migrations, r.completed);
		if (r.spec->workload == CFSBW_SIM_WL_REQUESTS)
			fprintf(f, ", \"pending\": %" PRIu64, r.pending);
		if (r.latency_lost)
			fprintf(f, ", \"latency_lost\": %" PRIu64, r.latency_lost);
		if (has_latency(r.spec))
			fprintf(f, ", \"latency\": {\"count\": %" PRIu64
				   ", \"p50_ns\": %" PRId64 ", \"p99_ns\": %" PRId64
				   ", \"max_ns\": %" PRId64 ", \"mean_ns\": %" PRId64
				   "}",
				r.latency.count, r.latency.p50_ns,
				r.latency.p99_ns, r.latency.max_ns,
				r.latency.mean_ns);
		fputc('}', f);
	}
	fprintf(f,
		"],\n \"totals\": {\"events\": %" PRIu64
		", \"switches\": %" PRIu64 ", \"migrations\": %" PRIu64
		", \"cpu_time_ns\": %" PRId64 ", \"usage\": %s}}\n",
		tot.events, tot.switches, tot.migrations, tot.busy_ns,
		fmt_cores(a, sizeof a,
			  cfsbw_sim_cores_micro(tot.busy_ns, tot.duration_ns)));
}
