/*
 * test_sim_scenario.c - scenario files: what they accept, and every error
 * path, each of which must name the line and quote the offending text
 * (and make `cfsbw sim` exit with status 2).
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "cfsbw_sim.h"

/* Parse, build and (run_ns > 0) run that long; the first error. */
static int load_run(const char *text, int64_t run_ns,
		    struct cfsbw_sim_error *err)
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim *s = NULL;
	cfsbw_sim_scenario_init(&sc);
	int rc = cfsbw_sim_scenario_parse(&sc, text, err);
	if (!rc && run_ns > 0)
		sc.duration_ns = run_ns;
	for (size_t i = 0; !rc && i < sc.nr_tasks; i++)
		if (sc.tasks[i].workload == CFSBW_SIM_WL_TRACE)
			rc = cfsbw_sim_trace_parse(&sc.tasks[i], "1000,500\n",
						   err);
	if (!rc)
		rc = cfsbw_sim_create(&sc, &s, err);
	if (!rc && run_ns > 0)
		rc = cfsbw_sim_run(s);
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
	return rc;
}

static int load(const char *text, struct cfsbw_sim_error *err)
{
	return load_run(text, 0, err);
}

/* The error is on line `line` and its message contains `text`. */
#define ASSERT_ERROR(scenario, want_line, want_text)                           \
	do {                                                                   \
		struct cfsbw_sim_error e_;                                     \
		ASSERT_INT(load(scenario, &e_), ==, -EINVAL);                  \
		ASSERT_UINT(e_.line, ==, want_line);                           \
		ASSERT_CONTAINS(e_.msg, want_text);                            \
	} while (0)

TEST(full_example_parses, "section-7")
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	cfsbw_sim_scenario_init(&sc);
	ASSERT_INT(
		cfsbw_sim_scenario_parse(
			&sc,
			"cpus 4                  # 1..4096\n"
			"hz 1000\n"
			"duration 1500ms\n"
			"seed 42\n"
			"policy upstream\n"
			"\n   # a comment line\n"
			"sysctl sched_cfs_bandwidth_slice_us 10000\n"
			"group /web cpu.cfs_quota_us=100000 cpu.cfs_period_us=500000 cpu.shares=1024\n"
			"group /web/api cpu.cfs_quota_us=-1\n"
			"task /web busy count=4\n"
			"task /web/api duty run=30ms sleep=70ms count=2\n"
			"task / requests rate=200/s service=exp:2ms\n"
			"task / requests rate=0.5/s service=2ms\n"
			"task / duty run=1ms sleep=9ms phase=random\n"
			"task / duty run=1ms sleep=9ms phase=3ms",
			&err),
		==, 0);
	ASSERT_UINT(sc.nr_cpus, ==, 4);
	ASSERT_UINT(sc.hz, ==, 1000);
	ASSERT_INT(sc.duration_ns, ==, 1500 * CFSBW_NSEC_PER_MSEC);
	ASSERT_UINT(sc.seed, ==, 42);
	ASSERT_INT(sc.policy, ==, CFSBW_POLICY_UPSTREAM);
	ASSERT_UINT(sc.nr_groups, ==, 2);
	ASSERT_UINT(sc.groups[0].nr_settings, ==, 3);
	ASSERT_STR(sc.groups[0].settings[1].file, "cpu.cfs_period_us");
	ASSERT_STR(sc.groups[0].settings[1].value, "500000");
	ASSERT_UINT(sc.nr_tasks, ==, 6);
	ASSERT_TRUE(sc.tasks[4].phase_random);
	ASSERT_FALSE(sc.tasks[5].phase_random);
	ASSERT_INT(sc.tasks[5].phase_ns, ==, 3 * CFSBW_NSEC_PER_MSEC);
	ASSERT_UINT(sc.tasks[0].count, ==, 4);
	ASSERT_UINT(sc.tasks[1].line, ==, 12);
	ASSERT_INT(sc.tasks[1].run_ns, ==, 30 * CFSBW_NSEC_PER_MSEC);
	ASSERT_INT(sc.tasks[1].sleep_ns, ==, 70 * CFSBW_NSEC_PER_MSEC);
	ASSERT_STR(sc.tasks[1].text, "duty run=30ms sleep=70ms");
	ASSERT_INT(sc.tasks[2].mean_gap_ns, ==, 5 * CFSBW_NSEC_PER_MSEC);
	ASSERT_TRUE(sc.tasks[2].service_exp);
	ASSERT_INT(sc.tasks[2].service_ns, ==, 2 * CFSBW_NSEC_PER_MSEC);
	ASSERT_INT(sc.tasks[3].mean_gap_ns, ==, 2 * CFSBW_NSEC_PER_SEC);
	ASSERT_FALSE(sc.tasks[3].service_exp);
	cfsbw_sim_scenario_free(&sc);
}

TEST(machine_directive_errors, "section-7")
{
	ASSERT_ERROR("cpus 4\nfrobnicate 3\n", 2, "'frobnicate'");
	/* the error lists every directive, the last included (it was cut
	 * short at 128 bytes once the list outgrew them) */
	ASSERT_ERROR("frobnicate 3\n", 1,
		     "balance_load, wake_scan, first_period, sysctl, group, "
		     "task)");
	ASSERT_ERROR("cpus 0\n", 1, "'0'");
	ASSERT_ERROR("cpus 4097\n", 1, "'4097'");
	ASSERT_ERROR("cpus four\n", 1, "'four'");
	ASSERT_ERROR("cpus 4\ncpus 8\n", 2, "given twice");
	ASSERT_ERROR("cpus\n", 1, "expected one value");
	ASSERT_ERROR("hz 99\n", 1, "'99'");
	ASSERT_ERROR("hz 10001\n", 1, "'10001'");
	ASSERT_ERROR("duration 10\n", 1, "'10'");      /* no unit */
	ASSERT_ERROR("duration 0s\n", 1, "'0s'");
	ASSERT_ERROR("duration -1s\n", 1, "'-1s'");
	ASSERT_ERROR("duration 10 s\n", 1, "expected one value");
	ASSERT_ERROR("seed -3\n", 1, "'-3'");
	ASSERT_ERROR("seed 18446744073709551616\n", 1, "'18446744073709551616'");
	ASSERT_ERROR("policy cfs\n", 1, "'cfs'");
	ASSERT_ERROR("sysctl sched_cfs_bandwidth_slice_us\n", 1, "sysctl");
}

TEST(group_errors, "R2 section-7")
{
	ASSERT_ERROR("group web\n", 1, "'web'");
	ASSERT_ERROR("group /a/b\n", 1, "'/a'");       /* parent first */
	ASSERT_ERROR("group /a\ngroup /a\n", 2, "declared twice");
	ASSERT_ERROR("group /a cpu.cfs_quota_us\n", 1, "'cpu.cfs_quota_us'");
	ASSERT_ERROR("group\n", 1, "group");
	/* the core's own rules (R2), with the line and the text */
	ASSERT_ERROR("cpus 2\n\ngroup /a cpu.cfs_quota_us=abc\n", 3,
		     "cpu.cfs_quota_us=abc");
	ASSERT_ERROR("group /a cpu.cfs_period_us=999\n", 1,
		     "cpu.cfs_period_us=999: EINVAL (Invalid argument)");
	ASSERT_ERROR("group /a cpu.cfs_quota_us=999\n", 1,
		     "cpu.cfs_quota_us=999: EINVAL (Invalid argument)");
	/* ... and the rule broken, from the core's file table */
	ASSERT_ERROR("group /a cpu.cfs_period_us=999\n", 1,
		     "(R2: the period is a whole number of microseconds");
	ASSERT_ERROR("group /a cpu.cfs_period_us=1000001\n", 1,
		     "cpu.cfs_period_us=1000001");
	ASSERT_ERROR("group /a cpu.shares=1\n", 1, "cpu.shares=1");
	ASSERT_ERROR("group /a cpu.stat=1\n", 1, "cpu.stat=1");
	ASSERT_ERROR("group /a cpu.cfs_quota_us=99999999999999999999999\n", 1,
		     "out of range");
	ASSERT_ERROR("group /a cpu.frobs=1\n", 1, "no file cpu.frobs");
	ASSERT_ERROR("group /a cpu.cfs_burst_us=0\n", 1, "cpu.cfs_burst_us");
	ASSERT_ERROR("group / cpu.cfs_quota_us=100000\n", 1,
		     "cpu.cfs_quota_us=100000"); /* root: never limited */
	/* ... and the message says why, not the value's range */
	ASSERT_ERROR("group / cpu.cfs_quota_us=100000\n", 1,
		     "root group cannot be limited");
	ASSERT_ERROR("group / cpu.shares=2048\n", 1,
		     "root group cannot be limited or reweighted");
	ASSERT_ERROR("group /a/ \n", 1, "/a/");
	ASSERT_ERROR("sysctl sched_cfs_bandwidth_slice_us 0\n", 1,
		     "sched_cfs_bandwidth_slice_us 0");
	ASSERT_ERROR("sysctl kernel.foo 1\n", 1, "kernel.foo");
}

TEST(task_errors, "section-7")
{
	ASSERT_ERROR("task /nope busy\n", 1, "'/nope'");
	ASSERT_ERROR("group /a\ntask /a spin\n", 2, "'spin'");
	ASSERT_ERROR("task / busy count=0\n", 1, "'count=0'");
	ASSERT_ERROR("task / busy count=x\n", 1, "'count=x'");
	ASSERT_ERROR("task / busy run=1ms\n", 1, "'run=1ms'");
	ASSERT_ERROR("task / busy 4\n", 1, "'4'");
	ASSERT_ERROR("task / duty run=1ms\n", 1, "sleep=DURATION");
	ASSERT_ERROR("task / duty run=0ms sleep=1ms\n", 1, "'run=0ms'");
	ASSERT_ERROR("task / duty run=1 sleep=1ms\n", 1, "'run=1'");
	ASSERT_ERROR("task / duty run=1ms sleep=2h\n", 1, "'sleep=2h'");
	ASSERT_ERROR("task / duty run=1ms sleep=1ms phase=soon\n", 1,
		     "'phase=soon'");
	ASSERT_ERROR("task / busy phase=random\n", 1, "'phase=random'");
	ASSERT_ERROR("task / requests rate=200/s\n", 1, "service=DURATION");
	ASSERT_ERROR("task / requests rate=fast service=1ms\n", 1, "'rate=fast'");
	ASSERT_ERROR("task / requests rate=0/s service=1ms\n", 1, "'rate=0/s'");
	ASSERT_ERROR("task / requests rate=1/s service=exp:\n", 1,
		     "'service=exp:'");
	ASSERT_ERROR("task / requests rate=1/s service=0ms\n", 1,
		     "'service=0ms'");
	ASSERT_ERROR("task / trace\n", 1, "file=FILE");
	ASSERT_ERROR("task / trace file=x.csv loop=maybe\n", 1, "'loop=maybe'");
	ASSERT_ERROR("task /\n", 1, "task");
}

TEST(trace_csv, "section-7")
{
	struct cfsbw_sim_task_spec t;
	struct cfsbw_sim_error err;
	memset(&t, 0, sizeof t);
	ASSERT_INT(
		cfsbw_sim_trace_parse(&t,
				      "# a trace\nrun_us,sleep_us\n1000,2000\n"
				      " 500 , 0 \n\n3000,10\n",
				      &err),
		==, 0);
	ASSERT_UINT(t.trace_len, ==, 3);
	ASSERT_INT(t.trace[0].run_ns, ==, 1000000);
	ASSERT_INT(t.trace[0].sleep_ns, ==, 2000000);
	ASSERT_INT(t.trace[1].run_ns, ==, 500000);
	ASSERT_INT(t.trace[1].sleep_ns, ==, 0);
	ASSERT_INT(t.trace[2].sleep_ns, ==, 10000);
	ASSERT_INT(cfsbw_sim_trace_parse(&t, "1000,2000\n1000;2000\n", &err),
		   ==, -EINVAL);
	ASSERT_UINT(err.line, ==, 2);
	ASSERT_TRUE(strstr(err.msg, "'1000;2000'") != NULL);
	ASSERT_INT(cfsbw_sim_trace_parse(&t, "0,5\n", &err), ==, -EINVAL);
	ASSERT_TRUE(strstr(err.msg, "'0,5'") != NULL);
	ASSERT_INT(cfsbw_sim_trace_parse(&t, "# nothing\n", &err), ==, -EINVAL);
	free(t.trace);
}

/*
 * Scenarios stitched at random from valid and invalid words: each must
 * either load and run (200 ms of simulated time) or fail with a line and
 * a message, never crash or leak (run under SANITIZE=address,undefined).
 */
TEST(random_scenarios_load_or_fail_cleanly, "section-7")
{
	static const char *const lines[] = {
		"cpus 4", "hz 1000", "duration 1s", "seed 7", "policy upstream",
		"policy hardlimits", "sysctl sched_cfs_bandwidth_slice_us 2000",
		"group /a cpu.cfs_quota_us=50000 cpu.cfs_period_us=100000",
		"group /a/b cpu.shares=2048", "group /b cpu.max=20000",
		"task /a busy count=3",
		"task /a/b duty run=1ms sleep=2ms phase=random",
		"task / requests rate=100/s service=exp:1ms",
		"task /b trace file=t.csv loop=yes", "task / busy",
	};
	static const char *const words[] = {
		"cpus", "group", "task", "/", "/a", "/c", "busy", "spin", "0",
		"-1", "9999", "10s", "abc", "v5", "count=0", "run=0ms",
		"cpu.cfs_quota_us=500", "cpu.cfs_period_us=5000000",
		"cpu.shares=1", "rate=0/s", "service=exp:", "=", "#", "x=y",
	};
	uint64_t x = 88172645463325252u;
	int loaded = 0, failed = 0;
#define NEXT() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
	for (int round = 0; round < 300; round++) {
		char text[4096] = "";
		/* the template lines in order, the groups always and the
		 * others at even odds, one in five with a word replaced */
		int n = 0;
		for (size_t l = 0; l < sizeof lines / sizeof *lines; l++) {
			char line[256];
			if (strncmp(lines[l], "group", 5) && NEXT() % 2)
				continue;
			n++;
			snprintf(line, sizeof line, "%s", lines[l]);
			if (NEXT() % 5 == 0) {
				/* replace one word of it */
				char out[256] = "";
				int k = 0, pick = (int)(NEXT() % 4);
				for (char *w = strtok(line, " "); w;
				     w = strtok(NULL, " "), k++) {
					strcat(out, k == pick
							    ? words[NEXT() % (sizeof words /
									      sizeof *words)]
							    : w);
					strcat(out, " ");
				}
				strcat(text, out);
			} else {
				strcat(text, line);
			}
			strcat(text, "\n");
		}
		struct cfsbw_sim_error err;
		int rc = load_run(text, 200 * CFSBW_NSEC_PER_MSEC, &err);
		if (rc == 0) {
			loaded++;
		} else {
			ASSERT_INT(rc, ==, -EINVAL);
			ASSERT_TRUE(err.msg[0] != '\0');
			ASSERT_TRUE(err.line <= (unsigned)n);
			failed++;
		}
	}
#undef NEXT
	/* both paths taken, many times */
	ASSERT_INT(loaded, >, 30);
	ASSERT_INT(failed, >, 30);
}

/* Run the command on len bytes of scenario; exit status, stderr in buf. */
static int run_cli_bytes(const char *scenario, size_t len, const char *args,
			 char *buf, size_t size)
{
	const char *bin = getenv("CFSBW_BIN");
	char path[] = "/tmp/cfsbw-test-sim-XXXXXX";
	char cmd[1024];
	if (!bin)
		return -1;
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	fwrite(scenario, 1, len, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "%s sim %s %s 2>&1 >/dev/null", bin, path,
		 args);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(buf, 1, size - 1, p) : 0;
	buf[n] = '\0';
	int st = p ? pclose(p) : -1;
	unlink(path);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_cli(const char *scenario, const char *args, char *buf,
		   size_t size)
{
	return run_cli_bytes(scenario, strlen(scenario), args, buf, size);
}

TEST(command_exits_2_naming_file_and_line, "section-7")
{
	char out[1024];
	ASSERT_TRUE(getenv("CFSBW_BIN") != NULL); /* make test sets it */
	ASSERT_INT(run_cli("cpus 2\nhz 5\n", "", out, sizeof out), ==, 2);
	ASSERT_TRUE(strstr(out, ":2: hz '5'") != NULL);
	ASSERT_TRUE(strstr(out, "/tmp/cfsbw-test-sim-") != NULL);
	ASSERT_INT(run_cli("group /a cpu.cfs_quota_us=12x\n", "", out,
			   sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":1: cpu.cfs_quota_us=12x: EINVAL (Invalid argument)") !=
		    NULL);
	ASSERT_INT(run_cli("task / trace file=/nonexistent.csv\n", "", out,
			   sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":1: trace file '/nonexistent.csv'") != NULL);
	ASSERT_INT(run_cli("cpus 1\n", "--policy bogus", out, sizeof out), ==, 2);
	ASSERT_TRUE(strstr(out, "--policy 'bogus'") != NULL);
	ASSERT_INT(run_cli("cpus 1\n", "--scheduler bfs", out, sizeof out), ==,
		   2);
	ASSERT_TRUE(strstr(out, "--scheduler 'bfs': expected cfs or eevdf") !=
		    NULL);
	ASSERT_INT(run_cli("cpus 2\nscheduler EEVDF\n", "", out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":2: scheduler 'EEVDF': cfs or eevdf") != NULL);
	ASSERT_INT(run_cli("cpus 2\nbase_slice 0.5us\n", "", out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":2: base_slice '0.5us'") != NULL);
	ASSERT_INT(run_cli("migration_cost 1\n", "", out, sizeof out), ==, 2);
	ASSERT_TRUE(strstr(out, ":1: migration_cost '1'") != NULL);
	ASSERT_INT(run_cli("cpus 2\n", "--balance-load avg", out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, "--balance-load 'avg': expected instant or "
				"pelt") != NULL);
	ASSERT_INT(run_cli("cpus 2\nbalance_load PELT\n", "", out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":2: balance_load 'PELT': instant or pelt") !=
		    NULL);
	ASSERT_INT(run_cli("cpus 2\n", "--wake-scan some", out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, "--wake-scan 'some': expected all or util") !=
		    NULL);
	ASSERT_INT(run_cli("cpus 2\nwake_scan UTIL\n", "", out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":2: wake_scan 'UTIL': all or util") != NULL);
	ASSERT_INT(run_cli("cpus 1\n", "--duration 5", out, sizeof out), ==, 2);
	ASSERT_INT(run_cli("cpus 1\n", "--frob", out, sizeof out), ==, 2);
	ASSERT_INT(run_cli("cpus 1\nduration 1s\ntask / busy\n", "--json", out,
			   sizeof out),
		   ==, 0);
	ASSERT_STR(out, "");
	/* A NUL byte would hide the rest of the file from the parser. */
	static const char with_nul[] = "cpus 2\ngroup /a\0 junk\ntask /a busy\n";
	ASSERT_INT(run_cli_bytes(with_nul, sizeof with_nul - 1, "", out,
				 sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":2: a NUL byte") != NULL);
	ASSERT_INT(run_cli("cpus 1\n", "--max-memory 0", out, sizeof out), ==,
		   2);
	ASSERT_TRUE(strstr(out, "--max-memory '0'") != NULL);
	ASSERT_INT(run_cli("cpus 1\n", "--max-memory 2X", out, sizeof out), ==,
		   2);
	/* --wakeups belongs to --replay, and takes one of two words */
	ASSERT_INT(run_cli("cpus 1\n", "--wakeups recorded", out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, "--wakeups 'recorded': goes with --replay") !=
		    NULL);
	ASSERT_INT(run_cli("cpus 1\n", "--wakeups often", out, sizeof out), ==,
		   2);
	ASSERT_TRUE(strstr(out, "--wakeups 'often': expected progress") != NULL);
}

/*
 * Memory is bounded: latencies that outgrow --max-memory are counted, not
 * kept (and said on stderr), and the run completes; a machine that does
 * not fit at all is status 1 naming the budget.  A request queue takes no
 * memory (requests.c).
 */
TEST(memory_budget_bounds_the_run, "section-7")
{
	char out[1024];
	ASSERT_TRUE(getenv("CFSBW_BIN") != NULL); /* make test sets it */
	/* 10^6 arrivals a second of 1 us each: about 200,000 latencies of
	 * 8 bytes in 200 ms (1.6 MB, in an array that doubles). */
	const char *flood = "duration 200ms\ngroup /a\n"
			    "task /a requests rate=1000000/s service=1us\n";
	ASSERT_INT(run_cli(flood, "--max-memory 1M", out, sizeof out), ==, 0);
	ASSERT_TRUE(strstr(out, "reached --max-memory 1M") != NULL);
	ASSERT_TRUE(strstr(out, "latencies not recorded") != NULL);
	/* The same with room: nothing lost, nothing said. */
	ASSERT_INT(run_cli(flood, "--max-memory 64M", out, sizeof out), ==, 0);
	ASSERT_STR(out, "");
	/* 10^9 arrivals a second, starved: 2 * 10^7 queued, in no memory. */
	ASSERT_INT(run_cli("duration 20ms\n"
			   "task / requests rate=1000000000/s service=2ms\n",
			   "--max-memory 1M", out, sizeof out),
		   ==, 0);
	ASSERT_STR(out, "");
	ASSERT_INT(run_cli("cpus 64\ntask / busy count=64\n", "--max-memory 1K",
			   out, sizeof out),
		   ==, 1);
	ASSERT_TRUE(strstr(out, "needs more than --max-memory 1K") != NULL);
}

/*
 * Issue 16 item 2: every scenario runs within a time and memory one can
 * state, or is refused (status 2) naming its line.  Each of these hung,
 * overflowed or was accepted wrapped before.
 */
TEST(hostile_scenarios_are_refused_naming_the_line, "section-7 issue-16")
{
	char out[1024];
	struct cfsbw_sim_error e;
	/* now + sleep_ns overflowed, then the run spun forever */
	ASSERT_ERROR("duration 9223372036854775807ns\n"
		     "task / duty run=1ns sleep=3600s\n",
		     1, "at most 2^62 ns");
	/* two events per simulated nanosecond: hours for 10 s */
	ASSERT_ERROR("duration 10s\n"
		     "task / duty run=1ns sleep=0ns\n",
		     2, "over the budget of 1000000000 events");
	/* 4096 CPUs ticking at 10 kHz for 100 s: 4e9 ticks */
	ASSERT_ERROR("cpus 4096\nhz 10000\nduration 100s\n"
		     "task / busy count=4096\n",
		     0, "ticking 10000 times a second");
	/* the budget can be raised, on its own line */
	ASSERT_INT(load("max_events 30000000000\nduration 10s\n"
			"task / duty run=1ns sleep=0ns\n",
			&e),
		   ==, 0);
	ASSERT_ERROR("max_events 0\n", 1, "max_events '0'");
	/* a wake-up latency is a duration of at most a second, once */
	ASSERT_ERROR("wakeup_latency 100\n", 1, "wakeup_latency '100'");
	ASSERT_ERROR("seed 2\nwakeup_latency 2s\n", 2, "at most 1s");
	ASSERT_ERROR("wakeup_latency 1ms\nwakeup_latency 1ms\n", 2,
		     "wakeup_latency");
	/* a scheduler is named once; a base slice is 1 us to 1 s */
	ASSERT_ERROR("scheduler\n", 1, "scheduler");
	ASSERT_ERROR("scheduler eevdf\nscheduler cfs\n", 2, "scheduler");
	ASSERT_ERROR("base_slice 999ns\n", 1, "from 1us to 1s");
	ASSERT_ERROR("seed 3\nbase_slice 2s\n", 2, "from 1us to 1s");
	ASSERT_INT(load("scheduler eevdf\nbase_slice 1us\n", &e), ==, 0);
	/* so is a migration cost; 0ns turns cache-hot tasks off */
	ASSERT_ERROR("migration_cost 500\n", 1, "migration_cost '500'");
	ASSERT_ERROR("seed 2\nmigration_cost 1001ms\n", 2, "at most 1s");
	ASSERT_ERROR("migration_cost -1us\n", 1, "migration_cost '-1us'");
	ASSERT_ERROR("migration_cost 1ms\nmigration_cost 2ms\n", 2,
		     "migration_cost");
	/* the balancer's load is named once: instant or pelt */
	ASSERT_ERROR("balance_load average\n", 1,
		     "balance_load 'average': instant or pelt");
	ASSERT_ERROR("balance_load\n", 1, "balance_load");
	ASSERT_ERROR("balance_load pelt\nbalance_load pelt\n", 2,
		     "balance_load");
	ASSERT_INT(load("balance_load instant\n", &e), ==, 0);
	ASSERT_INT(load("balance_load pelt\n", &e), ==, 0);
	/* where a woken task looks for an idle CPU: all or util, once */
	ASSERT_ERROR("wake_scan sis\n", 1, "wake_scan 'sis': all or util");
	/* where the first period ends: whole, random or a share, once */
	ASSERT_ERROR("cpus 2\nfirst_period 0%\n", 2,
		     "first_period '0%': whole, random, or a share of a period "
		     "from 1% to 100%");
	ASSERT_ERROR("first_period 101%\n", 1, "first_period '101%'");
	ASSERT_ERROR("first_period 50\n", 1, "first_period '50'");
	ASSERT_ERROR("first_period -5%\n", 1, "first_period '-5%'");
	ASSERT_ERROR("first_period rand\n", 1, "first_period 'rand'");
	ASSERT_ERROR("first_period\n", 1, "first_period");
	ASSERT_ERROR("first_period whole\nfirst_period random\n", 2,
		     "first_period");
	ASSERT_INT(load("first_period whole\n", &e), ==, 0);
	ASSERT_INT(load("first_period random\n", &e), ==, 0);
	ASSERT_INT(load("first_period 1%\n", &e), ==, 0);
	ASSERT_INT(load("first_period 100%\n", &e), ==, 0);
	ASSERT_ERROR("wake_scan\n", 1, "wake_scan");
	ASSERT_ERROR("cpus 2\nwake_scan util\nwake_scan all\n", 3,
		     "wake_scan");
	ASSERT_INT(load("wake_scan all\n", &e), ==, 0);
	ASSERT_INT(load("wake_scan util\n", &e), ==, 0);
	/* 18446744073710/s wrapped to 0.45/s and was accepted */
	ASSERT_ERROR("task / requests rate=18446744073710/s service=1ms\n", 1,
		     "to 1000000000/s");
	ASSERT_ERROR("task / requests rate=1000000001/s service=1ms\n", 1,
		     "to 1000000000/s");
	ASSERT_INT(load("duration 1ms\n"
			"task / requests rate=1000000000/s service=1ns\n",
			&e),
		   ==, 0);
	ASSERT_TRUE(getenv("CFSBW_BIN") != NULL); /* make test sets it */
	ASSERT_INT(run_cli("duration 10s\ntask / duty run=1ns sleep=0ns\n", "",
			   out, sizeof out),
		   ==, 2);
	ASSERT_TRUE(strstr(out, ":2: task / duty run=1ns sleep=0ns") != NULL);
	/* an input without end is refused once it passes 64 MiB; timeout
	 * turns the unbounded read of before into a failure, not a hang */
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "timeout 60 %s sim /dev/zero 2>&1 >/dev/null",
		 getenv("CFSBW_BIN"));
	FILE *p = popen(cmd, "r");
	ASSERT_TRUE(p != NULL);
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	ASSERT_INT(WIFEXITED(st) ? WEXITSTATUS(st) : -1, ==, 2);
	ASSERT_TRUE(strstr(out, "/dev/zero: File too large") != NULL);
}

/* Standard output of `cfsbw sim ARGS` (run from the source tree), or NULL. */
static char *capture(const char *args, int *status)
{
	const char *bin = getenv("CFSBW_BIN");
	char cmd[1024];
	if (!bin)
		return NULL;
	snprintf(cmd, sizeof cmd, "%s sim %s 2>/dev/null", bin, args);
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	int st = pclose(p);
	*status = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (buf)
		buf[len] = '\0';
	return buf;
}

TEST(shipped_scenarios_run, "section-7")
{
	static const char *const files[] = {
		"seed-examples.sim", "hierarchy.sim", "stranded-slices.sim",
		"stranded-slices-hardlimits.sim", "latency-periods.sim",
		"kubernetes-node-64.sim",
	};
	static const char *const policies[] = {"v4", "upstream", "hardlimits"};
	ASSERT_TRUE(getenv("CFSBW_BIN") != NULL); /* make test sets it */
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		for (size_t k = 0; k < 3; k++) {
			char args[256];
			int st;
			snprintf(args, sizeof args,
				 "scenarios/%s --json --duration 2s --policy %s",
				 files[i], policies[k]);
			char *out = capture(args, &st);
			ASSERT_TRUE(out != NULL);
			if (st != 0)
				TEST_FAIL_AT("cfsbw sim %s: exit status %d", args, st);
			ASSERT_INT(st, ==, 0);
			ASSERT_TRUE(strstr(out, "\"groups\": {") != NULL);
			free(out);
		}
	}
}

/* The JSON report of text run with the given seed, its seed line left
 * out; NULL if it did not load or run.  The caller frees it. */
static char *report_with_seed(const char *text, uint64_t seed, bool *random)
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s = NULL;
	char *out = NULL;
	size_t len = 0;
	cfsbw_sim_scenario_init(&sc);
	int rc = cfsbw_sim_scenario_parse(&sc, text, &err);
	sc.seed = seed;
	*random = !rc && cfsbw_sim_scenario_is_random(&sc);
	if (!rc)
		rc = cfsbw_sim_create(&sc, &s, &err);
	if (!rc)
		rc = cfsbw_sim_run(s);
	FILE *f = rc ? NULL : open_memstream(&out, &len);
	if (f) {
		cfsbw_sim_report_json(s, "t", f);
		fclose(f);
		char *at = strstr(out, "\"seed\": ");
		if (at) /* the number, blanked */
			for (at += 8; *at >= '0' && *at <= '9'; at++)
				*at = ' ';
	}
	cfsbw_sim_free(s);
	cfsbw_sim_scenario_free(&sc);
	return out;
}

/*
 * Section 7: the seed changes a run only through its draws, so
 * cfsbw_sim_scenario_is_random() must say so exactly where two seeds give
 * two runs: `cfsbw plan` runs one seed when it says no.  Each workload
 * that draws, alone beside ones that do not, makes the runs differ.
 */
TEST(seeds_matter_only_where_drawn, "section-7")
{
	static const char head[] =
		"cpus 2\nduration 3s\npolicy upstream\n"
		"group /a cpu.cfs_quota_us=20000 cpu.cfs_period_us=100000\n"
		"task /a requests rate=5/s service=30ms arrivals=periodic\n"
		"task / duty run=3ms sleep=7ms count=3\n"
		"task /a duty run=2ms sleep=9ms phase=4ms\n"
		"task / busy\n";
	static const struct {
		const char *line;
		bool random;
	} cases[] = {
		{"", false},
		{"task /a requests rate=5/s service=30ms\n", true},
		{"task /a requests rate=5/s service=exp:30ms arrivals=periodic\n",
		 true},
		{"task / duty run=3ms sleep=7ms phase=random count=3\n", true},
		/* R10 as Linux since 6.4: /a's first period drawn */
		{"first_period random\n", true},
		{"first_period 50%\n", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[1024];
		bool r1, r2;
		snprintf(text, sizeof text, "%s%s", head, cases[i].line);
		char *a = report_with_seed(text, 1, &r1);
		char *b = report_with_seed(text, 7, &r2);
		bool loaded = a && b;
		bool same = loaded && !strcmp(a, b);
		free(a);
		free(b);
		ASSERT_TRUE(loaded);
		if (r1 != cases[i].random || r2 != r1 || same == cases[i].random)
			TEST_FAIL_AT("case %zu (%s): is_random %d, runs of seeds "
				     "1 and 7 %s", i, cases[i].line, r1,
				     same ? "the same" : "differ");
		ASSERT_INT(r1, ==, cases[i].random);
		ASSERT_INT(same, ==, !cases[i].random);
	}
}

/*
 * Every "$ cfsbw sim ..." block in scenarios/README.md: each line shown
 * under it must appear, as it is, in what the command prints now.  The
 * numbers in the README cannot drift from the simulator's.
 */
TEST(readme_shows_what_the_command_prints, "section-7")
{
	ASSERT_TRUE(getenv("CFSBW_BIN") != NULL); /* make test sets it */
	FILE *f = fopen("scenarios/README.md", "r");
	ASSERT_TRUE(f != NULL);
	char line[512];
	char *out = NULL;
	int blocks = 0, checked = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "$ cfsbw sim ", 12)) {
			char args[512];
			int st;
			memcpy(args, line + 12, strlen(line + 12) + 1);
			args[strcspn(args, "#")] = '\0';
			free(out);
			out = capture(args, &st);
			ASSERT_TRUE(out != NULL);
			ASSERT_INT(st, ==, 0);
			blocks++;
		} else if (!strncmp(line, "```", 3)) {
			free(out);
			out = NULL;
		} else if (out && line[0]) {
			if (!strstr(out, line)) {
				TEST_FAIL_AT("README line not printed: \"%s\"",
					     line);
				break;
			}
			checked++;
		}
	}
	fclose(f);
	free(out);
	ASSERT_INT(blocks, >=, 4);
	ASSERT_INT(checked, >=, 20);
}

TEST_MAIN(TEST_ENTRY(full_example_parses)
	  TEST_ENTRY(hostile_scenarios_are_refused_naming_the_line)
	  TEST_ENTRY(machine_directive_errors)
	  TEST_ENTRY(group_errors)
	  TEST_ENTRY(task_errors)
	  TEST_ENTRY(trace_csv)
	  TEST_ENTRY(random_scenarios_load_or_fail_cleanly)
	  TEST_ENTRY(command_exits_2_naming_file_and_line)
	  TEST_ENTRY(memory_budget_bounds_the_run)
	  TEST_ENTRY(shipped_scenarios_run)
	  TEST_ENTRY(seeds_matter_only_where_drawn)
	  TEST_ENTRY(readme_shows_what_the_command_prints))
