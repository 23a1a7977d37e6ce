/*
 * test_sim_inputs.c - real workloads in (issue 14, item 2b): the cfsbw
 * trace format, perf sched timehist output and rt-app JSON, read into
 * threads that replay their runs and sleeps closed loop; every bad input
 * names its line; a replay with no limit gives back the recorded CPU.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "cfsbw_sim.h"

/* One task line replaying text; *spec filled, 0 or the parse error. */
static int parse(const char *text, struct cfsbw_sim_scenario *sc,
		 struct cfsbw_sim_error *err)
{
	cfsbw_sim_scenario_init(sc);
	if (cfsbw_sim_scenario_parse(sc,
				     "cpus 2\ngroup /app\ntask /app trace "
				     "file=x\n",
				     err))
		return -100;
	return cfsbw_sim_replay_parse(&sc->tasks[0], text, err);
}

#define ASSERT_BAD(text, want_line, want_text)                                 \
	do {                                                                   \
		struct cfsbw_sim_scenario sc_;                                 \
		struct cfsbw_sim_error e_;                                     \
		ASSERT_INT(parse(text, &sc_, &e_), ==, -EINVAL);               \
		cfsbw_sim_scenario_free(&sc_);                                 \
		ASSERT_UINT(e_.line, ==, want_line);                           \
		ASSERT_CONTAINS(e_.msg, want_text);                            \
	} while (0)

static const char cfsbw_trace[] =
	"cfsbw-trace 1\n"
	"# recorded by hand\n"
	"thread 10 10 app\n"
	"thread 11 10 worker\n"
	"run 10 0 20000000\n"              /* 20 ms, blocks */
	"run 11 1000000 31000000 P\n"      /* 30 ms, preempted */
	"run 11 35000000 45000000\n"       /* +10 ms: one 40 ms burst */
	"run 10 70000000 90000000\n"       /* after 50 ms of sleep */
	"exit 11 50000000\n"
	"end 100000000\n";

TEST(cfsbw_trace_threads_and_steps, "issue-14")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse(cfsbw_trace, &sc, &err), ==, 0);
	const struct cfsbw_sim_task_spec *t = &sc.tasks[0];
	ASSERT_UINT(t->nr_threads, ==, 2);
	ASSERT_UINT(t->count, ==, 2);
	ASSERT_STR(t->trace_format, "cfsbw");
	const struct cfsbw_sim_trace_thread *a = &t->threads[0],
					    *w = &t->threads[1];
	ASSERT_STR(a->name, "app/10");
	ASSERT_INT(a->start_ns, ==, 0);
	ASSERT_UINT(a->nr_steps, ==, 2);
	ASSERT_INT(a->steps[0].run_ns, ==, 20000000);
	ASSERT_INT(a->steps[0].sleep_ns, ==, 50000000);
	ASSERT_INT(a->steps[1].run_ns, ==, 20000000);
	/* a P run is continued by the next: the 4 ms gap was a wait */
	ASSERT_INT(w->start_ns, ==, 1000000);
	ASSERT_UINT(w->nr_steps, ==, 1);
	ASSERT_INT(w->steps[0].run_ns, ==, 40000000);
	cfsbw_sim_scenario_free(&sc);
}

TEST(cfsbw_trace_bad_input_names_the_line, "issue-14")
{
	ASSERT_BAD("cfsbw-trace 2\n", 1, "reads version 1");
	ASSERT_BAD("thread 1 1 x\nrun 1 0 5\n", 1,
		   "expected 'cfsbw-trace 1'");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nsleep 1 5\n", 3,
		   "unknown record 'sleep'");
	ASSERT_BAD("cfsbw-trace 1\nrun 7 0 5\n", 2, "thread 7: no 'thread");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nrun 1 0 10\nrun 1 5 20\n", 4,
		   "before its previous run ended");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nrun 1 10 5\n", 3,
		   "ends (5) before it starts (10)");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nrun 1 0 1e6\n", 3,
		   "times are integers");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nrun 1 0 5 Q\n", 3,
		   "expected 'run TID START_NS END_NS [P]'");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nexit 1 5\nrun 1 6 9\n", 4,
		   "after its exit");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nthread 1 1 x\n", 3,
		   "appears twice");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\nend 5\nrun 1 0 5\n", 4,
		   "after the trace's end");
	ASSERT_BAD("cfsbw-trace 1\nthread 1 1 x\n", 0, "no thread runs");
}

static const char perf_text[] =
	"Samples do not have callchains.\n"
	"           time    cpu  task name                       wait time  sch delay   run time  state\n"
	"                        [tid/pid]                          (msec)     (msec)     (msec)       \n"
	"--------------- ------  ------------------------------  ---------  ---------  ---------  -----\n"
	"     100.010000 [0000]  web server[42]                      0.000      0.000     10.000      R \n"
	"     100.012000 [0000]  <idle>                              0.000      0.000      2.000      I \n"
	"     100.015000 [0000]  web server[42]                      5.000      5.000      3.000      S \n"
	"     100.030000 [0001]  cc1[43/40]                          0.000      0.000      1.000      S \n"
	"     100.045000 [0001]  web server[42]                     20.000      2.000     10.000      X \n"
	"     100.046000 [0000]  :-1[-1/40]                          0.000      0.000      0.500      Z \n"
	"\n"
	"Runtime summary\n";

TEST(perf_timehist_threads_and_steps, "issue-14")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse(perf_text, &sc, &err), ==, 0);
	const struct cfsbw_sim_task_spec *t = &sc.tasks[0];
	ASSERT_STR(t->trace_format, "perf");
	ASSERT_UINT(t->nr_threads, ==, 3);
	const struct cfsbw_sim_trace_thread *web = &t->threads[0];
	ASSERT_STR(web->name, "web server/42");
	/* the earliest run starts at 100.000 s: time 0 */
	ASSERT_INT(web->start_ns, ==, 0);
	ASSERT_UINT(web->nr_steps, ==, 2);
	/* preempted (R) after 10 ms, 3 ms more: one 13 ms burst, then it
	 * slept 20 - 2 ms (the 2 ms of sch delay were a wait) */
	ASSERT_INT(web->steps[0].run_ns, ==, 13000000);
	ASSERT_INT(web->steps[0].sleep_ns, ==, 18000000);
	ASSERT_INT(web->steps[1].run_ns, ==, 10000000);
	ASSERT_STR(t->threads[1].name, "cc1/43");
	ASSERT_INT(t->threads[1].start_ns, ==, 29000000);
	/* a thread perf could not name keeps its run, on its own */
	ASSERT_STR(t->threads[2].name, ":-1/-1");
	ASSERT_INT(t->threads[2].steps[0].run_ns, ==, 500000);
	cfsbw_sim_scenario_free(&sc);
}

TEST(perf_timehist_bad_input_names_the_line, "issue-14")
{
	static const char head[] =
		"           time    cpu  task name    wait time  sch delay   run time\n"
		"--------------- ------  ---------    ---------  ---------  ---------\n";
	char buf[1024];
	snprintf(buf, sizeof buf, "%s  1.0 [0000]  a[1]  0.1  0.1\n", head);
	ASSERT_BAD(buf, 3, "expected 'TIME [CPU] COMM[TID]");
	snprintf(buf, sizeof buf, "%s  1.0 [0000]  a[1]  x  0.1  0.2\n", head);
	ASSERT_BAD(buf, 3, "times are decimals");
	snprintf(buf, sizeof buf,
		 "%s  1.0 [0000]  a[1]  awakened: b[2]\n", head);
	ASSERT_BAD(buf, 3, "without -w and -M");
	snprintf(buf, sizeof buf,
		 "%s  1.000 [0000]  a[1]  0  0  0.5\n  1.001 [0000]  a[1]  0  0  0.5\n"
		 "  1.0009 [0000]  a[1]  0  0  0.5\n", head);
	ASSERT_BAD(buf, 5, "before its previous run ended");
	ASSERT_BAD("           time    cpu  task name\n  1.0 [0] a[1] 0 0 1\n", 2,
		   "no header");
}

static const char rtapp_json[] =
	"{\n"
	"  /* a comment, as rt-app's examples have */\n"
	"  \"global\": {\"duration\": 2, \"calibration\": \"CPU0\",\n"
	"             \"default_policy\": \"SCHED_OTHER\"},\n"
	"  \"tasks\": {\n"
	"    \"req\": {\"loop\": -1, \"run\": 30000,\n"
	"            \"timer\": {\"ref\": \"t\", \"period\": 1000000}},\n"
	"    \"bg\": {\"instance\": 2, \"delay\": 5000, \"phases\": {\n"
	"      \"p1\": {\"loop\": 3, \"run0\": 5000, \"runtime1\": 1000,\n"
	"             \"sleep\": 4000},\n"
	"      \"p2\": {\"sleep\": 1000, \"run\": 2000}}}\n"
	"  }\n"
	"}\n";

TEST(rtapp_tasks_phases_loops_timers, "issue-14")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse(rtapp_json, &sc, &err), ==, 0);
	const struct cfsbw_sim_task_spec *t = &sc.tasks[0];
	ASSERT_STR(t->trace_format, "rt-app");
	ASSERT_UINT(t->nr_threads, ==, 3);
	const struct cfsbw_sim_trace_thread *req = &t->threads[0];
	ASSERT_TRUE(req->loop);
	ASSERT_INT(req->end_ns, ==, 2000000000);
	ASSERT_UINT(req->nr_steps, ==, 1);
	ASSERT_INT(req->steps[0].run_ns, ==, 30000000);
	ASSERT_INT(req->steps[0].timer_ns, ==, 1000000000);
	ASSERT_TRUE(!req->steps[0].timer_absolute);
	const struct cfsbw_sim_trace_thread *bg = &t->threads[1];
	ASSERT_TRUE(!bg->loop);
	ASSERT_INT(bg->start_ns, ==, 5000000);
	/* p1 three times (6 ms run, 4 ms sleep), p2's sleep joins the
	 * last one's, then its 2 ms run */
	ASSERT_UINT(bg->nr_steps, ==, 4);
	ASSERT_INT(bg->steps[0].run_ns, ==, 6000000);
	ASSERT_INT(bg->steps[0].sleep_ns, ==, 4000000);
	ASSERT_INT(bg->steps[2].sleep_ns, ==, 5000000);
	ASSERT_INT(bg->steps[3].run_ns, ==, 2000000);
	ASSERT_TRUE(t->threads[2].steps == bg->steps); /* instance 2 */
	cfsbw_sim_scenario_free(&sc);
}

TEST(rtapp_unsupported_fields_are_errors, "issue-14")
{
	ASSERT_BAD("{\"tasks\": {\"a\": {\"run\": 10,\n \"lock\": \"m\"}}}", 2,
		   "event 'lock': not supported");
	ASSERT_BAD("{\"tasks\": {\"a\": {\"run\": 10, \"priority\": 5}}}", 1,
		   "field 'priority'");
	ASSERT_BAD("{\"global\": {\"logdir\": \"/tmp\",\n\"frobnicate\": 1},\n"
		   "\"tasks\": {\"a\": {\"run\": 10}}}",
		   2, "global field 'frobnicate'");
	ASSERT_BAD("{\"tasks\": {\"a\": {\"policy\": \"SCHED_FIFO\", \"run\": 1}}}",
		   1, "only SCHED_OTHER");
	ASSERT_BAD("{\"tasks\": {\"a\": {\"run\": 1, \"timer\": {\"ref\": \"x\", "
		   "\"period\": 10}, \"run1\": 1,\n\"timer1\": {\"ref\": \"y\", "
		   "\"period\": 10}}}}",
		   2, "one timer per task");
	ASSERT_BAD("{\"tasks\": {\"a\": {\"run\": -5}}}", 1, "microseconds");
	ASSERT_BAD("{\"tasks\": {\"a\": {\"sleep\": 5}}}", 1, "no run");
	ASSERT_BAD("{\"tasks\": {\"a\": {\"run\": 5}},\n\"x\": 1}", 2,
		   "field 'x'");
	ASSERT_BAD("{\"tasks\": {\"a\": {\"run\": 5\n\n}", 3, "expected ','");
	ASSERT_BAD("{\"tasks\":\n {\"a\": [1, 2}}", 2, "expected ','");
	ASSERT_BAD("{\"tasks\": {}}", 1, "one or more tasks");
	/* Runs with no sleep between them fill no steps: the loops are
	 * bounded by the events they expand to (fuzz_replay's hang). */
	ASSERT_BAD("{\"tasks\": {\"req\": {\"loop\": 30000, \"phases\": "
		   "{\"p1\": {\"loop\": 3076588588745941901,\n\"run\": 5040, "
		   "\"sleep\": 0}}}}}",
		   2, "more than 8000000 events");
	/* Nor are events alone a bound: a phase with none, looped 3e8
	 * times in a task looped 3e4 times, spun 9e12 passes (fuzz_replay's
	 * second hang); each pass counts, named at its loop's line. */
	ASSERT_BAD("{\"tasks\": {\"req\": {\"loop\": 30000, \"phases\": "
		   "{\"p1\":\n{\"loop\": 307658850}}}}}",
		   2, "more than 8000000 events and loop passes");
	ASSERT_BAD("{\"tasks\": {\"req\":\n{\"loop\": 1000000000000, "
		   "\"phases\": {}}}}",
		   2, "lower its loops");
}

/* Build and run sc; the line's result. */
static int run(struct cfsbw_sim_scenario *sc, struct cfsbw_sim_line_result *out,
	       struct cfsbw_sim_group_result *g)
{
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s;
	int rc = cfsbw_sim_create(sc, &s, &err);
	if (rc)
		return rc;
	cfsbw_sim_run(s);
	cfsbw_sim_line_result(s, 0, out);
	if (g)
		cfsbw_sim_group_result_by_path(s, "/app", g);
	cfsbw_sim_free(s);
	return 0;
}

/*
 * A trace generated here: 12 threads on 2 CPUs, runs of 0.1 to 20 ms and
 * sleeps of 0 to 50 ms drawn from a fixed generator, some preempted.
 */
static char *generate_trace(int64_t *cpu_ns)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	uint64_t x = 88172645463325252u;
	len += (size_t)snprintf(buf + len, cap - len, "cfsbw-trace 1\n");
	for (int th = 0; th < 12; th++)
		len += (size_t)snprintf(buf + len, cap - len,
					"thread %d 100 gen\n", 100 + th);
	*cpu_ns = 0;
	for (int th = 0; th < 12; th++) {
		int64_t now = th * 1000000;
		for (int i = 0; i < 300; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int64_t run = 100000 + (int64_t)(x % 20000000);
			int64_t gap = (int64_t)((x >> 32) % 50000000);
			bool preempted = (x >> 60) == 0;
			len += (size_t)snprintf(buf + len, cap - len,
						"run %d %lld %lld%s\n", 100 + th,
						(long long)now,
						(long long)(now + run),
						preempted ? " P" : "");
			*cpu_ns += run;
			now += run + gap;
		}
	}
	return buf;
}

TEST(replay_unlimited_gives_back_the_recorded_cpu, "issue-14")
{
	int64_t recorded;
	char *text = generate_trace(&recorded);
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse(text, &sc, &err), ==, 0);
	free(text);
	sc.duration_ns = 3600 * CFSBW_NSEC_PER_SEC;
	sc.until_done = true;
	struct cfsbw_sim_line_result r;
	ASSERT_INT(run(&sc, &r, NULL), ==, 0);
	/* every thread ran to its end, within 2% of the recorded CPU
	 * (exactly: nothing is lost) */
	ASSERT_UINT(r.exited, ==, 12);
	ASSERT_NEAR((double)r.cpu_ns, (double)recorded, 0.02 * (double)recorded);
	ASSERT_INT(r.cpu_ns, ==, recorded);
	cfsbw_sim_scenario_free(&sc);
}

/* One thread: 30 ms of CPU at the start of each 100 ms, 10 times. */
static void ten_bursts(char *text, size_t size)
{
	size_t len = (size_t)snprintf(text, size, "cfsbw-trace 1\nthread 1 1 a\n");
	for (int i = 0; i < 10; i++)
		len += (size_t)snprintf(text + len, size - len, "run 1 %d %d\n",
					i * 100000000, i * 100000000 + 30000000);
}

TEST(replay_is_closed_loop_under_a_limit, "issue-14")
{
	/* one thread: 30 ms of CPU, 70 ms asleep, 10 times: 1 s unlimited.
	 * Under 10 ms per 100 ms each burst takes 3 periods, and the
	 * sleeps after it shift: the last exit comes after 10 * (~200 +
	 * 70) ms, not at 1 s. */
	char text[4096];
	ten_bursts(text, sizeof text);
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse(text, &sc, &err), ==, 0);
	sc.duration_ns = 60 * CFSBW_NSEC_PER_SEC;
	sc.until_done = true;
	struct cfsbw_sim_line_result free_run, limited;
	ASSERT_INT(run(&sc, &free_run, NULL), ==, 0);
	ASSERT_INT(free_run.last_exit_ns, ==, 930000000);
	cfsbw_sim_scenario_free(&sc);
	ASSERT_INT(cfsbw_sim_scenario_parse(
			   &sc,
			   "cpus 2\ngroup /app cpu.cfs_quota_us=10000 "
			   "cpu.cfs_period_us=100000\n"
			   "task /app trace file=x\n",
			   &err),
		   ==, 0);
	ASSERT_INT(cfsbw_sim_replay_parse(&sc.tasks[0], text, &err), ==, 0);
	sc.duration_ns = 60 * CFSBW_NSEC_PER_SEC;
	sc.until_done = true;
	struct cfsbw_sim_group_result g;
	ASSERT_INT(run(&sc, &limited, &g), ==, 0);
	ASSERT_INT(limited.cpu_ns, ==, 300000000);
	ASSERT_INT(limited.last_exit_ns, >=, 2500000000);
	ASSERT_INT(limited.last_exit_ns, <=, 3200000000);
	ASSERT_UINT(g.stats.nr_throttled, >=, 19);
	cfsbw_sim_scenario_free(&sc);
}

/*
 * A parent that forks a child and waits for it: recorded on an idle
 * machine, parent 10 ms, child 100 ms (10..110), parent 10 ms, a 200 ms
 * timer, parent 10 ms: the end at 330 ms.  Replayed under half a CPU, the
 * parent's wake-up waits for the child's work (about 220 ms), not for the
 * time it took on the recording machine (110 ms): the end comes near
 * 460 ms.  With plain sleeps it would come near 350 ms.
 */
static const char fork_wait[] =
	"cfsbw-trace 1\n"
	"thread 1 1 parent\n"
	"thread 2 2 child\n"
	"run 1 0 10000000\n"
	"run 2 10000000 110000000\n"
	"run 1 110000000 120000000\n"
	"run 1 320000000 330000000\n"
	"exit 2 110000000\n"
	"exit 1 330000000\n";

TEST(replay_wakeups_wait_for_the_work_they_waited_for, "issue-14")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse(fork_wait, &sc, &err), ==, 0);
	const struct cfsbw_sim_task_spec *t = &sc.tasks[0];
	ASSERT_TRUE(t->trace_gated);
	/* the parent wakes once 110 ms of work is done, at once; then after
	 * its own 10 ms more, 200 ms later; the child starts after 10 ms */
	ASSERT_INT(t->threads[0].steps[0].gate_progress_ns, ==, 110000000);
	ASSERT_INT(t->threads[0].steps[0].gate_lag_ns, ==, 0);
	ASSERT_INT(t->threads[0].steps[1].gate_progress_ns, ==, 120000000);
	ASSERT_INT(t->threads[0].steps[1].gate_lag_ns, ==, 200000000);
	ASSERT_INT(t->threads[1].start_gate_progress_ns, ==, 10000000);
	ASSERT_INT(t->threads[1].start_gate_lag_ns, ==, 0);
	sc.duration_ns = 10 * CFSBW_NSEC_PER_SEC;
	sc.until_done = true;
	struct cfsbw_sim_line_result r;
	ASSERT_INT(run(&sc, &r, NULL), ==, 0);
	ASSERT_INT(r.last_exit_ns, ==, 330000000);
	cfsbw_sim_scenario_free(&sc);
	ASSERT_INT(cfsbw_sim_scenario_parse(&sc,
					    "cpus 2\npolicy upstream\n"
					    "group /app cpu.cfs_quota_us=50000 "
					    "cpu.cfs_period_us=100000\n"
					    "task /app trace file=x\n",
					    &err),
		   ==, 0);
	ASSERT_INT(cfsbw_sim_replay_parse(&sc.tasks[0], fork_wait, &err), ==,
		   0);
	sc.duration_ns = 10 * CFSBW_NSEC_PER_SEC;
	sc.until_done = true;
	ASSERT_INT(run(&sc, &r, NULL), ==, 0);
	ASSERT_INT(r.cpu_ns, ==, 130000000);
	ASSERT_INT(r.last_exit_ns, >=, 420000000);
	ASSERT_INT(r.last_exit_ns, <=, 500000000);
	cfsbw_sim_scenario_free(&sc);
}

/* One task line replaying x under 13 ms per 100 ms on one CPU, and an
 * rt-app task of 30 ms a second for 5 s. */
#define LIMITED_13MS                                                           \
	"cpus 1\nduration 10s\npolicy upstream\n"                              \
	"group /app cpu.cfs_quota_us=13000 cpu.cfs_period_us=100000\n"         \
	"task /app trace file=x\n"
#define TIMER_30MS_A_SECOND                                                    \
	"{\"global\": {\"duration\": 5},\n"                                    \
	"\"tasks\": {\"req\": {\"loop\": -1, \"run\": 30000, "                \
	"\"timer\": {\"ref\": \"t\", \"period\": 1000000}}}}"

/* That scenario, more task lines after it, x read as that task. */
static int parse_timer_case(struct cfsbw_sim_scenario *sc, const char *more,
			    struct cfsbw_sim_error *err)
{
	char text[512];
	snprintf(text, sizeof text, "%s%s", LIMITED_13MS, more);
	cfsbw_sim_scenario_init(sc);
	if (cfsbw_sim_scenario_parse(sc, text, err))
		return -100;
	return cfsbw_sim_replay_parse(&sc->tasks[0], TIMER_30MS_A_SECOND, err);
}

TEST(rtapp_timer_latency_and_duration, "issue-14")
{
	/* 30 ms each second under 13 ms per 100 ms, on a period grid that
	 * starts with the task: 13 + 13 + 4 ms, done at 204 ms each time */
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse_timer_case(&sc, "", &err), ==, 0);
	struct cfsbw_sim_line_result r;
	ASSERT_INT(run(&sc, &r, NULL), ==, 0);
	ASSERT_UINT(r.latency.count, ==, 5); /* 0, 1, 2, 3, 4 s; then 5 s */
	ASSERT_NEAR((double)r.latency.p50_ns, 204e6, 4e6);
	ASSERT_UINT(r.exited, ==, 1);
	cfsbw_sim_scenario_free(&sc);
}

/* A replay as `cfsbw sim --replay` runs it: until its threads exit, with
 * a day as the end it does not reach (src/cli/sim_load.c). */
static int create_replay(const char *json, struct cfsbw_sim_scenario *sc,
			 struct cfsbw_sim **s, struct cfsbw_sim_error *err)
{
	cfsbw_sim_scenario_init(sc);
	if (cfsbw_sim_scenario_parse(sc,
				     "cpus 2\ngroup /app\ntask /app trace "
				     "file=x\n",
				     err) ||
	    cfsbw_sim_replay_parse(&sc->tasks[0], json, err))
		return -100;
	sc->until_done = true;
	sc->duration_ns = 86400 * CFSBW_NSEC_PER_SEC;
	return cfsbw_sim_create(sc, s, err);
}

TEST(rtapp_forever_loop_ends_with_global_duration, "issue-14")
{
	/* rt-app's usual shape: tasks looped for ever ("loop": -1), the run
	 * ended by global.duration.  12 tasks of 2 ms every 16 ms for 2 s
	 * are 3000 events, where the same loops to the replay's day of
	 * duration would be 1.3e8 cycles, over the default budget (1e9
	 * events), which refused the file before.  The events budget counts
	 * each thread to its own end. */
	char json[2048];
	size_t len = (size_t)snprintf(json, sizeof json,
				      "{\"global\": {\"duration\": 2},\n"
				      "\"tasks\": {");
	for (int i = 0; i < 12; i++)
		len += (size_t)snprintf(json + len, sizeof json - len,
					"%s\"t%d\": {\"loop\": -1, \"run\": "
					"2000, \"timer\": {\"ref\": \"r%d\", "
					"\"period\": 16000}}",
					i ? ", " : "", i, i);
	snprintf(json + len, sizeof json - len, "}}");
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s;
	ASSERT_INT(create_replay(json, &sc, &s, &err), ==, 0);
	cfsbw_sim_run(s);
	struct cfsbw_sim_line_result r;
	struct cfsbw_sim_totals tot;
	cfsbw_sim_line_result(s, 0, &r);
	cfsbw_sim_totals(s, &tot);
	ASSERT_UINT(r.exited, ==, 12);
	ASSERT_UINT(r.completed, ==, 12 * 125); /* 125 cycles of 16 ms */
	ASSERT_INT(tot.duration_ns, <=, 2 * CFSBW_NSEC_PER_SEC);
	ASSERT_UINT(tot.events, <, 4000);
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);

	/* without a duration a loop does run for the whole day: 1.7e9
	 * events of 50 us every 100 us, refused, naming the line */
	ASSERT_INT(create_replay("{\"tasks\": {\"t\": {\"loop\": -1, "
				 "\"run\": 50, \"timer\": {\"ref\": \"r\", "
				 "\"period\": 100}}}}",
				 &sc, &s, &err),
		   ==, -EINVAL);
	ASSERT_UINT(err.line, ==, 3);
	ASSERT_CONTAINS(err.msg, "over the budget");
	cfsbw_sim_scenario_free(&sc);
}

TEST(rtapp_timer_latencies_are_reported, "issue-14")
{
	/* The report shows a timer task's latencies as it does a duty
	 * task's (it showed none: only duty and requests lines had them):
	 * 30 ms a second under 13 ms per 100 ms, 5 runs, each done about
	 * 204 ms after its timer (rtapp_timer_latency_and_duration).  A
	 * trace without timers has none to show. */
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s;
	char *text = NULL, *json = NULL;
	size_t tlen = 0, jlen = 0;
	ASSERT_INT(parse_timer_case(&sc, "task /app trace file=y\n", &err), ==,
		   0);
	ASSERT_INT(cfsbw_sim_replay_parse(
			   &sc.tasks[1],
			   "{\"tasks\": {\"plain\": {\"run\": 1000, "
			   "\"sleep\": 1000}}}",
			   &err),
		   ==, 0);
	ASSERT_INT(cfsbw_sim_create(&sc, &s, &err), ==, 0);
	cfsbw_sim_run(s);
	FILE *f = open_memstream(&text, &tlen);
	cfsbw_sim_report_text(s, "t", f);
	fclose(f);
	f = open_memstream(&json, &jlen);
	cfsbw_sim_report_json(s, "t", f);
	fclose(f);
	struct cfsbw_sim_line_result r;
	cfsbw_sim_line_result(s, 0, &r);
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
	ASSERT_UINT(r.latency.count, ==, 5);
	ASSERT_NEAR((double)r.latency.p50_ns, 204e6, 4e6);
	char p50[64];
	snprintf(p50, sizeof p50, " %.3f ", (double)r.latency.p50_ns / 1e6);
	/* the timer line: p50, p99 and max of its 5 runs */
	const char *l5 = strstr(text, "\n5: /app trace file=x");
	ASSERT_TRUE(l5 != NULL);
	const char *end = strchr(l5 + 1, '\n');
	ASSERT_TRUE(end != NULL);
	char row[256];
	snprintf(row, sizeof row, "%.*s", (int)(end - l5 - 1), l5 + 1);
	ASSERT_CONTAINS(row, "(5 done)");
	ASSERT_CONTAINS(row, p50);
	/* the line without timers: no latency columns */
	const char *l6 = strstr(text, "\n6: /app trace file=y");
	ASSERT_TRUE(l6 != NULL);
	end = strchr(l6 + 1, '\n');
	ASSERT_TRUE(end != NULL);
	snprintf(row, sizeof row, "%.*s", (int)(end - l6 - 1), l6 + 1);
	ASSERT_TRUE(strstr(row, "done") == NULL);
	/* JSON: a latency object for the timer line only */
	const char *j5 = strstr(json, "{\"line\": 5,");
	const char *j6 = strstr(json, "{\"line\": 6,");
	ASSERT_TRUE(j5 != NULL && j6 != NULL && j5 < j6);
	const char *lat = strstr(j5, "\"latency\": {\"count\": 5,");
	ASSERT_TRUE(lat != NULL && lat < j6);
	ASSERT_TRUE(strstr(j6, "\"latency\"") == NULL);
	free(text);
	free(json);
}

/* p99 of 20 ms every 50 ms under 13 ms per 100 ms, with the timer in
 * one mode: late every time, since it needs 0.4 CPU. */
static int64_t late_p99(const char *mode)
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	char json[256];
	cfsbw_sim_scenario_init(&sc);
	if (cfsbw_sim_scenario_parse(&sc,
				     "cpus 1\nduration 3s\npolicy upstream\n"
				     "group /app cpu.cfs_quota_us=13000 "
				     "cpu.cfs_period_us=100000\n"
				     "task /app trace file=x\n",
				     &err))
		return -1;
	snprintf(json, sizeof json,
		 "{\"tasks\": {\"t\": {\"loop\": -1, \"run\": 20000, "
		 "\"timer\": {\"ref\": \"a\", \"period\": 50000, "
		 "\"mode\": \"%s\"}}}}",
		 mode);
	struct cfsbw_sim_line_result r = {0};
	if (cfsbw_sim_replay_parse(&sc.tasks[0], json, &err) ||
	    run(&sc, &r, NULL))
		r.latency.p99_ns = -1;
	cfsbw_sim_scenario_free(&sc);
	return r.latency.p99_ns;
}

TEST(rtapp_timer_modes_when_late, "issue-14")
{
	/* relative: a late task's next period starts when it gets there,
	 * so each activation waits for quota once (about 100-200 ms);
	 * absolute: the grid stays, the backlog grows over the run */
	int64_t rel = late_p99("relative"), abs = late_p99("absolute");
	ASSERT_INT(rel, >, 0);
	ASSERT_INT(rel, <, 250000000);
	ASSERT_INT(abs, >, 1000000000);
}

/* `cfsbw sim` on a scenario replaying a bad trace: status, stderr. */
static int run_cli(const char *trace, char *out, size_t size)
{
	const char *bin = getenv("CFSBW_BIN");
	char dir[] = "/tmp/cfsbw-test-inputs-XXXXXX", path[256], cmd[1024];
	if (!bin || !mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/t.trace", dir);
	FILE *f = fopen(path, "w");
	fputs(trace, f);
	fclose(f);
	snprintf(path, sizeof path, "%s/s.sim", dir);
	f = fopen(path, "w");
	fputs("group /app\ntask /app trace file=t.trace\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "%s sim %s 2>&1 >/dev/null; st=$?; rm -r %s; exit $st", bin,
		 path, dir);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(out, 1, size - 1, p) : 0;
	out[n] = '\0';
	int st = p ? pclose(p) : -1;
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * wakeups=recorded (open loop): a service's requests arrive when they
 * arrive.  One thread, 30 ms of CPU every 100 ms, 10 times.  Unlimited,
 * each wake-up's run is done 30 ms after it.  Under 10 ms per 100 ms the
 * thread needs three periods per wake-up and falls behind: wake-up k,
 * due at k * 100 ms, cannot be done before 30 (k + 1) ms of CPU have
 * been served at 10 ms a period, so the last (due at 900 ms) finishes
 * after 2.9 s, 2 s and more late, and each is later than the one before.
 * Tied to progress, the same trace records no latencies: there a
 * wake-up comes after the work before it, whenever that is done.
 */
static int parse_open(const char *group_args, const char *task_args,
		      const char *text, struct cfsbw_sim_scenario *sc,
		      struct cfsbw_sim_error *err)
{
	char scenario[256];
	snprintf(scenario, sizeof scenario,
		 "cpus 2\npolicy upstream\ngroup /app%s\ntask /app trace "
		 "file=x%s\n",
		 group_args, task_args);
	cfsbw_sim_scenario_init(sc);
	int rc = cfsbw_sim_scenario_parse(sc, scenario, err);
	if (!rc)
		rc = cfsbw_sim_replay_parse(&sc->tasks[0], text, err);
	sc->duration_ns = 60 * CFSBW_NSEC_PER_SEC;
	sc->until_done = true;
	return rc;
}

/* Replay text in /app (group_args, task_args as in parse_open) into *r;
 * 0, or the parse's error.  A limited run's figures are printed. */
static int run_open(const char *group_args, const char *task_args,
		    const char *text, struct cfsbw_sim_line_result *r)
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	int rc = parse_open(group_args, task_args, text, &sc, &err);
	if (!rc)
		rc = run(&sc, r, NULL);
	cfsbw_sim_scenario_free(&sc);
	if (!rc && *group_args)
		printf("    limited: p50 %.1f ms, max %.1f ms, last exit "
		       "%.3f s\n",
		       (double)r->latency.p50_ns / 1e6,
		       (double)r->latency.max_ns / 1e6,
		       (double)r->last_exit_ns / 1e9);
	return rc;
}

TEST(replay_open_loop_wakes_at_the_recorded_times, "issue-14")
{
	char text[4096];
	ten_bursts(text, sizeof text);
	struct cfsbw_sim_line_result r;
	ASSERT_INT(run_open("", " wakeups=recorded", text, &r), ==, 0);
	ASSERT_UINT(r.latency.count, ==, 10);
	ASSERT_INT(r.latency.p50_ns, ==, 30000000);
	ASSERT_INT(r.latency.max_ns, ==, 30000000);
	ASSERT_INT(r.last_exit_ns, ==, 930000000);

	ASSERT_INT(run_open(" cpu.cfs_quota_us=10000 cpu.cfs_period_us=100000",
			    " wakeups=recorded", text, &r),
		   ==, 0);
	ASSERT_UINT(r.latency.count, ==, 10);
	ASSERT_INT(r.cpu_ns, ==, 300000000);
	ASSERT_INT(r.last_exit_ns, >=, 2900000000);
	ASSERT_INT(r.latency.max_ns, >=, 2000000000);
	/* falling behind: the middle one is about 1 s late, the last 2 s */
	ASSERT_INT(r.latency.max_ns - r.latency.p50_ns, >=, 800000000);

	ASSERT_INT(run_open(" cpu.cfs_quota_us=10000 cpu.cfs_period_us=100000",
			    "", text, &r),
		   ==, 0);
	ASSERT_UINT(r.latency.count, ==, 0);
}

/* A thread per request: each runs once, 10 ms, and exits.  Open loop,
 * each thread's run counts from its recorded start: five latencies of
 * 10 ms unlimited; under 5 ms per 100 ms the 50 ms of CPU take ten
 * quotas (the one the group starts with, then one a period), so the last
 * thread, due at 400 ms, is done after 900 ms, 500 ms late or more. */
TEST(replay_open_loop_thread_per_request, "issue-14")
{
	char text[1024];
	size_t len = (size_t)snprintf(text, sizeof text, "cfsbw-trace 1\n");
	for (int i = 0; i < 5; i++)
		len += (size_t)snprintf(text + len, sizeof text - len,
					"thread %d 1 req\nrun %d %d %d\nexit %d %d\n",
					10 + i, 10 + i, i * 100000000,
					i * 100000000 + 10000000, 10 + i,
					i * 100000000 + 10000000);
	struct cfsbw_sim_line_result r;
	ASSERT_INT(run_open("", " wakeups=recorded", text, &r), ==, 0);
	ASSERT_UINT(r.exited, ==, 5);
	ASSERT_UINT(r.latency.count, ==, 5);
	ASSERT_INT(r.latency.p50_ns, ==, 10000000);
	ASSERT_INT(r.latency.max_ns, ==, 10000000);
	ASSERT_INT(run_open(" cpu.cfs_quota_us=5000 cpu.cfs_period_us=100000",
			    " wakeups=recorded", text, &r),
		   ==, 0);
	ASSERT_UINT(r.latency.count, ==, 5);
	ASSERT_INT(r.last_exit_ns, >=, 900000000);
	ASSERT_INT(r.latency.max_ns, >=, 500000000);
}

/* wakeups= takes progress or recorded, and recorded needs the recorded
 * times: a CSV trace and an rt-app file are errors, naming why. */
TEST(replay_open_loop_bad_input, "issue-14")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	ASSERT_INT(parse_open("", " wakeups=sometimes", "", &sc, &err), ==,
		   -EINVAL);
	cfsbw_sim_scenario_free(&sc);
	ASSERT_UINT(err.line, ==, 4);
	ASSERT_CONTAINS(err.msg, "'wakeups=sometimes': wakeups is progress");
	ASSERT_INT(parse_open("", " wakeups=recorded", "30000,70000\n", &sc,
			      &err),
		   ==, -EINVAL);
	cfsbw_sim_scenario_free(&sc);
	ASSERT_CONTAINS(err.msg, "a CSV trace has durations");
	ASSERT_INT(parse_open("", " wakeups=recorded",
			      "{\"tasks\": {\"a\": {\"run\": 1000, "
			      "\"sleep\": 1000}}}",
			      &sc, &err),
		   ==, -EINVAL);
	cfsbw_sim_scenario_free(&sc);
	ASSERT_CONTAINS(err.msg, "an rt-app file's tasks keep their own timers");
	/* progress is the default, and may be written */
	ASSERT_INT(parse_open("", " wakeups=progress", "30000,70000\n", &sc,
			      &err),
		   ==, 0);
	cfsbw_sim_scenario_free(&sc);
}

TEST(command_names_trace_file_and_line, "issue-14")
{
	char out[1024];
	ASSERT_TRUE(getenv("CFSBW_BIN") != NULL); /* make test sets it */
	ASSERT_INT(run_cli("cfsbw-trace 1\nthread 1 1 a\nrun 1 0 x\n", out,
			   sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, "/t.trace:3: run 0 x: times are integers") !=
		    NULL);
	ASSERT_TRUE(strstr(out, "/s.sim:2: in trace ") != NULL);
	ASSERT_INT(run_cli("{\"tasks\": {\"a\": {\"run\": 1,\n\"fork\": \"b\"}}}",
			   out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, "/t.trace:2: event 'fork': not supported") !=
		    NULL);
	/* --replay: the trace's own file and line, nothing else */
	char cmd[512], path[] = "/tmp/cfsbw-test-replay-XXXXXX", want[256];
	int fd = mkstemp(path);
	ASSERT_TRUE(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("cfsbw-trace 1\nthread 1 1 a\nrun 1 0\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "%s sim --replay %s 2>&1 >/dev/null",
		 getenv("CFSBW_BIN"), path);
	FILE *p = popen(cmd, "r");
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	unlink(path);
	ASSERT_INT(WEXITSTATUS(st), ==, 2);
	snprintf(want, sizeof want,
		 "cfsbw sim: %s:3: expected 'run TID START_NS END_NS [P]'\n",
		 path);
	ASSERT_STR(out, want);
}

TEST_MAIN(TEST_ENTRY(cfsbw_trace_threads_and_steps)
	  TEST_ENTRY(cfsbw_trace_bad_input_names_the_line)
	  TEST_ENTRY(perf_timehist_threads_and_steps)
	  TEST_ENTRY(perf_timehist_bad_input_names_the_line)
	  TEST_ENTRY(rtapp_tasks_phases_loops_timers)
	  TEST_ENTRY(rtapp_unsupported_fields_are_errors)
	  TEST_ENTRY(replay_unlimited_gives_back_the_recorded_cpu)
	  TEST_ENTRY(replay_is_closed_loop_under_a_limit)
	  TEST_ENTRY(replay_wakeups_wait_for_the_work_they_waited_for)
	  TEST_ENTRY(rtapp_timer_latency_and_duration)
	  TEST_ENTRY(rtapp_timer_modes_when_late)
	  TEST_ENTRY(rtapp_forever_loop_ends_with_global_duration)
	  TEST_ENTRY(rtapp_timer_latencies_are_reported)
	  TEST_ENTRY(replay_open_loop_wakes_at_the_recorded_times)
	  TEST_ENTRY(replay_open_loop_thread_per_request)
	  TEST_ENTRY(replay_open_loop_bad_input)
	  TEST_ENTRY(command_names_trace_file_and_line))
