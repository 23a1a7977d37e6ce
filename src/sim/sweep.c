/*
 * sweep.c - what one run says about a limit, in numbers a sweep or a plan
 * compares (issue 14, item 3): the group's use, the share of its periods
 * that throttled (what the CPUThrottlingHigh alert watches), its throttled
 * time, and per task line in its subtree with latencies the p50, p99 and
 * p99.9, or for a replay when its last thread exited.  Plain integers: a
 * point travels between processes as it is (the command's workers) and
 * prints the same everywhere.
 */
#include <string.h>

#include "cfsbw_sim.h"

/* Is path the group or below it?  Lines elsewhere are not its answer. */
static bool in_subtree(const char *path, const char *group)
{
	size_t n = strlen(group);
	if (!strcmp(group, "/"))
		return true;
	return !strncmp(path, group, n) && (path[n] == '\0' || path[n] == '/');
}

int cfsbw_sim_point_measure(const struct cfsbw_sim *s, const char *group,
			    struct cfsbw_sim_point *out)
{
	struct cfsbw_sim_group_result g;
	struct cfsbw_sim_totals tot;
	memset(out, 0, sizeof(*out));
	if (cfsbw_sim_group_result_by_path(s, group, &g))
		return -1;
	cfsbw_sim_totals(s, &tot);
	out->span_ns = tot.duration_ns;
	out->usage_ns = g.usage_ns;
	out->quota_ns = g.quota_ns == CFSBW_RUNTIME_INF ? -1 : g.quota_ns;
	out->period_ns = g.period_ns;
	out->nr_periods = g.stats.nr_periods;
	out->nr_throttled = g.stats.nr_throttled;
	out->throttled_time_ns = (int64_t)g.stats.throttled_time;
	for (size_t i = 0; i < cfsbw_sim_nr_lines(s); i++) {
		struct cfsbw_sim_line_result r;
		cfsbw_sim_line_result(s, i, &r);
		if ((!r.latency.count && !r.exited) ||
		    !in_subtree(r.spec->group, group))
			continue;
		out->nr_lines_all++;
		if (out->nr_lines == CFSBW_SIM_POINT_MAX_LINES)
			continue;
		struct cfsbw_sim_point_line *l = &out->lines[out->nr_lines++];
		l->line = r.spec->line;
		l->count = r.latency.count;
		l->p50_ns = r.latency.p50_ns;
		l->p99_ns = r.latency.p99_ns;
		l->p999_ns = r.latency.p999_ns;
		l->exited = r.exited;
		l->last_exit_ns = r.last_exit_ns;
		l->cpu_ns = r.cpu_ns;
	}
	return 0;
}

/* Throttled periods per 10000 periods: an integer percentage with two
 * decimals, 0 when the group saw no period. */
int64_t cfsbw_sim_point_throttled_bp(const struct cfsbw_sim_point *p)
{
	if (!p->nr_periods)
		return 0;
	return (int64_t)((p->nr_throttled * 10000 + p->nr_periods / 2) /
			 p->nr_periods);
}
