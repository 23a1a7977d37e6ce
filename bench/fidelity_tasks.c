/*
 * fidelity_tasks.c - a scenario's workloads as real processes, for
 * bench_fidelity's kernel side (fidelity_tasks.h).
 */
#include "fidelity_tasks.h"

/* The simulator's generator and exponential sampler (rng.c), so that a
 * task can draw what the simulator draws for the same seed. */
#include "sim/sim_int.h"

#include <errno.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int64_t rand_exp(uint64_t *s, int64_t mean_ns)
{
	double u = ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
	return (int64_t)(-log(u) * (double)mean_ns);
}

/*
 * A task's random draws: its own stream, or the simulator's for the run's
 * seed (fk_task_main's sim_stream), in the simulator's order.
 */
struct draws {
	bool sim;
	uint64_t own;
	struct sim_rng rng;
};

static uint64_t draw_u64(struct draws *d)
{
	return d->sim ? cfsbw_sim__rng_next(&d->rng) : splitmix(&d->own);
}

static int64_t draw_exp(struct draws *d, int64_t mean_ns)
{
	return d->sim ? cfsbw_sim__rng_exp(&d->rng, mean_ns)
		      : rand_exp(&d->own, mean_ns);
}

static void spin_cpu(int64_t cpu_ns)
{
	int64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
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
			    uint64_t seed, bool sim_stream,
			    struct fk_latencies *lat)
{
	static struct draws d; /* 4 KB of table: not on the stack */
	d.sim = sim_stream;
	d.own = seed;
	if (sim_stream)
		cfsbw_sim__rng_seed(&d.rng, seed);
	else
		splitmix(&d.own);
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
		 * next arrival.  As the simulator: the first gap drawn at the
		 * start (periodic: the first arrival at once), then at each
		 * arrival its service time, then the next gap. */
		static int64_t queue[4096][2]; /* arrival, service */
		unsigned head = 0, len = 0;
		int64_t next = t->arrivals_periodic
				       ? t0
				       : t0 + draw_exp(&d, t->mean_gap_ns);
		for (;;) {
			int64_t now = now_ns(CLOCK_MONOTONIC);
			while (next <= now) {
				int64_t service =
					t->service_exp
						? draw_exp(&d, t->service_ns)
						: t->service_ns;
				if (len < 4096) {
					unsigned q = (head + len++) % 4096;
					queue[q][0] = next;
					queue[q][1] = service;
				}
				next += t->arrivals_periodic
						? t->mean_gap_ns
						: draw_exp(&d, t->mean_gap_ns);
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
