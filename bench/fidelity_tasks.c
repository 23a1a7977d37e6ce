/*
 * fidelity_tasks.c - a scenario's workloads as real processes, for
 * bench_fidelity's kernel side (fidelity_tasks.h).
 */
#include "fidelity_tasks.h"

/* The simulator's generator and exponential sampler (rng.c), so that a
 * task can draw what the simulator draws for the same seed. */
#include "sim/sim_int.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A task's draws: its two streams, as the simulator keys them for it. */
struct draws {
	struct sim_rng rng;
	struct sim_stream st[2]; /* arrivals or phase; service times */
};

static uint64_t draw_u64(struct draws *d)
{
	return cfsbw_sim__stream_next(&d->st[0]);
}

static int64_t draw_exp(struct draws *d, unsigned which, int64_t mean_ns)
{
	return cfsbw_sim__rng_exp(&d->rng, &d->st[which], mean_ns);
}

static void spin_cpu(int64_t cpu_ns)
{
	int64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

/* Stream 2^62 of a seed: tasks draw from 2k and 2k + 1, the groups'
 * first periods from 2^63 + i (setup.c). */
#define BENCH_STREAM (UINT64_C(1) << 62)

uint64_t fk_draw_below(uint64_t seed, uint64_t n)
{
	struct sim_stream st;
	cfsbw_sim__stream_seed(&st, cfsbw_sim__stream_key(seed, BENCH_STREAM));
	return cfsbw_sim__stream_next(&st) % n;
}

void fk_sleep_until(int64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void note(struct fk_latencies *lat, int64_t ns)
{
	uint64_t i = __atomic_fetch_add(&lat->count, 1, __ATOMIC_RELAXED);
	if (i < FK_MAX_LATENCIES)
		lat->ns[i] = ns;
}

_Noreturn void fk_task_main(const struct cfsbw_sim_task_spec *t,
			    uint64_t seed, uint64_t index,
			    struct fk_latencies *lat)
{
	static struct draws d; /* 4 KB of table: not on the stack */
	cfsbw_sim__rng_init(&d.rng);
	cfsbw_sim__task_streams(d.st, seed, index);
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	switch (t->workload) {
	case CFSBW_SIM_WL_BUSY:
		for (;;)
			;
	case CFSBW_SIM_WL_DUTY: {
		int64_t phase = t->phase_ns, cycle = t->run_ns + t->sleep_ns;
		if (t->phase_random)
			phase = (int64_t)(draw_u64(&d) % (uint64_t)cycle);
		int64_t start = t0 + phase;
		if (phase > 0)
			fk_sleep_until(start);
		for (;;) {
			/* a cycle starts when its sleep was due to end */
			spin_cpu(t->run_ns);
			int64_t end = now_ns(CLOCK_MONOTONIC);
			note(lat, end - start);
			start = end + t->sleep_ns;
			fk_sleep_until(start);
		}
	}
	case CFSBW_SIM_WL_REQUESTS: {
		/* One server, FIFO: serve what has arrived, else sleep to the
		 * next arrival.  As the simulator (requests.c): the first gap
		 * drawn at the start (periodic: the first arrival at once),
		 * the gaps from one stream, the service times from the
		 * other. */
		static int64_t queue[4096][2]; /* arrival, service */
		unsigned head = 0, len = 0;
		int64_t next = t->arrivals_periodic
				       ? t0
				       : t0 + draw_exp(&d, 0, t->mean_gap_ns);
		for (;;) {
			int64_t now = now_ns(CLOCK_MONOTONIC);
			while (next <= now) {
				int64_t service =
					t->service_exp
						? draw_exp(&d, 1, t->service_ns)
						: t->service_ns;
				if (len < 4096) {
					unsigned q = (head + len++) % 4096;
					queue[q][0] = next;
					queue[q][1] = service;
				}
				next += t->arrivals_periodic
						? t->mean_gap_ns
						: draw_exp(&d, 0, t->mean_gap_ns);
			}
			if (!len) {
				fk_sleep_until(next);
				continue;
			}
			int64_t arrived = queue[head][0];
			int64_t service = queue[head][1];
			head = (head + 1) % 4096;
			len--;
			spin_cpu(service);
			note(lat, now_ns(CLOCK_MONOTONIC) - arrived);
		}
	}
	case CFSBW_SIM_WL_TRACE:
	case CFSBW_SIM_WL_COUNT:
		break;
	}
	_exit(3);
}
