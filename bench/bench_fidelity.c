/*
 * bench_fidelity.c - the simulator measured against the kernel.
 *
 *   bench_fidelity [--runs N] [--scale F] [--scheduler cfs|eevdf]
 *                  [--balance-load instant|pelt] [--wake-scan all|util]
 *                  [--first-period whole|random|N%|measured] [FILE.sim...]
 *
 * Each scenario (default: every .sim file in bench/fidelity) runs N times
 * (default 3) on this machine's kernel, in cgroups
 * (bench/fidelity_kernel.c), and once in the simulator exactly as `cfsbw
 * sim FILE --policy upstream --scheduler X --cpus C --hz H --seed S` would
 * run it, with X the simulator's default fair scheduler (cfs) unless
 * --scheduler says, its default balance_load (instant) unless
 * --balance-load says and its default wake_scan (all) unless --wake-scan
 * says (the other seven ways are run too on the same kernel runs, and
 * their tallies printed), C the
 * CPUs this process may use, H the
 * kernel's HZ, and S the scenario's seed, seed + 1, ... (as many as
 * kernel runs: random phases and arrivals differ between kernel runs
 * too); the simulator's figures are the medians over those seeds.  One
 * table: per group, its usage in cores (the kernel's
 * median and range, the simulator's, the error against the median), its
 * throttled periods (nr_throttled / nr_periods: the kernel's range, the
 * simulator's, how many points outside the range), throttled_time per
 * period in ms, and a verdict against issue 14's targets: usage within 2%
 * of the kernel's median, throttled periods within 5 points of its range.
 * Per task line, its latency p50 and p99 (duty and requests lines), its
 * migrations and its time waiting for a CPU; per scenario, the load from
 * outside during each kernel run, and how long each ran: the kernel's
 * usage and rates are over that measured time, not the time asked, and
 * a run whose groups used more CPU than the machine has is named.
 * Each kernel run starts after a pause of 0 to 500 ms drawn from its
 * seed, so that runs do not share their first period's luck.
 * --scale F multiplies every scenario's duration (0.2: a quick look);
 * --balance-load and --wake-scan choose the table's model as `cfsbw sim
 * --balance-load` and `--wake-scan` would; the per-task lines give the
 * other scheduler's wait and the other balance load's migrations under
 * the same wake_scan.  --first-period sets every simulated run's
 * first_period (default: the scenario's): random draws each group's
 * first period per seed, as the kernel does per run; measured watches
 * each kernel run's limited groups for their first refresh and gives
 * the simulated run of the same number (seed + r) the same phase.
 *
 * Needs root and a cgroup cpu controller; without them it says so and
 * exits 0 (make bench goes on).  The exit status is not a verdict: the
 * table is a measurement.
 */
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fidelity_kernel.h"
#include "fidelity_tasks.h"

#define MAX_RUNS 20
#define USAGE_TARGET_PCT 2.0
#define THROTTLE_TARGET_PTS 5.0

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *p = malloc(cap);
	size_t n;
	while (p && (n = fread(p + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *q = realloc(p, cap *= 2);
			if (!q)
				free(p);
			p = q;
		}
	}
	fclose(f);
	if (p)
		p[len] = '\0';
	return p;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The kernel's HZ: its config, or measured from /proc/timer_list. */
static unsigned kernel_hz(const char **how)
{
	struct utsname u;
	char path[400], line[256];
	unsigned hz = 0;
	uname(&u);
	snprintf(path, sizeof path, "/boot/config-%s", u.release);
	FILE *f = fopen(path, "r");
	*how = "kernel config";
	if (!f)
		f = popen("zcat /proc/config.gz 2>/dev/null", "r");
	if (f) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "CONFIG_HZ=%u", &hz) == 1)
				break;
		/* a popen'd stream must be pclose'd; fclose of it would leak */
		if (access(path, F_OK) == 0)
			fclose(f);
		else
			pclose(f);
	}
	if (hz)
		return hz;
	/* Measured: jiffies in /proc/timer_list, 200 ms apart, rounded to
	 * the HZ values Linux offers. */
	*how = "measured";
	unsigned long long j[2] = {0, 0};
	int64_t t[2];
	for (int i = 0; i < 2; i++) {
		FILE *tl = fopen("/proc/timer_list", "r");
		t[i] = mono_ns();
		while (tl && fgets(line, sizeof line, tl))
			if (sscanf(line, "jiffies: %llu", &j[i]) == 1)
				break;
		if (tl)
			fclose(tl);
		if (!i)
			fk_sleep_until(t[0] + 200000000);
	}
	double rate = (double)(j[1] - j[0]) * 1e9 / (double)(t[1] - t[0]);
	static const unsigned offered[] = {100, 250, 300, 1000};
	hz = 250;
	for (size_t i = 0; i < sizeof offered / sizeof offered[0]; i++)
		if (fabs(rate - offered[i]) < fabs(rate - hz))
			hz = offered[i];
	return hz;
}

static unsigned machine_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static long machine_slice_us(void)
{
	char *s = read_file("/proc/sys/kernel/sched_cfs_bandwidth_slice_us");
	long v = s ? strtol(s, NULL, 10) : 5000;
	free(s);
	return v;
}

/*
 * The pause before kernel run r of a scenario: 0 to 500 ms (the suite's
 * longest period), drawn from the run's seed.  The kernel's period
 * timers keep a grid tied to the monotonic clock (docs/sim.md, "The
 * kernel's first period is short"), so runs started back to back, each
 * a whole number of periods long, would start at nearly the same place
 * in it and share their first period's luck; the pause gives each run
 * its own, as a service started at an arbitrary moment has.
 */
static int64_t run_pause_ns(uint64_t seed)
{
	return (int64_t)fk_draw_below(seed, 500000000u);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of n values (sorted in place). */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The simulator's fair scheduler for the table: its default (cfs) unless
 * --scheduler says; the other is run on the same kernel runs and tallied. */
static enum cfsbw_sim_scheduler sim_scheduler = CFSBW_SIM_SCHED_CFS;
/* The simulator's balance_load and wake_scan: its defaults (instant,
 * all) unless asked. */
static enum cfsbw_sim_balance_load sim_balance_load = CFSBW_SIM_LOAD_INSTANT;
static enum cfsbw_sim_wake_scan sim_wake_scan = CFSBW_SIM_WAKE_ALL;
/* --first-period: every run's first_period, when set; measured: each
 * simulated run's groups get the phase of the kernel run of the same
 * number (fk_measure_first_refresh). */
static int sim_first_period;
static bool sim_first_period_set, sim_first_period_measured;

/* The simulator is run eight ways on the same kernel runs: each fair
 * scheduler, each balance_load, each wake_scan.  The table shows the
 * chosen one; the summary tallies all eight. */
#define NR_VARIANTS 8u
static unsigned variant3(enum cfsbw_sim_scheduler sched,
			 enum cfsbw_sim_balance_load load,
			 enum cfsbw_sim_wake_scan scan)
{
	return (sched == CFSBW_SIM_SCHED_EEVDF ? 1u : 0u) +
	       (load == CFSBW_SIM_LOAD_PELT ? 2u : 0u) +
	       (scan == CFSBW_SIM_WAKE_UTIL ? 4u : 0u);
}

/* The variant of sched and load with the chosen wake_scan. */
static unsigned variant(enum cfsbw_sim_scheduler sched,
			enum cfsbw_sim_balance_load load)
{
	return variant3(sched, load, sim_wake_scan);
}

static enum cfsbw_sim_wake_scan variant_wake_scan(unsigned m)
{
	return m & 4 ? CFSBW_SIM_WAKE_UTIL : CFSBW_SIM_WAKE_ALL;
}

/* Variant m's scheduler and balance load: variant3() read back. */
static enum cfsbw_sim_scheduler variant_scheduler(unsigned m)
{
	return m & 1 ? CFSBW_SIM_SCHED_EEVDF : CFSBW_SIM_SCHED_CFS;
}

static enum cfsbw_sim_balance_load variant_load(unsigned m)
{
	return m & 2 ? CFSBW_SIM_LOAD_PELT : CFSBW_SIM_LOAD_INSTANT;
}

static enum cfsbw_sim_balance_load other_load(void)
{
	return sim_balance_load == CFSBW_SIM_LOAD_PELT ? CFSBW_SIM_LOAD_INSTANT
						       : CFSBW_SIM_LOAD_PELT;
}

static enum cfsbw_sim_scheduler other_scheduler(void)
{
	return sim_scheduler == CFSBW_SIM_SCHED_CFS ? CFSBW_SIM_SCHED_EEVDF
						    : CFSBW_SIM_SCHED_CFS;
}

static double ms_per_period(int64_t ns, uint64_t periods)
{
	return periods ? (double)ns / 1e6 / (double)periods : 0;
}

/*
 * One task line's latencies (duty cycles, requests): the kernel's median
 * p50 and p99 over its runs with their ranges, the simulator's medians
 * over its seeds, in ms.
 */
static void latency_row(const struct cfsbw_sim_task_spec *t, size_t i,
			const struct fk_line *kl, size_t nt,
			struct cfsbw_sim *const *sims, unsigned runs)
{
	if (t->workload != CFSBW_SIM_WL_DUTY &&
	    t->workload != CFSBW_SIM_WL_REQUESTS)
		return;
	double k50[MAX_RUNS], k99[MAX_RUNS], s50[MAX_RUNS], s99[MAX_RUNS];
	for (unsigned r = 0; r < runs; r++) {
		struct cfsbw_sim_line_result lr;
		cfsbw_sim_line_result(sims[r], i, &lr);
		k50[r] = (double)kl[r * nt + i].p50_ns / 1e6;
		k99[r] = (double)kl[r * nt + i].p99_ns / 1e6;
		s50[r] = (double)lr.latency.p50_ns / 1e6;
		s99[r] = (double)lr.latency.p99_ns / 1e6;
	}
	double m50 = median(k50, runs), m99 = median(k99, runs);
	char what[64];
	snprintf(what, sizeof what, "%u: %s", t->line, t->text);
	printf("%-22s latency, line %-34.34s p50 %7.1f %7.1f..%-7.1f sim "
	       "%7.1f   p99 %7.1f %7.1f..%-7.1f sim %7.1f ms\n",
	       "", what, m50, k50[0], k50[runs - 1], median(s50, runs), m99,
	       k99[0], k99[runs - 1], median(s99, runs));
}

/*
 * One task line's migrations and waits, per task: the kernel's
 * (se.nr_migrations and schedstat's run_delay, median over its runs, with
 * the range) against the simulator's (median over its seeds).  The
 * kernel's run_delay counts the time a task waits under a throttled
 * group (6.18 here: the duty tasks of 10-many-small wait 48% of the time
 * on the kernel, 12% + 37% throttled in the simulator), so the
 * simulator's figure is its wait plus its throttled time, shown apart;
 * then the other scheduler's wait and the other balance_load's moves.
 */
static void sched_row(const struct cfsbw_sim_task_spec *t, size_t i,
		      const struct fk_line *kl, size_t nt,
		      struct cfsbw_sim *const *sims,
		      struct cfsbw_sim *const *other,
		      struct cfsbw_sim *const *alt, unsigned runs,
		      int64_t duration_ns, const struct fk_load *load)
{
	double km[MAX_RUNS], kw[MAX_RUNS], sm[MAX_RUNS], sw[MAX_RUNS],
		swait[MAX_RUNS], sthr[MAX_RUNS], ow[MAX_RUNS], am[MAX_RUNS];
	double task_s = (double)t->count * (double)duration_ns / 1e9;
	for (unsigned r = 0; r < runs; r++) {
		const struct fk_line *k = &kl[r * nt + i];
		if (!k->sched_read) {
			printf("%-22s tasks,   line %u: no /proc/PID/sched or "
			       "schedstat on this kernel\n", "", t->line);
			return;
		}
		struct cfsbw_sim_line_result lr;
		cfsbw_sim_line_result(sims[r], i, &lr);
		/* the kernel's over its run's own wall time */
		double ktask_s =
			(double)t->count * (double)load[r].wall_ns / 1e9;
		km[r] = (double)k->migrations / ktask_s;
		kw[r] = 100 * (double)k->run_delay_ns / 1e9 / ktask_s;
		sm[r] = (double)lr.migrations / task_s;
		swait[r] = 100 * (double)lr.wait_ns / 1e9 / task_s;
		sthr[r] = 100 * (double)lr.throttled_ns / 1e9 / task_s;
		sw[r] = swait[r] + sthr[r];
		cfsbw_sim_line_result(other[r], i, &lr);
		ow[r] = 100 * (double)(lr.wait_ns + lr.throttled_ns) / 1e9 /
			task_s;
		cfsbw_sim_line_result(alt[r], i, &lr);
		am[r] = (double)lr.migrations / task_s;
	}
	double mm = median(km, runs), mw = median(kw, runs);
	double smm = median(sm, runs), sww = median(sw, runs);
	double swaitm = median(swait, runs), sthrm = median(sthr, runs);
	char what[64];
	snprintf(what, sizeof what, "%u: %s", t->line, t->text);
	printf("%-22s tasks,   line %-34.34s moves/s %6.2f %6.2f..%-6.2f sim "
	       "%6.2f   waiting %5.1f%% %5.1f..%-5.1f sim %5.1f%% (%.1f + "
	       "%.1f throttled; %s %.1f%%; %s %.2f moves/s)\n",
	       "", what, mm, km[0], km[runs - 1], smm, mw, kw[0],
	       kw[runs - 1], sww, swaitm, sthrm,
	       cfsbw_sim_scheduler_name(other_scheduler()), median(ow, runs),
	       cfsbw_sim_balance_load_name(other_load()), median(am, runs));
}

struct tally {
	unsigned rows, usage_ok, throttle_ok;
};

/* One scenario: its kernel runs, its simulation, its rows of the table. */
/* One group in the simulator, medians over its seeds, and its verdict
 * against the kernel's median usage and range of throttled periods
 * (thr, sorted). */
struct sim_row {
	double usage, throttled, ms_per_period, usage_err, off;
	bool usage_ok, throttle_ok;
};

static struct sim_row sim_row(struct cfsbw_sim *const *sims, unsigned runs,
			      const char *gp, int64_t duration_ns, double umed,
			      const double *thr)
{
	double sus[MAX_RUNS], sts[MAX_RUNS], stps[MAX_RUNS];
	for (unsigned r = 0; r < runs; r++) {
		struct cfsbw_sim_group_result g;
		cfsbw_sim_group_result_by_path(sims[r], gp, &g);
		sus[r] = (double)g.usage_ns / (double)duration_ns;
		sts[r] = pct(g.stats.nr_throttled, g.stats.nr_periods);
		stps[r] = ms_per_period((int64_t)g.stats.throttled_time,
					g.stats.nr_periods);
	}
	struct sim_row x;
	x.usage = median(sus, runs);
	x.throttled = median(sts, runs);
	x.ms_per_period = median(stps, runs);
	x.usage_err = umed > 0 ? 100 * (x.usage - umed) / umed
			       : (x.usage > 0 ? 100 : 0);
	x.off = x.throttled < thr[0]	      ? thr[0] - x.throttled
		: x.throttled > thr[runs - 1] ? x.throttled - thr[runs - 1]
					      : 0;
	x.usage_ok = fabs(x.usage_err) <= USAGE_TARGET_PCT;
	x.throttle_ok = x.off <= THROTTLE_TARGET_PTS;
	return x;
}

static void tally_row(struct tally *t, const struct sim_row *x)
{
	t->rows++;
	t->usage_ok += x->usage_ok;
	t->throttle_ok += x->throttle_ok;
}

/*
 * Runs 0..runs-1 of sc in the simulator, into out[]: run r with seed
 * seed0 + r and, when k (the kernel runs' groups, runs x nr_groups) is
 * given, each group's first period where kernel run r had it; without
 * k, the scenario's own.  0, or the first failure (said on stderr).
 */
static int sim_runs(struct cfsbw_sim_scenario *sc, unsigned runs,
		    uint64_t seed0, const struct fk_group *k,
		    struct cfsbw_sim **out, const char *path)
{
	size_t ng = sc->nr_groups;
	struct cfsbw_sim_error serr;
	for (unsigned r = 0; r < runs; r++) {
		sc->seed = seed0 + r;
		for (size_t g = 0; g < ng; g++) {
			int64_t f = k ? k[r * ng + g].first_refresh_ns : 0;
			sc->groups[g].first_period_ns = f > 0 ? f : 0;
		}
		int rc = cfsbw_sim_create(sc, &out[r], &serr);
		if (rc) {
			fprintf(stderr, "bench_fidelity: %s: sim: %u: %s\n",
				path, serr.line, serr.msg);
			return rc;
		}
		cfsbw_sim_run(out[r]);
	}
	return 0;
}

/* tally[v]: the rows of variant v (variant()) within the targets; with
 * --first-period measured, tally[NR_VARIANTS] too. */
static int fidelity(const char *path, unsigned runs, double scale,
		    unsigned cpus, unsigned hz, long slice_us,
		    struct tally *tally)
{
	char *text = read_file(path);
	if (!text) {
		fprintf(stderr, "bench_fidelity: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error serr;
	cfsbw_sim_scenario_init(&sc);
	int rc = cfsbw_sim_scenario_parse(&sc, text, &serr);
	free(text);
	if (rc) {
		fprintf(stderr, "bench_fidelity: %s:%u: %s\n", path, serr.line,
			serr.msg);
		cfsbw_sim_scenario_free(&sc);
		return -1;
	}
	sc.duration_ns = (int64_t)((double)sc.duration_ns * scale);
	size_t ng = sc.nr_groups;
	struct fk_group *k = calloc(ng * runs + 1, sizeof *k);
	size_t nt = sc.nr_tasks;
	struct fk_line *kl = calloc(nt * runs + 1, sizeof *kl);
	struct fk_load load[MAX_RUNS];
	char err[512];
	for (unsigned r = 0; r < runs && k && kl; r++) {
		fk_sleep_until(mono_ns() + run_pause_ns(sc.seed + r));
		if (fk_run(&sc, sc.duration_ns, sc.seed + r, k + r * ng,
			   kl + r * nt, &load[r], err, sizeof err)) {
			fprintf(stderr, "bench_fidelity: %s: %s\n", path, err);
			free(k);
			free(kl);
			cfsbw_sim_scenario_free(&sc);
			return -1;
		}
	}

	/* The simulator, as `cfsbw sim --policy upstream --cpus --hz`,
	 * with this kernel's bandwidth slice. */
	sc.nr_cpus = cpus;
	sc.hz = hz;
	sc.policy = CFSBW_POLICY_UPSTREAM;
	char slice[32], name[] = "sched_cfs_bandwidth_slice_us";
	snprintf(slice, sizeof slice, "%ld", slice_us);
	struct cfsbw_sim_sysctl_spec ys = {name, slice, 0}, *saved = sc.sysctls;
	size_t saved_n = sc.nr_sysctls;
	sc.sysctls = &ys;
	sc.nr_sysctls = 1;
	/* As many seeds as kernel runs: random phases and arrivals differ
	 * from run to run on the kernel too.  Every variant on the same
	 * kernel runs: the table shows the chosen one, the tally all. */
	struct cfsbw_sim *all_sims[NR_VARIANTS][MAX_RUNS] = {{NULL}};
	uint64_t seed0 = sc.seed;
	rc = k && kl ? 0 : -ENOMEM;
	if (sim_first_period_set)
		sc.first_period = sim_first_period;
	for (unsigned m = 0; !rc && m < NR_VARIANTS; m++) {
		sc.scheduler = variant_scheduler(m);
		sc.balance_load = variant_load(m);
		sc.wake_scan = variant_wake_scan(m);
		rc = sim_runs(&sc, runs, seed0,
			      sim_first_period_measured ? k : NULL,
			      all_sims[m], path);
	}
	/* With measured phases, the chosen model once more with the
	 * scenario's own first_period, on the same kernel runs: what the
	 * measured phase changes, apart from the kernel's run-to-run moves. */
	struct cfsbw_sim *own_sims[MAX_RUNS] = {NULL};
	if (!rc && sim_first_period_measured) {
		sc.scheduler = sim_scheduler;
		sc.balance_load = sim_balance_load;
		sc.wake_scan = sim_wake_scan;
		rc = sim_runs(&sc, runs, seed0, NULL, own_sims, path);
	}
	struct cfsbw_sim **sims = all_sims[variant(sim_scheduler,
						   sim_balance_load)],
			 **other = all_sims[variant(other_scheduler(),
						    sim_balance_load)];
	sc.seed = seed0;
	sc.sysctls = saved;
	sc.nr_sysctls = saved_n;

	char base[64];
	snprintf(base, sizeof base, "%s",
		 strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	if (strlen(base) > 4 && !strcmp(base + strlen(base) - 4, ".sim"))
		base[strlen(base) - 4] = '\0';
	for (size_t g = 0; !rc && g < ng; g++) {
		const char *gp = sc.groups[g].path;
		if (!strcmp(gp, "/"))
			continue;
		double use[MAX_RUNS], thr[MAX_RUNS], tpp[MAX_RUNS];
		for (unsigned r = 0; r < runs; r++) {
			const struct fk_group *x = &k[r * ng + g];
			use[r] = (double)x->usage_ns / (double)load[r].wall_ns;
			thr[r] = pct(x->nr_throttled, x->nr_periods);
			tpp[r] = ms_per_period(x->throttled_ns, x->nr_periods);
		}
		double umed = median(use, runs), tmed = median(tpp, runs);
		qsort(thr, runs, sizeof *thr, cmp_double);
		struct sim_row sr = sim_row(sims, runs, gp, sc.duration_ns,
					    umed, thr);
		for (unsigned m = 0; m < NR_VARIANTS; m++) {
			struct sim_row so = sim_row(all_sims[m], runs, gp,
						    sc.duration_ns, umed, thr);
			tally_row(&tally[m], &so);
		}
		if (sim_first_period_measured) {
			struct sim_row so = sim_row(own_sims, runs, gp,
						    sc.duration_ns, umed, thr);
			tally_row(&tally[NR_VARIANTS], &so);
		}
		bool uok = sr.usage_ok, tok = sr.throttle_ok;
		printf("%-22s %-15s %6.3f %6.3f..%-6.3f %6.3f %+7.1f   "
		       "%5.1f..%-5.1f %5.1f %5.1f   %6.2f %6.2f..%-6.2f %6.2f"
		       "  %s\n",
		       base, gp, umed, use[0], use[runs - 1], sr.usage,
		       sr.usage_err, thr[0], thr[runs - 1], sr.throttled, sr.off,
		       tmed, tpp[0], tpp[runs - 1], sr.ms_per_period,
		       uok && tok ? "ok" : !uok && !tok ? "USAGE THROTTLE"
				   : !uok ? "USAGE" : "THROTTLE");
	}
	for (size_t i = 0; !rc && i < nt; i++) {
		latency_row(&sc.tasks[i], i, kl, nt, sims, runs);
		sched_row(&sc.tasks[i], i, kl, nt, sims, other,
			  all_sims[variant(sim_scheduler, other_load())], runs,
			  sc.duration_ns, load);
	}
	if (!rc) {
		double oth[MAX_RUNS], stl[MAX_RUNS], la[MAX_RUNS],
			wall[MAX_RUNS];
		for (unsigned r = 0; r < runs; r++) {
			oth[r] = load[r].others_cores;
			stl[r] = load[r].steal_cores;
			la[r] = load[r].loadavg1;
			wall[r] = (double)load[r].wall_ns / 1e9;
		}
		qsort(oth, runs, sizeof *oth, cmp_double);
		qsort(stl, runs, sizeof *stl, cmp_double);
		qsort(la, runs, sizeof *la, cmp_double);
		qsort(wall, runs, sizeof *wall, cmp_double);
		for (size_t g = 0; sim_first_period_measured && g < ng; g++) {
			if (k[g].first_refresh_ns < 0)
				continue;
			printf("%-22s first refresh of %s, kernel runs 1 to %u:",
			       "", sc.groups[g].path, runs);
			for (unsigned r = 0; r < runs; r++) {
				int64_t f = k[r * ng + g].first_refresh_ns;
				if (f < 0)
					printf(" none");
				else
					printf(" %.1f", (double)f / 1e6);
			}
			printf(" ms after the start\n");
		}
		printf("%-22s load outside the scenario %.3f..%.3f cores, "
		       "steal %.3f..%.3f, loadavg %.2f..%.2f; %.1f s x %u "
		       "(kernel runs %.3f..%.3f s)\n",
		       "", oth[0], oth[runs - 1], stl[0], stl[runs - 1], la[0],
		       la[runs - 1], (double)sc.duration_ns / 1e9, runs,
		       wall[0], wall[runs - 1]);
		/* More CPU than the machine has cannot be right, whatever
		 * went wrong in that run (seen 2026-12-07 16:17: 02's two
		 * groups at medians of 1.126 and 1.140 cores of 2, not seen
		 * again in its next 6 runs): say so beside its figures */
		for (unsigned r = 0; r < runs; r++)
			if (load[r].scenario_cores > cpus * 1.01)
				printf("%-22s kernel run %u: its groups used "
				       "%.3f cores of %u: not credible\n",
				       "", r + 1, load[r].scenario_cores,
				       cpus);
	}
	fflush(stdout);
	for (unsigned m = 0; m < NR_VARIANTS; m++)
		for (unsigned r = 0; r < runs; r++)
			cfsbw_sim_free(all_sims[m][r]);
	for (unsigned r = 0; r < runs; r++)
		cfsbw_sim_free(own_sims[r]);
	free(k);
	free(kl);
	cfsbw_sim_scenario_free(&sc);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned runs = 3;
	const char *scheduler = NULL;
	double scale = 1;
	int first = 1;
	for (; first < argc && argv[first][0] == '-'; first++) {
		const char *a = argv[first];
		if (!strcmp(a, "--runs") && first + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++first], &end, 10);
			if (*end || v < 1 || v > MAX_RUNS) {
				fprintf(stderr, "bench_fidelity: --runs %s: "
					"1..%d\n", argv[first], MAX_RUNS);
				return 2;
			}
			runs = (unsigned)v;
		} else if (!strcmp(a, "--scale") && first + 1 < argc) {
			char *end;
			scale = strtod(argv[++first], &end);
			if (*end || !(scale > 0 && scale <= 10)) {
				fprintf(stderr, "bench_fidelity: --scale %s: "
					"0..10\n", argv[first]);
				return 2;
			}
		} else if (!strcmp(a, "--scheduler") && first + 1 < argc) {
			scheduler = argv[++first];
			if (cfsbw_sim_scheduler_parse(scheduler,
						      &sim_scheduler)) {
				fprintf(stderr, "bench_fidelity: --scheduler "
					"%s: cfs or eevdf\n", scheduler);
				return 2;
			}
		} else if (!strcmp(a, "--balance-load") && first + 1 < argc) {
			const char *v = argv[++first];
			if (cfsbw_sim_balance_load_parse(v, &sim_balance_load)) {
				fprintf(stderr, "bench_fidelity: --balance-load "
					"%s: instant or pelt\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--wake-scan") && first + 1 < argc) {
			const char *v = argv[++first];
			if (cfsbw_sim_wake_scan_parse(v, &sim_wake_scan)) {
				fprintf(stderr, "bench_fidelity: --wake-scan "
					"%s: all or util\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--first-period") && first + 1 < argc) {
			const char *v = argv[++first];
			if (!strcmp(v, "measured")) {
				sim_first_period_measured = true;
				fk_measure_first_refresh(true);
			} else if (cfsbw_sim_first_period_parse(v,
							 &sim_first_period)) {
				fprintf(stderr, "bench_fidelity: --first-period "
					"%s: whole, random, N%% (1 to 100) or "
					"measured\n",
					v);
				return 2;
			} else {
				sim_first_period_set = true;
			}
		} else {
			fprintf(stderr, "usage: bench_fidelity [--runs N] "
				"[--scale F] [--scheduler cfs|eevdf] "
				"[--balance-load instant|pelt] "
				"[--wake-scan all|util] "
				"[--first-period whole|random|N%%|measured] "
				"[FILE.sim...]\n");
			return 2;
		}
	}
	char err[512];
	if (geteuid() != 0) {
		printf("fidelity: skipped, the kernel side needs root to make "
		       "cgroups\n");
		return 0;
	}
	if (fk_setup(err, sizeof err)) {
		printf("fidelity: skipped: %s\n", err);
		return 0;
	}
	glob_t gl = {0};
	if (first == argc &&
	    glob("bench/fidelity/*.sim", 0, NULL, &gl) != 0) {
		fprintf(stderr, "bench_fidelity: no bench/fidelity/*.sim here\n");
		fk_teardown();
		return 1;
	}
	const char *how;
	unsigned cpus = machine_cpus(), hz = kernel_hz(&how);
	long slice_us = machine_slice_us();
	struct utsname u;
	uname(&u);
	time_t now = time(NULL);
	char date[32];
	strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	printf("fidelity, %s: kernel %s (%s, the scenario's groups under one "
	       "with cpu.shares 262144), %u CPUs, HZ %u (%s), slice %ld us; "
	       "%u kernel runs per scenario;\nsim: cfsbw sim FILE --policy "
	       "upstream --scheduler %s%s%s --cpus %u --hz %u --seed S (median "
	       "over %u seeds; %s).  Targets: usage within %.0f%% of "
	       "the kernel's median, throttled periods within %.0f points of "
	       "its range.\n\n",
	       date, u.release, fk_cgroup_version(), cpus, hz, how, slice_us,
	       runs, cfsbw_sim_scheduler_name(sim_scheduler),
	       sim_balance_load == CFSBW_SIM_LOAD_PELT ? " --balance-load pelt"
						       : "",
	       sim_wake_scan == CFSBW_SIM_WAKE_UTIL ? " --wake-scan util" : "",
	       cpus, hz, runs,
	       scheduler ? "as asked" : "the simulator's default",
	       USAGE_TARGET_PCT, THROTTLE_TARGET_PTS);
	if (sim_first_period_measured) {
		printf("first_period: each simulated run's limited groups at "
		       "the phase of their first refresh in the kernel run "
		       "of the same number (read every 1 ms).\n\n");
	} else if (sim_first_period_set) {
		char fp[32];
		printf("first_period %s in every simulated run.\n\n",
		       cfsbw_sim_first_period_text(sim_first_period, fp,
						   sizeof fp));
	}
	printf("%-22s %-15s %-27s %7s   %-24s %5s   %-29s  %s\n", "", "",
	       "usage, cores", "", "throttled periods, %", "",
	       "throttled ms per period", "");
	printf("%-22s %-15s %6s %-13s %6s %7s   %-11s %5s %5s   %6s %-13s "
	       "%6s  %s\n",
	       "scenario", "group", "kernel", " (range)", "sim", "err%",
	       "kernel", "sim", "off", "kernel", " (range)", "sim", "verdict");
	/* and t[NR_VARIANTS]: the chosen model with each scenario's own
	 * first_period, under --first-period measured */
	struct tally t[NR_VARIANTS + 1] = {{0, 0, 0}};
	int failed = 0;
	size_t n = first < argc ? (size_t)(argc - first) : gl.gl_pathc;
	for (size_t i = 0; i < n; i++) {
		const char *path = first < argc ? argv[first + (int)i]
						: gl.gl_pathv[i];
		if (fidelity(path, runs, scale, cpus, hz, slice_us, t))
			failed = 1;
	}
	unsigned chosen = variant(sim_scheduler, sim_balance_load);
	const struct tally *a = &t[chosen];
	printf("\nfidelity: %u groups; usage within %.0f%%: %u; throttled "
	       "periods within %.0f points: %u (--scheduler %s --balance-load "
	       "%s --wake-scan %s)\n",
	       a->rows, USAGE_TARGET_PCT, a->usage_ok, THROTTLE_TARGET_PTS,
	       a->throttle_ok, cfsbw_sim_scheduler_name(sim_scheduler),
	       cfsbw_sim_balance_load_name(sim_balance_load),
	       cfsbw_sim_wake_scan_name(sim_wake_scan));
	for (unsigned m = 0; m < NR_VARIANTS; m++) {
		if (m == chosen)
			continue;
		printf("the same kernel runs against --scheduler %s "
		       "--balance-load %s --wake-scan %s: usage within %.0f%%: "
		       "%u; throttled periods within %.0f points: %u\n",
		       cfsbw_sim_scheduler_name(variant_scheduler(m)),
		       cfsbw_sim_balance_load_name(variant_load(m)),
		       cfsbw_sim_wake_scan_name(variant_wake_scan(m)),
		       USAGE_TARGET_PCT,
		       t[m].usage_ok, THROTTLE_TARGET_PTS, t[m].throttle_ok);
	}
	if (sim_first_period_measured)
		printf("the same kernel runs against the same model with each "
		       "scenario's own first_period, not the measured phases: "
		       "usage within %.0f%%: %u; throttled periods within "
		       "%.0f points: %u\n",
		       USAGE_TARGET_PCT, t[NR_VARIANTS].usage_ok,
		       THROTTLE_TARGET_PTS, t[NR_VARIANTS].throttle_ok);
	globfree(&gl);
	fk_teardown();
	return failed;
}
