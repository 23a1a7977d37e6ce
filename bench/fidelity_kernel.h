/*
 * fidelity_kernel.h - a scenario of `cfsbw sim` run on this machine's
 * kernel: its groups become cgroups (v1 cpu + cpuacct, or v2 cpu), its
 * tasks processes that do what the simulator's workloads do.  Used by
 * bench/bench_fidelity.c only; needs root and a writable cgroup cpu
 * controller.  Everything made here is removed again, on error, on
 * SIGINT/SIGTERM/SIGHUP too; a run killed with SIGKILL leaves its cgroups,
 * which the next run removes (their owner is dead).
 */
#ifndef CFSBW_BENCH_FIDELITY_KERNEL_H
#define CFSBW_BENCH_FIDELITY_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfsbw_sim.h"

/* What the kernel did to one group of the scenario over the run. */
struct fk_group {
	int64_t usage_ns;      /* CPU time of its subtree (cpuacct.usage) */
	uint64_t nr_periods;   /* cpu.stat growth over the run */
	uint64_t nr_throttled;
	int64_t throttled_ns;
	/* with fk_measure_first_refresh(true): when its first refresh came
	 * (cpu.stat's nr_periods grew), ns after the tasks started; -1: none
	 * seen (no limit, or not measured) */
	int64_t first_refresh_ns;
};

/* One task line over the run: its latencies (duty cycles, requests), and
 * what its tasks' /proc/PID/sched and schedstat say, summed over them. */
struct fk_line {
	uint64_t count;
	int64_t p50_ns, p99_ns;
	uint64_t migrations; /* se.nr_migrations */
	int64_t run_delay_ns; /* time runnable, waiting for a CPU */
	bool sched_read;      /* false: /proc/PID/sched or schedstat missing */
};

/* What else the machine did during the run. */
struct fk_load {
	double others_cores; /* CPU busy outside the scenario, cores */
	double steal_cores;  /* time the hypervisor took, cores */
	double loadavg1;     /* /proc/loadavg at the start */
	/* From the tasks' start to the end snapshot: the kernel's usage and
	 * its tasks' rates are over this, which a late wake-up of the
	 * benchmark would make longer than the run asked */
	int64_t wall_ns;
	double scenario_cores; /* its groups together, over wall_ns */
};

/*
 * Find the cgroup cpu controller, remove what dead runs left, and make the
 * parent of this process's groups, with the largest cpu.shares (or
 * cpu.weight) so that tasks outside it barely compete.  Installs the
 * cleanup on SIGINT, SIGTERM and SIGHUP.  Returns 0, or -1 with why in
 * err (no cgroup, not root).
 */
int fk_setup(char *err, size_t errlen);

/* "cgroup v1" or "cgroup v2" (after fk_setup). */
const char *fk_cgroup_version(void);

/*
 * Run sc on the kernel for duration_ns of wall time: make its groups
 * (each setting written as the scenario says), start its tasks together,
 * measure, kill them and remove the groups.  groups[i] is sc->groups[i],
 * lines[i] sc->tasks[i].
 * Random phases and arrivals are drawn from seed.  Returns 0, or -1 with
 * the scenario line and the kernel's error in err.
 */
int fk_run(const struct cfsbw_sim_scenario *sc, int64_t duration_ns,
	   uint64_t seed, struct fk_group *groups, struct fk_line *lines,
	   struct fk_load *load, char *err, size_t errlen);

/*
 * Whether fk_run watches each limited group's cpu.stat, every 1 ms from
 * the start until its first refresh (at most 1.1 s: the longest period),
 * to give fk_group.first_refresh_ns.  Off by default: the watch takes a
 * little CPU beside the scenario's.
 */
void fk_measure_first_refresh(bool on);

/* Remove the parent group (at the end; also done on a signal). */
void fk_teardown(void);

#endif
