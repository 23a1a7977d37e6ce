/*
 * pelt.c - averaged load for load balancing (`balance_load pelt`): Linux's
 * per-entity load tracking, as the balancer reads it; and each CPU's
 * averaged busy time, its utilisation, for `wake_scan util`.
 *
 * Linux balances CPUs by a decayed average of their load, not by the
 * weight queued at the instant of the pass: every 1024 us period the
 * average keeps y of itself (y^32 = 1/2: a 32-period half-life) and takes
 * the rest from the load of that period.  A task that sleeps still weighs
 * on its CPU for a while, decaying; one that moves takes its average with
 * it (remove_entity_load_avg on the old CPU, attach on the new one).
 *
 * The model keeps two kinds of average, in fixed point (SIM_PELT_SHIFT
 * bits below the unit), advanced lazily to the current period:
 * - a CPU's: the average of the weight queued at its root.  Averaging is
 *   linear, so that is the sum of its tasks' averages, the sleeping ones
 *   decaying, as long as nothing moves; a move takes the task's share out
 *   of one CPU's average and into the other's.
 * - a task's: how runnable it has been (1024 while runnable, 0 asleep),
 *   Linux's task load_avg.  Its share of its CPU's average is that scaled
 *   by the task's share of the root's load (task_h_load).
 *
 * The average moves at period boundaries only: a change of load within a
 * period counts from the next one (Linux counts the part of the period
 * too; at most 1 ms early or late out of a 32 ms half-life).  Integers
 * only, so that a run is the same on every machine.
 */
#include "sim/sim_int.h"

/* 2^32 * y^k for k = 0..31, y = 2^(-1/32), rounded down (0: 2^32 - 1). */
static const uint32_t decay_frac[32] = {
	0xffffffff, 0xfa83b2db, 0xf5257d15, 0xefe4b99b, 0xeac0c6e7,
	0xe5b906e7, 0xe0ccdeec, 0xdbfbb797, 0xd744fcca, 0xd2a81d91,
	0xce248c15, 0xc9b9bd86, 0xc5672a11, 0xc12c4cca, 0xbd08a39f,
	0xb8fbaf47, 0xb504f333, 0xb123f581, 0xad583eea, 0xa9a15ab4,
	0xa5fed6a9, 0xa2704303, 0x9ef53260, 0x9b8d39b9, 0x9837f051,
	0x94f4efa8, 0x91c3d373, 0x8ea4398b, 0x8b95c1e3, 0x88980e80,
	0x85aac367, 0x82cd8698,
};

/* v * y^n: halved once per 32 periods, then the fraction of the rest. */
static uint64_t decay(uint64_t v, uint64_t n)
{
	if (n >= 64 * 32)
		return 0;
	v >>= n / 32;
	__extension__ typedef unsigned __int128 u128;
	return (uint64_t)(((u128)v * decay_frac[n % 32]) >> 32);
}

/*
 * Advance p to now's period, its input having been `held` (not in fixed
 * point) since it was last advanced: avg = held + (avg - held) * y^n.
 */
void cfsbw_sim__pelt_advance(struct sim_pelt *p, int64_t now, uint64_t held)
{
	int64_t period = now / SIM_PELT_PERIOD_NS;
	if (period <= p->period)
		return;
	uint64_t n = (uint64_t)(period - p->period);
	uint64_t target = held << SIM_PELT_SHIFT;
	p->avg = p->avg >= target ? target + decay(p->avg - target, n)
				  : target - decay(target - p->avg, n);
	p->period = period;
}

/* CPU c's average brought up to now: its root queue has held the load it
 * holds since the average was last advanced (every change of that load
 * advances it first: cfsbw_sim__pelt_load_changing). */
static struct sim_pelt *cpu_avg_now(const struct cfsbw_sim *s, unsigned c)
{
	struct sim_pelt *p = &s->cpu_pelt[c];
	cfsbw_sim__pelt_advance(p, s->now, s->groups[0]->pc[c].q.load);
	return p;
}

/* The CPU's average now, in load units. */
uint64_t cfsbw_sim__pelt_cpu_load(struct cfsbw_sim *s, unsigned c)
{
	return cpu_avg_now(s, c)->avg >> SIM_PELT_SHIFT;
}

/* The root queue q (the CPU's) is about to change its load: what it held
 * until now goes into the CPU's average first. */
void cfsbw_sim__pelt_root_changing(const struct cfsbw_sim *s,
				   const struct sim_cfs_rq *q)
{
	cpu_avg_now(s, (unsigned)(q->owner - s->groups[0]->pc));
}

/* wake_scan util: CPU c's utilisation, the average of its busy time
 * (1024 while it runs a task, 0 idle: Linux's util_avg, summed over the
 * tasks on it, adds up to the same over a domain, which is what it is
 * read for), brought up to now; cpu_set_idle advances it before each
 * change. */
uint64_t cfsbw_sim__pelt_cpu_util(const struct cfsbw_sim *s, unsigned c)
{
	struct sim_pelt *p = &s->cpu_util[c];
	cfsbw_sim__pelt_advance(p, s->now, s->cpus[c].idle ? 0 : NICE_0_LOAD);
	return p->avg >> SIM_PELT_SHIFT;
}

/* A task's average starts at its first enqueue or first move, whichever
 * comes first (a duty task starting late may be woken onto another CPU
 * before it was ever queued): 1024, runnable the whole time
 * (workload_init), from now.  True if it starts now. */
static bool task_starts(const struct cfsbw_sim *s, struct sim_task *t)
{
	if (t->pelt.period >= 0)
		return false;
	t->pelt.period = s->now / SIM_PELT_PERIOD_NS;
	return true;
}

/* Task t becomes runnable (or stops being): its average so far. */
void cfsbw_sim__pelt_task_runnable(const struct cfsbw_sim *s,
				   struct sim_task *t, bool runnable)
{
	if (task_starts(s, t))
		return;
	/* it held the other value until now */
	cfsbw_sim__pelt_advance(&t->pelt, s->now, runnable ? 0 : NICE_0_LOAD);
}

/* What task t adds to its CPU's average: how runnable it has been, times
 * its share h of the root's load (h: task_h_load, in load units). */
uint64_t cfsbw_sim__pelt_task_load(const struct cfsbw_sim *s,
				   struct sim_task *t, uint64_t h)
{
	task_starts(s, t);
	cfsbw_sim__pelt_advance(&t->pelt, s->now,
				t->runnable ? NICE_0_LOAD : 0);
	__extension__ typedef unsigned __int128 u128;
	return (uint64_t)((u128)t->pelt.avg * h / NICE_0_LOAD);
}

/* Task t moves from CPU from to CPU to, carrying its share (fixed point)
 * of from's average with it, by its task_h_load before the move. */
void cfsbw_sim__pelt_task_moves(struct cfsbw_sim *s, struct sim_task *t,
				unsigned from, unsigned to)
{
	uint64_t share =
		cfsbw_sim__pelt_task_load(s, t, cfsbw_sim__task_h_load(t));
	struct sim_pelt *a = cpu_avg_now(s, from), *b = cpu_avg_now(s, to);
	/* what decayed into from's average may be less than the task's own
	 * (its weight share moved since): no more than is there */
	if (share > a->avg)
		share = a->avg;
	a->avg -= share;
	b->avg += share;
}
