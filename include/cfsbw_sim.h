/*
 * cfsbw_sim.h - the simulator's interface: scenarios, runs and their results.
 *
 * A scenario (parsed from text by cfsbw_sim_scenario_parse(), or built by hand)
 * describes a machine of 1..4096 virtual CPUs, a tree of groups configured
 * through the core's file interface, and tasks running workloads.  A run
 * (cfsbw_sim_create(), cfsbw_sim_run()) drives the unchanged core (cfsbw.h)
 * with a virtual clock under a model of the completely fair scheduler (SPEC
 * sections 3-7).  Same scenario, same seed: the same results, byte for
 * byte, on every machine (all decisions use integer arithmetic).
 *
 * The model does no I/O.  The report (report.c) writes to a caller's FILE;
 * trace files are read by the caller and handed over as text.
 *
 * Errors: 0 or a negative errno; parse and setup errors also fill a
 * struct cfsbw_sim_error naming the line and the offending text.
 */
#ifndef CFSBW_SIM_H
#define CFSBW_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfsbw.h"

#define CFSBW_SIM_MAX_CPUS 4096u
#define CFSBW_SIM_MIN_HZ 100u
#define CFSBW_SIM_MAX_HZ 10000u
#define CFSBW_SIM_DEFAULT_HZ 250u
#define CFSBW_SIM_MAX_COUNT 1000000u /* tasks per task line */
/* Bounds on what a scenario may ask (issue 16): input text read, simulated
 * time (every deadline stays far below INT64_MAX: workloads' times are at
 * most an hour, an exponential sample under 37 times its mean), events a
 * run may take (CFSBW_SIM_DEFAULT_MAX_EVENTS unless the scenario's
 * max_events says otherwise: a few minutes of this machine), and request
 * rates (a gap of at least 1 ns between arrivals). */
#define CFSBW_SIM_MAX_INPUT_BYTES (UINT64_C(64) << 20)
#define CFSBW_SIM_MAX_DURATION_NS (INT64_C(1) << 62)
#define CFSBW_SIM_DEFAULT_MAX_EVENTS UINT64_C(1000000000)
#define CFSBW_SIM_MAX_RATE_PER_SEC 1000000000u
#define CFSBW_SIM_MAX_WAKEUP_LATENCY_NS INT64_C(1000000000)
/* Linux's sched_migration_cost (sysctl_sched_migration_cost, 0.5 ms): a
 * task that ran this recently is cache hot and stays where it is. */
#define CFSBW_SIM_DEFAULT_MIGRATION_COST_NS INT64_C(500000)
#define CFSBW_SIM_MAX_MIGRATION_COST_NS INT64_C(1000000000)

/* The fair scheduler a run models. */
enum cfsbw_sim_scheduler {
	CFSBW_SIM_SCHED_CFS,   /* Linux before 6.6: sleeper credit, slices */
	CFSBW_SIM_SCHED_EEVDF, /* Linux 6.6 and later: lag, virtual deadlines */
};
/* "cfs" or "eevdf"; 0, or -EINVAL for another name. */
int cfsbw_sim_scheduler_parse(const char *name, enum cfsbw_sim_scheduler *out);
const char *cfsbw_sim_scheduler_name(enum cfsbw_sim_scheduler sched);
#define CFSBW_SIM_MAX_BASE_SLICE_NS INT64_C(1000000000)

/* The load that load balancing compares between CPUs. */
enum cfsbw_sim_balance_load {
	CFSBW_SIM_LOAD_INSTANT, /* the weight queued at the pass (default) */
	CFSBW_SIM_LOAD_PELT,    /* Linux's decayed average (PELT) */
};
/* "instant" or "pelt"; 0, or -EINVAL for another name. */
int cfsbw_sim_balance_load_parse(const char *name,
				 enum cfsbw_sim_balance_load *out);
const char *cfsbw_sim_balance_load_name(enum cfsbw_sim_balance_load load);

/* Where a waking task looks for an idle CPU when its own is busy. */
enum cfsbw_sim_wake_scan {
	CFSBW_SIM_WAKE_ALL,  /* every CPU, the first idle after its own
			      * (default) */
	CFSBW_SIM_WAKE_UTIL, /* Linux 6.0 and later: the CPU it last woke
			      * from if idle, then a scan its cache domain's
			      * averaged utilisation cuts short (SIS_UTIL) */
};
/* "all" or "util"; 0, or -EINVAL for another name. */
int cfsbw_sim_wake_scan_parse(const char *name, enum cfsbw_sim_wake_scan *out);
const char *cfsbw_sim_wake_scan_name(enum cfsbw_sim_wake_scan scan);

/* The scenario's first_period: whole (0), N% (1..100), or random. */
#define CFSBW_SIM_FIRST_PERIOD_RANDOM (-1)
/* "whole", "random" or "N%" (1 <= N <= 100) into *out; 0 or -EINVAL. */
int cfsbw_sim_first_period_parse(const char *text, int *out);
/* As the directive writes it ("whole", "random", "N%"), in buf if need be
 * (16 bytes are enough). */
const char *cfsbw_sim_first_period_text(int fp, char *buf, size_t size);

/* Workloads: X(enum suffix, name in scenario files) */
#define CFSBW_SIM_WORKLOAD_MAP(X)                                              \
	X(BUSY, "busy")                                                        \
	X(DUTY, "duty")                                                        \
	X(REQUESTS, "requests")                                                \
	X(TRACE, "trace")

enum cfsbw_sim_workload {
#define CFSBW_SIM_WORKLOAD_ENUM(e, name) CFSBW_SIM_WL_##e,
	CFSBW_SIM_WORKLOAD_MAP(CFSBW_SIM_WORKLOAD_ENUM)
#undef CFSBW_SIM_WORKLOAD_ENUM
	CFSBW_SIM_WL_COUNT
};

const char *cfsbw_sim_workload_name(enum cfsbw_sim_workload wl);

/* Where an error is and what it is: "LINE: MSG" (line 0: no line). */
struct cfsbw_sim_error {
	unsigned line;
	char msg[320];
};

/* One "file=value" of a group line, written through cfsbw_file_write(). */
struct cfsbw_sim_setting {
	char *file;
	char *value;
};

struct cfsbw_sim_group_spec {
	char *path;
	unsigned line;
	struct cfsbw_sim_setting *settings;
	size_t nr_settings;
	/* > 0: where this group's period grid lies, ns from the start (its
	 * first refresh at that moment, even more than a period after the
	 * start, then every period), in place of the
	 * scenario's first_period: a kernel run's own phase, measured, given
	 * to the simulated run (bench_fidelity --first-period measured).
	 * Not a directive of scenario files; 0: the scenario's. */
	int64_t first_period_ns;
};

struct cfsbw_sim_sysctl_spec {
	char *name;
	char *value;
	unsigned line;
};

/*
 * One step of a trace: run this much CPU, then sleep this long; or, when
 * timer_ns > 0 (rt-app's `timer`), wait for the task's timer instead: its
 * next expiry, timer_ns after the last one.  A task that is late finds its
 * next expiry moved to now (relative, rt-app's default) or kept on its grid
 * (timer_absolute).  The time from an expiry to the end of the next run is
 * recorded as a latency, as for `duty`.
 */
struct cfsbw_sim_trace_step {
	int64_t run_ns;
	int64_t sleep_ns;
	int64_t timer_ns;
	bool timer_absolute;
	/* A recorded trace's wake-up, tied to the progress of the whole
	 * trace (replay.c): the thread wakes gate_lag_ns after the line's
	 * threads have completed gate_progress_ns of CPU in all (-1: plain
	 * sleep_ns).  So a process that waited for its children, or was
	 * started by its parent, waits for their work, not for a time. */
	int64_t gate_progress_ns;
	int64_t gate_lag_ns;
};

/*
 * One thread of a replayed trace (src/sim/replay.c): it first runs at
 * start_ns, then runs and sleeps its steps in order, closed loop (a step
 * that is delayed delays the ones after it, as for the real program), and
 * exits after the last one unless loop.
 */
struct cfsbw_sim_trace_thread {
	char *name; /* for reports: "cc1/4242", an rt-app task's name */
	int64_t start_ns;
	int64_t start_gate_progress_ns; /* its start, tied to progress: -1 */
	int64_t start_gate_lag_ns;      /* no tie, start_ns as it is */
	int64_t end_ns; /* it exits at its first step past this (0: never) */
	struct cfsbw_sim_trace_step *steps;
	size_t nr_steps;
	bool loop;
	bool shared_steps; /* steps belong to an earlier thread (instances) */
};

struct cfsbw_sim_task_spec {
	unsigned line;
	char *group; /* path of an existing group */
	char *text;  /* the workload as written, for reports */
	enum cfsbw_sim_workload workload;
	unsigned count; /* identical tasks (count=N), default 1 */
	/* duty: run run_ns of CPU, sleep sleep_ns, repeat; the first cycle
	 * starts at phase_ns, or at a random point of the first cycle. */
	int64_t run_ns;
	int64_t sleep_ns;
	int64_t phase_ns;
	bool phase_random;
	/* requests: Poisson arrivals with mean gap mean_gap_ns (1 s / rate),
	 * each needing service_ns of CPU (the mean, if service_exp). */
	int64_t mean_gap_ns;
	int64_t service_ns;
	bool service_exp;
	bool arrivals_periodic; /* arrivals=periodic: every mean_gap_ns */
	/* trace: steps read from trace_file by the caller. */
	char *trace_file;
	struct cfsbw_sim_trace_step *trace;
	size_t trace_len;
	bool trace_loop;
	/* or, from a recorded trace, rt-app JSON or perf
	 * (cfsbw_sim_replay_parse()): one thread per task; task k of the line
	 * replays thread k modulo nr_threads, and count is count=N times
	 * nr_threads */
	struct cfsbw_sim_trace_thread *threads;
	size_t nr_threads;
	const char *trace_format; /* "csv", "cfsbw", "perf", "rt-app" */
	bool trace_gated; /* threads' wake-ups tied to progress (recorded
			   * traces); used when each thread is replayed once */
	/* wakeups=recorded: each wake-up of a recorded trace at the time it
	 * was recorded, whatever the replay's progress (open loop: a
	 * service's requests arrive when they arrive); the time from each
	 * wake-up (and thread start) to the end of the run after it is the
	 * line's latency.  Default: tied to progress (trace_gated). */
	bool trace_open;
};

struct cfsbw_sim_scenario {
	unsigned nr_cpus;         /* default 1 */
	unsigned hz;              /* default CFSBW_SIM_DEFAULT_HZ */
	int64_t duration_ns;      /* default 10 s */
	uint64_t seed;            /* default 1 */
	uint64_t max_events;      /* CFSBW_SIM_DEFAULT_MAX_EVENTS */
	enum cfsbw_policy policy; /* default v4 */
	/* How late a sleeping task's own timer makes it runnable (Linux's
	 * timer slack plus the wake-up of an idle CPU); default 0 */
	int64_t wakeup_latency_ns;
	/* How long after it last ran a queued task counts as cache hot: load
	 * balancing leaves it where it is until balancing has failed twice
	 * (Linux's sched_migration_cost and cache_nice_tries); 0: never hot.
	 * Default CFSBW_SIM_DEFAULT_MIGRATION_COST_NS. */
	int64_t migration_cost_ns;
	/* The fair scheduler: CFS (SPEC section 7, the seeds' Linux; default)
	 * or EEVDF (Linux 6.6 and later), and EEVDF's slice, each entity's
	 * request (0: 0.7 ms times 1 + log2 of the CPUs up to 8, as Linux
	 * scales its base_slice). */
	enum cfsbw_sim_scheduler scheduler;
	int64_t base_slice_ns;
	/* What load balancing compares: the weight queued at each CPU at the
	 * pass (default), or its decayed average as Linux keeps it (a task
	 * that sleeps still weighs on its CPU for tens of ms; pelt.c). */
	enum cfsbw_sim_balance_load balance_load;
	/* Where a woken task whose CPU is busy looks for an idle one: any
	 * CPU (default), or as Linux since 6.0 does, less the busier the
	 * machine (machine.c, select_cpu). */
	enum cfsbw_sim_wake_scan wake_scan;
	/* Where each limited group's first period ends (R10): a whole
	 * period after its first task (0, default); at that percent of a
	 * period from the start (1..100), the grid k periods on; or at a
	 * point of the period drawn for the group from the seed
	 * (CFSBW_SIM_FIRST_PERIOD_RANDOM), as Linux since 6.4 starts each
	 * group's period timer at a random moment (init_cfs_bandwidth). */
	int first_period;
	/* The run ends once every task has exited (replays), at the latest
	 * at duration_ns; the report's duration is then the last exit. */
	bool until_done;
	struct cfsbw_sim_sysctl_spec *sysctls;
	size_t nr_sysctls;
	struct cfsbw_sim_group_spec *groups;
	size_t nr_groups;
	struct cfsbw_sim_task_spec *tasks;
	size_t nr_tasks;
	/* Memory for the machine and the core's tree (NULL: the C library's);
	 * parsing uses the C library.  Must outlive the run. */
	const struct cfsbw_allocator *allocator;
};

/* Defaults as above. */
void cfsbw_sim_scenario_init(struct cfsbw_sim_scenario *sc);
/*
 * Parse scenario text (SPEC section 7 / docs/sim.md) into *sc, which must
 * have been initialised.  Returns 0, -EINVAL (err filled) or -ENOMEM.
 * Trace workloads only name their file: load each with
 * cfsbw_sim_trace_parse() before cfsbw_sim_create().
 */
int cfsbw_sim_scenario_parse(struct cfsbw_sim_scenario *sc, const char *text,
			     struct cfsbw_sim_error *err);
/* Parse trace CSV text ("run_us,sleep_us" lines) into task t. */
int cfsbw_sim_trace_parse(struct cfsbw_sim_task_spec *t, const char *text,
			  struct cfsbw_sim_error *err);
/*
 * Parse any trace text into task t, its format told by its first line:
 * `cfsbw-trace 1` (cfsbw record), a JSON object (rt-app), `perf sched
 * timehist` output, else run_us,sleep_us CSV.  Errors name the line of the
 * trace (err->line) and the offending text.  Returns 0, -EINVAL, -ENOMEM.
 */
int cfsbw_sim_replay_parse(struct cfsbw_sim_task_spec *t, const char *text,
			   struct cfsbw_sim_error *err);
/* The same, one format each (src/sim/trace_cfsbw.c, trace_perf.c,
 * rtapp.c); they fill t->threads and t->nr_threads. */
int cfsbw_sim_replay_parse_cfsbw(struct cfsbw_sim_task_spec *t,
				 const char *text, struct cfsbw_sim_error *err);
int cfsbw_sim_replay_parse_perf(struct cfsbw_sim_task_spec *t, const char *text,
				struct cfsbw_sim_error *err);
int cfsbw_sim_replay_parse_rtapp(struct cfsbw_sim_task_spec *t,
				 const char *text, struct cfsbw_sim_error *err);
void cfsbw_sim_trace_threads_free(struct cfsbw_sim_task_spec *t);
void cfsbw_sim_scenario_free(struct cfsbw_sim_scenario *sc);
/*
 * Whether a run of sc draws anything from its seed: a requests task with
 * Poisson arrivals or exponential service times, a duty task with a
 * random phase, random first periods.  When not, every seed gives the
 * same run, byte for byte, so one run is the whole answer (cfsbw plan
 * runs one).
 */
bool cfsbw_sim_scenario_is_random(const struct cfsbw_sim_scenario *sc);
/*
 * The model's settings that are not the defaults, as the reports' first
 * lines name them: ", balance load pelt, wake scan util, first period
 * random" ("" for the defaults), with ", scheduler eevdf" first when
 * with_scheduler (for a line that does not always name the scheduler).
 * In buf (96 bytes are enough).
 */
const char *cfsbw_sim_model_text(const struct cfsbw_sim_scenario *sc,
				 bool with_scheduler, char *buf, size_t size);

struct cfsbw_sim;

/*
 * Build the machine: the core's tree with the scenario's policy, its
 * sysctls and groups (each setting through cfsbw_file_write(), so R2's
 * rules apply and an error names the line), and the tasks.  The caller owns
 * *out (cfsbw_sim_free()); sc must outlive it.  Returns 0, -EINVAL, -ENOMEM.
 */
int cfsbw_sim_create(const struct cfsbw_sim_scenario *sc,
		     struct cfsbw_sim **out, struct cfsbw_sim_error *err);
void cfsbw_sim_free(struct cfsbw_sim *s);

/* One period of one group, for --timeline. */
struct cfsbw_sim_timeline_row {
	const char *group;
	int64_t start_ns;
	int64_t period_ns;
	int64_t used_ns;             /* CPU time used by the group's subtree */
	unsigned throttled_accounts; /* accounts that throttled in the period */
	int64_t throttled_time_ns;   /* cpu.stat throttled_time growth */
	/* the group's quota and period at the row's end (hardlimits: each
	 * CPU's runtime); quota -1: none.  The last row of a run may be
	 * shorter than the group's period. */
	int64_t quota_ns, quota_period_ns;
};

typedef void cfsbw_sim_timeline_fn(void *ctx,
				   const struct cfsbw_sim_timeline_row *row);
/* Before cfsbw_sim_run(): call fn once per group per period of that group. */
void cfsbw_sim_set_timeline(struct cfsbw_sim *s, cfsbw_sim_timeline_fn *fn,
			    void *ctx);

/*
 * Run the scenario to its end.  Returns 0.  Memory that runs out during a
 * run (latency records) costs the records concerned, counted as
 * latency_lost, never the run.
 */
int cfsbw_sim_run(struct cfsbw_sim *s);

/* Results, after cfsbw_sim_run(). */
struct cfsbw_sim_group_result {
	const char *path;
	struct cfsbw_group *group;
	int64_t usage_ns; /* CPU time of the group's whole subtree */
	int64_t quota_ns; /* CFSBW_RUNTIME_INF: unlimited */
	int64_t period_ns;
	unsigned shares;
	uint64_t throttles; /* throttle events of its accounts (R7) */
	struct cfsbw_stats stats;
};

struct cfsbw_sim_latency {
	uint64_t count;
	int64_t p50_ns, p99_ns, p999_ns, max_ns, mean_ns;
};

/* One task line of the scenario, summed over its count tasks. */
struct cfsbw_sim_line_result {
	const struct cfsbw_sim_task_spec *spec;
	int64_t cpu_ns;       /* running */
	int64_t wait_ns;      /* runnable, not running, not throttled */
	int64_t throttled_ns; /* runnable under a throttled account (R7, R11) */
	int64_t sleep_ns;
	uint64_t migrations;
	uint64_t completed;    /* duty cycles, requests, trace steps done */
	uint64_t pending;      /* requests queued at the end */
	uint64_t latency_lost; /* latencies not recorded for want of memory */
	uint64_t exited;       /* tasks that finished (trace replays) */
	int64_t last_exit_ns;  /* when the last of them did */
	struct cfsbw_sim_latency latency;
};

struct cfsbw_sim_totals {
	unsigned nr_cpus;
	unsigned hz;
	int64_t duration_ns;
	uint64_t seed;
	enum cfsbw_policy policy;
	enum cfsbw_sim_scheduler scheduler;
	enum cfsbw_sim_balance_load balance_load;
	enum cfsbw_sim_wake_scan wake_scan;
	int64_t slice_ns;
	uint64_t events;     /* events processed */
	uint64_t switches;   /* context switches */
	uint64_t migrations; /* load-balancing pulls */
	int64_t busy_ns;     /* CPU time used, all CPUs */
};

size_t cfsbw_sim_nr_groups(const struct cfsbw_sim *s);
void cfsbw_sim_group_result(const struct cfsbw_sim *s, size_t i,
			    struct cfsbw_sim_group_result *out);
/* The result of the group at path; -ENOENT if none. */
int cfsbw_sim_group_result_by_path(const struct cfsbw_sim *s, const char *path,
				   struct cfsbw_sim_group_result *out);
size_t cfsbw_sim_nr_lines(const struct cfsbw_sim *s);
void cfsbw_sim_line_result(const struct cfsbw_sim *s, size_t i,
			   struct cfsbw_sim_line_result *out);
void cfsbw_sim_totals(const struct cfsbw_sim *s, struct cfsbw_sim_totals *out);
struct cfsbw_tree *cfsbw_sim_tree(struct cfsbw_sim *s);

/* report.c: the text report and the JSON object of `cfsbw sim`. */
void cfsbw_sim_report_text(const struct cfsbw_sim *s, const char *name,
			   FILE *f);
void cfsbw_sim_report_json(const struct cfsbw_sim *s, const char *name,
			   FILE *f);

/*
 * sweep.c: one run's answer about one group's limit, for sweeps and plans
 * (plain data: it crosses a pipe from the command's workers unchanged).
 * Lines are the task lines with latencies or exits, in scenario order,
 * the first 64 (a point is some 4 KB; tables print fewer, cli.h).
 */
#define CFSBW_SIM_POINT_MAX_LINES 64

struct cfsbw_sim_point_line {
	unsigned line;  /* the scenario's line */
	uint64_t count; /* latencies recorded */
	int64_t p50_ns, p99_ns, p999_ns;
	uint64_t exited;      /* replays: threads that finished */
	int64_t last_exit_ns; /* and when the last did */
	int64_t cpu_ns;
};

struct cfsbw_sim_point {
	int64_t span_ns, usage_ns, quota_ns, period_ns; /* quota -1: none */
	uint64_t nr_periods, nr_throttled;
	int64_t throttled_time_ns;
	size_t nr_lines;
	/* all such lines under the group: more than nr_lines when the rest
	 * did not fit (a sweep says so; a plan with a latency target refuses) */
	size_t nr_lines_all;
	struct cfsbw_sim_point_line lines[CFSBW_SIM_POINT_MAX_LINES];
};

/* Measure group (a path) after cfsbw_sim_run(); -1 when there is no such group.
 */
int cfsbw_sim_point_measure(const struct cfsbw_sim *s, const char *group,
			    struct cfsbw_sim_point *out);
/* nr_throttled / nr_periods in hundredths of a percent. */
int64_t cfsbw_sim_point_throttled_bp(const struct cfsbw_sim_point *p);

/* Cores as fixed point with 6 decimals: used_ns / span_ns * 1e6. */
int64_t cfsbw_sim_cores_micro(int64_t used_ns, int64_t span_ns);

#endif /* CFSBW_SIM_H */
