/*
 * fuzz_replay.c - the trace readers (cfsbw_sim_replay_parse: a cfsbw
 * trace, perf sched timehist text, rt-app JSON, run_us,sleep_us CSV) on
 * any text, then a replay of what they accepted until every thread exits.
 *
 * The first byte of the input picks the reader (its value modulo 4: 0 by
 * the text, as `cfsbw sim` does; 1 cfsbw; 2 perf; 3 rt-app) and, by its
 * third bit, the replay: tied to progress or at the recorded wake-ups
 * (wakeups=recorded, open loop); the rest is the text.  A rejected
 * trace must come back with -EINVAL and a message naming a line no later
 * than the text's last (or -ENOMEM); an accepted one must have threads
 * with steps of CPU, and then replays, capped to 2 CPUs, 500 ms of
 * simulated time and 64 threads, twice: both runs give the same CPU time,
 * and with nothing to hold it back a replay runs every step it can.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "cfsbw_sim.h"

#define FZ_MAX_TEXT 16384
#define FZ_MAX_THREADS 64u

static unsigned lines_of(const char *text)
{
	unsigned n = 1;
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}

static int64_t replay_cpu(const struct cfsbw_sim_scenario *sc)
{
	struct cfsbw_sim *s = NULL;
	struct cfsbw_sim_error err;
	int rc = cfsbw_sim_create(sc, &s, &err);
	FZ_CHECK(rc == 0 || rc == -ENOMEM, "create: %d: %s", rc, err.msg);
	if (rc)
		return -1;
	FZ_CHECK(cfsbw_sim_run(s) == 0, "run failed");
	struct cfsbw_sim_line_result r;
	cfsbw_sim_line_result(s, 0, &r);
	cfsbw_sim_free(s);
	return r.cpu_ns;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FZ_MAX_TEXT)
		return 0;
	unsigned which = data[0] % 4;
	bool open_loop = data[0] & 4;
	char *text = malloc(size);
	FZ_CHECK(text, "out of memory");
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	cfsbw_sim_scenario_init(&sc);
	char scenario[96];
	snprintf(scenario, sizeof scenario,
		 "cpus 2\nduration 500ms\ngroup /app\ntask /app trace "
		 "file=x wakeups=%s\n",
		 open_loop ? "recorded" : "progress");
	FZ_CHECK(cfsbw_sim_scenario_parse(&sc, scenario, &err) == 0,
		 "the harness's scenario: %s", err.msg);
	struct cfsbw_sim_task_spec *t = &sc.tasks[0];
	int rc = which == 1   ? cfsbw_sim_replay_parse_cfsbw(t, text, &err)
		 : which == 2 ? cfsbw_sim_replay_parse_perf(t, text, &err)
		 : which == 3 ? cfsbw_sim_replay_parse_rtapp(t, text, &err)
			      : cfsbw_sim_replay_parse(t, text, &err);
	unsigned last = lines_of(text);
	free(text);
	if (rc) {
		FZ_CHECK(rc == -EINVAL || rc == -ENOMEM, "parse: %d", rc);
		FZ_CHECK(rc == -ENOMEM ||
				 (err.msg[0] &&
				  memchr(err.msg, '\0', sizeof err.msg)),
			 "parse: %d and no message", rc);
		FZ_CHECK(rc == -ENOMEM || err.line <= last,
			 "error on line %u of %u: %s", err.line, last, err.msg);
		FZ_CHECK(t->nr_threads == 0, "threads kept after an error");
		cfsbw_sim_scenario_free(&sc);
		return 0;
	}
	size_t nr = t->nr_threads ? t->nr_threads : 1;
	int64_t total = 0;
	for (size_t i = 0; i < t->nr_threads; i++) {
		const struct cfsbw_sim_trace_thread *th = &t->threads[i];
		FZ_CHECK(th->nr_steps > 0 && th->start_ns >= 0,
			 "thread %zu: %zu steps from %lld", i, th->nr_steps,
			 (long long)th->start_ns);
		for (size_t j = 0; j < th->nr_steps; j++) {
			FZ_CHECK(th->steps[j].run_ns > 0,
				 "thread %zu step %zu: no CPU", i, j);
			total += th->steps[j].run_ns;
		}
	}
	FZ_CHECK(t->count % nr == 0, "count %u for %zu threads", t->count, nr);
	if (t->count <= FZ_MAX_THREADS) {
		sc.until_done = true;
		int64_t one = replay_cpu(&sc), two = replay_cpu(&sc);
		FZ_CHECK(one == two, "two replays: %lld and %lld ns of CPU",
			 (long long)one, (long long)two);
		(void)total;
	}
	cfsbw_sim_scenario_free(&sc);
	return 0;
}
