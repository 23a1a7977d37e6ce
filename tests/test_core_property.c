/*
 * test_core_property.c - long random sequences of charges, wakeups,
 * sleeps, timer expiries and configuration writes, from a seeded
 * generator, with the statistics (R12), conservation (R13) and the
 * throttling state (R7, R9, R10, R11) checked after every step against
 * the test's own bookkeeping.
 *
 * CFSBW_TEST_SEED=n runs that one seed; a failure prints its seed and
 * step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_driver.h"
#include "harness.h"

#define NR_STEPS 2500
#define NR_SEEDS 24
#define MAX_DELTA MS(4)

static const char *const prop_paths[] = {"/a", "/a/b", "/a/c", "/d", "/d/e",
					 "/d/e/f"};
#define NR_PATHS (sizeof prop_paths / sizeof prop_paths[0])
#define NR_GROUPS (NR_PATHS + 1) /* and the root */

struct prop {
	struct drv d;
	enum cfsbw_policy policy;
	uint64_t rng;
	struct cfsbw_group *g[NR_GROUPS]; /* [0] is the root */
	/* Per group, before the step: */
	int64_t sum[NR_GROUPS];  /* pool + accounts' runtime (finite) */
	int64_t pool[NR_GROUPS];
	struct cfsbw_stats st[NR_GROUPS];
	uint64_t fires[NR_GROUPS];
	bool had_throttled[NR_GROUPS];
	bool was_limited[NR_GROUPS];
	/* What the step did. */
	int64_t charged[NR_GROUPS]; /* delta charged through each group */
	bool reset[NR_GROUPS];      /* configuration written */
	int64_t last_delta;         /* of the step's charge */
	const char *what;           /* the step, for the failure message */
	int offline_rq;             /* the rq taken offline, or -1 */
	/* hardlimits: an rq that goes away takes back what it lent, which
	 * may leave a borrower in debt (or a throttled one in credit) until
	 * its next charge or refresh. */
	bool reclaimed;
};

static bool limited(struct cfsbw_group *g)
{
	return cfsbw_group_quota_ns(g) != CFSBW_RUNTIME_INF;
}

static int64_t group_sum(struct prop *p, size_t i)
{
	struct cfsbw_group *g = p->g[i];
	int64_t s = cfsbw_group_pool_runtime_ns(g);
	for (unsigned rq = 0; rq < p->d.nr_rq; rq++)
		s += cfsbw_account_runtime_ns(g, rq);
	return s;
}

static bool any_account_throttled(struct prop *p, size_t i)
{
	for (unsigned rq = 0; rq < p->d.nr_rq; rq++)
		if (cfsbw_account_throttled(p->g[i], rq))
			return true;
	return false;
}

static void snapshot(struct prop *p)
{
	for (size_t i = 0; i < NR_GROUPS; i++) {
		p->was_limited[i] = limited(p->g[i]);
		if (limited(p->g[i])) {
			p->sum[i] = group_sum(p, i);
			p->pool[i] = cfsbw_group_pool_runtime_ns(p->g[i]);
		}
		cfsbw_group_stats(p->g[i], &p->st[i]);
		p->fires[i] = drv_of(p->g[i])->nr_fires;
		p->had_throttled[i] = any_account_throttled(p, i);
		p->charged[i] = 0;
		p->reset[i] = false;
	}
	p->last_delta = 0;
	p->what = "nothing";
	p->offline_rq = -1;
	drv_clear(&p->d);
}

/* R12: never backwards; throttled_time is the sum of closed intervals;
 * nr_periods counts the refreshes (each fired on time: k = 1). */
static void check_stats(struct prop *p, size_t i)
{
	struct cfsbw_stats st;
	cfsbw_group_stats(p->g[i], &st);
	const struct cfsbw_stats *o = &p->st[i];
	ASSERT_UINT(st.nr_periods, >=, o->nr_periods);
	ASSERT_UINT(st.nr_throttled, >=, o->nr_throttled);
	ASSERT_UINT(st.throttled_time, >=, o->throttled_time);
	ASSERT_UINT(st.nr_bursts, >=, o->nr_bursts);
	ASSERT_UINT(st.burst_time, >=, o->burst_time);
	ASSERT_UINT(st.nr_throttled, <=, st.nr_periods);
	ASSERT_UINT(st.throttled_time, ==, drv_of(p->g[i])->throttled_time);
	uint64_t fires = drv_of(p->g[i])->nr_fires - p->fires[i];
	if (limited(p->g[i]) && !p->reset[i]) {
		ASSERT_UINT(st.nr_periods - o->nr_periods, ==, fires);
		if (fires)
			ASSERT_UINT(st.nr_throttled - o->nr_throttled, ==,
				    p->had_throttled[i] ? fires : 0);
	}
}

/* R13: runtime is conserved between pool and accounts; it enters only at
 * a refill (quota, or up to quota + burst) and leaves only by charges, or
 * when slack is returned to a pool that is already full. */
static void check_conservation(struct prop *p, size_t i)
{
	struct cfsbw_group *g = p->g[i];
	/* hardlimits has no pool: its runtime lives in the accounts. */
	if (!limited(g) || p->policy == CFSBW_POLICY_HARDLIMITS)
		return;
	int64_t quota = cfsbw_group_quota_ns(g);
	int64_t burst = p->policy == CFSBW_POLICY_UPSTREAM ? cfsbw_group_burst_ns(g) : 0;
	int64_t pool = cfsbw_group_pool_runtime_ns(g);
	ASSERT_INT(pool, >=, 0);
	ASSERT_INT(pool, <=, quota + burst);
	if (p->reset[i]) {
		/* R4: a full pool (upstream: refilled as at a refresh, on top
		 * of what was left when it was limited), every account reset. */
		int64_t full = quota;
		if (p->policy == CFSBW_POLICY_UPSTREAM && p->was_limited[i])
			full = p->pool[i] + quota < quota + burst
				       ? p->pool[i] + quota
				       : quota + burst;
		ASSERT_INT(pool, ==, full);
		for (unsigned rq = 0; rq < p->d.nr_rq; rq++) {
			ASSERT_INT(cfsbw_account_runtime_ns(g, rq), >=, 0);
			ASSERT_INT(cfsbw_account_runtime_ns(g, rq), <=, 1);
		}
		return;
	}
	if (p->offline_rq >= 0) {
		/* The rq's accounts gave their runtime back and start afresh;
		 * debt is forgiven, so only the upper bound holds. */
		ASSERT_INT(cfsbw_account_runtime_ns(g, (unsigned)p->offline_rq), ==, 0);
		return;
	}
	int64_t expect = p->sum[i] - p->charged[i];
	if (drv_of(g)->nr_fires != p->fires[i]) {
		int64_t refill = p->policy == CFSBW_POLICY_UPSTREAM
					 ? p->pool[i] + quota
					 : quota;
		if (refill > quota + burst)
			refill = quota + burst;
		expect += refill - p->pool[i];
	}
	/* Runtime given back to a full pool is dropped, never more. */
	int64_t sum = group_sum(p, i);
	ASSERT_INT(sum, <=, expect);
	if (sum < expect)
		ASSERT_INT(pool, ==, quota + burst);
}

/* R7, R10, R11, R13 on every account. */
static void check_accounts(struct prop *p, size_t i)
{
	struct cfsbw_group *g = p->g[i];
	struct drv_group *dg = drv_of(g);
	bool fin = limited(g);
	bool any = false;
	for (unsigned rq = 0; rq < p->d.nr_rq; rq++) {
		bool own = cfsbw_account_throttled(g, rq);
		any |= own;
		/* The callbacks told the truth. */
		ASSERT_TRUE(own == (dg->throttled_since[rq] >= 0));
		if (!fin) {
			ASSERT_FALSE(own);
		} else if (!p->reclaimed) {
			int64_t rr = cfsbw_account_runtime_ns(g, rq);
			/* R13: overrun of one tick at most. */
			ASSERT_INT(rr, >=, -MAX_DELTA);
			/* R7/R10: throttled iff out of runtime. */
			if (own)
				ASSERT_INT(rr, <=, 0);
			else
				ASSERT_INT(rr, >=, 0);
		}
		bool eff = false;
		for (struct cfsbw_group *q = g; q; q = cfsbw_group_parent(q))
			eff |= cfsbw_account_throttled(q, rq);
		ASSERT_TRUE(cfsbw_throttled(g, rq) == eff); /* R11 */
	}
	/* R10: something throttled is always waiting for a timer. */
	if (any)
		ASSERT_INT(dg->period_expiry, >=, 0);
	ASSERT_UINT(dg->nr_double_starts, ==, 0);
}

static void check_all(struct prop *p)
{
	for (size_t i = 0; i < NR_GROUPS; i++) {
		check_stats(p, i);
		if (test_failed)
			return;
		check_conservation(p, i);
		if (test_failed)
			return;
		check_accounts(p, i);
		if (test_failed)
			return;
	}
	for (unsigned rq = 0; rq < p->d.nr_rq; rq++)
		ASSERT_UINT(cfsbw_rq_nr_running(p->d.tree, rq), ==,
			    drv_model_nr_running(&p->d, rq)); /* R9 */
	ASSERT_UINT(p->d.nr_bad_events, ==, 0);
	/* R7: an account throttles only when its pool is empty (in v4 also
	 * when one slice does not cover the charge). */
	for (size_t e = 0; e < p->d.nev; e++)
		if (p->d.ev[e].kind == DRV_THROTTLE &&
		    p->policy != CFSBW_POLICY_HARDLIMITS &&
		    (p->policy != CFSBW_POLICY_V4 ||
		     p->last_delta < cfsbw_tree_slice_ns(p->d.tree)))
			ASSERT_INT(cfsbw_group_pool_runtime_ns(p->d.ev[e].g), ==, 0);
}

static size_t index_of(struct prop *p, struct cfsbw_group *g)
{
	for (size_t i = 0; i < NR_GROUPS; i++)
		if (p->g[i] == g)
			return i;
	return 0;
}

static void step_charge(struct prop *p)
{
	size_t i = (size_t)drv_rng_range(&p->rng, 0, NR_GROUPS - 1);
	unsigned rq = (unsigned)drv_rng_range(&p->rng, 0, p->d.nr_rq - 1);
	struct cfsbw_group *g = p->g[i];
	if (!drv_of(g)->tasks[rq] || cfsbw_throttled(g, rq))
		return;
	int64_t delta = drv_rng_range(&p->rng, 1, MAX_DELTA);
	p->last_delta = delta;
	for (struct cfsbw_group *q = g; q; q = cfsbw_group_parent(q))
		if (limited(q))
			p->charged[index_of(p, q)] += delta;
	p->what = "charge";
	bool stop = drv_charge(&p->d, g, rq, delta);
	ASSERT_TRUE(stop == cfsbw_throttled(g, rq));
}

static void step_config(struct prop *p)
{
	size_t i = (size_t)drv_rng_range(&p->rng, 1, NR_GROUPS - 1);
	struct cfsbw_group *g = p->g[i];
	char buf[32];
	int r = (int)drv_rng_range(&p->rng, 0, 9);
	const char *file = p->policy == CFSBW_POLICY_HARDLIMITS
				   ? "cpu.cfs_runtime_us"
				   : "cpu.cfs_quota_us";
	if (r == 0) {
		snprintf(buf, sizeof buf, "-1");
	} else if (r == 1) {
		file = "cpu.cfs_period_us";
		snprintf(buf, sizeof buf, "%lld",
			 (long long)drv_rng_range(&p->rng, 20000, 200000));
	} else if (r == 2 && p->policy == CFSBW_POLICY_UPSTREAM && limited(g)) {
		file = "cpu.cfs_burst_us";
		snprintf(buf, sizeof buf, "%lld",
			 (long long)drv_rng_range(&p->rng, 0, cfsbw_group_quota_ns(g) / 1000));
	} else if (r == 3) {
		/* Rejected: changes nothing. */
		snprintf(buf, sizeof buf, "999");
	} else {
		snprintf(buf, sizeof buf, "%lld",
			 (long long)drv_rng_range(&p->rng, 1000, 40000));
	}
	/* R2: a finite quota below the burst is refused (upstream). */
	bool below_burst = strcmp(file, "cpu.cfs_period_us") != 0 &&
			   strcmp(file, "cpu.cfs_burst_us") != 0 && r != 0 &&
			   strtoll(buf, NULL, 10) * 1000 < cfsbw_group_burst_ns(g);
	p->what = file;
	int err = drv_write(&p->d, g, file, buf);
	if (r == 3 || below_burst) {
		ASSERT_INT(err, ==, -EINVAL);
		return;
	}
	ASSERT_INT(err, ==, 0);
	p->reset[i] = true;
}

static void step(struct prop *p)
{
	int r = (int)drv_rng_range(&p->rng, 0, 99);
	if (r < 55) {
		step_charge(p);
	} else if (r < 70) {
		size_t i = (size_t)drv_rng_range(&p->rng, 0, NR_GROUPS - 1);
		unsigned rq = (unsigned)drv_rng_range(&p->rng, 0, p->d.nr_rq - 1);
		if (drv_of(p->g[i])->tasks[rq] < 3)
			drv_enqueue(&p->d, p->g[i], rq);
		p->what = "enqueue";
	} else if (r < 78) {
		size_t i = (size_t)drv_rng_range(&p->rng, 0, NR_GROUPS - 1);
		unsigned rq = (unsigned)drv_rng_range(&p->rng, 0, p->d.nr_rq - 1);
		if (drv_of(p->g[i])->tasks[rq])
			drv_dequeue(&p->d, p->g[i], rq);
		p->what = "dequeue";
	} else if (r < 80) {
		/* An rq goes idle: every task on it sleeps (upstream: slack). */
		unsigned rq = (unsigned)drv_rng_range(&p->rng, 0, p->d.nr_rq - 1);
		for (size_t i = 0; i < NR_GROUPS; i++)
			while (drv_of(p->g[i])->tasks[rq])
				drv_dequeue(&p->d, p->g[i], rq);
		p->what = "idle";
	} else if (r < 98) {
		/* Time passes; at most the next timer fires. */
		int64_t t = p->d.now + drv_rng_range(&p->rng, 0, MS(3));
		int64_t next = -1;
		for (size_t i = 0; i < p->d.ngroups; i++) {
			struct drv_group *dg = &p->d.groups[i];
			if (dg->period_expiry >= 0 && (next < 0 || dg->period_expiry < next))
				next = dg->period_expiry;
			if (dg->slack_expiry >= 0 && (next < 0 || dg->slack_expiry < next))
				next = dg->slack_expiry;
		}
		p->what = "time";
		drv_advance(&p->d, next >= 0 && next < t ? next : t);
	} else if (r < 99) {
		step_config(p);
		p->what = "config";
	} else if (drv_rng_range(&p->rng, 0, 1)) {
		/* A runqueue goes away and comes back empty. */
		unsigned rq = (unsigned)drv_rng_range(&p->rng, 0, p->d.nr_rq - 1);
		p->what = "offline";
		p->offline_rq = (int)rq;
		p->reclaimed |= p->policy == CFSBW_POLICY_HARDLIMITS;
		cfsbw_rq_offline(p->d.tree, rq, p->d.now);
		for (size_t i = 0; i < p->d.ngroups; i++) {
			struct drv_group *dg = &p->d.groups[i];
			dg->tasks[rq] = 0;
			/* Unthrottled, its time counted (the callback is
			 * optional here: the rq is gone). */
			if (dg->throttled_since[rq] >= 0) {
				if (!p->d.clock_needs_tasks)
					dg->throttled_time += (uint64_t)(p->d.now - dg->throttled_since[rq]);
				dg->throttled_since[rq] = -1;
			}
			if (dg->clock_since[rq] >= 0) {
				dg->throttled_time += (uint64_t)(p->d.now - dg->clock_since[rq]);
				dg->clock_since[rq] = -1;
			}
		}
		ASSERT_UINT(cfsbw_rq_nr_running(p->d.tree, rq), ==, 0);
		for (size_t i = 0; i < NR_GROUPS; i++) {
			ASSERT_FALSE(cfsbw_throttled(p->g[i], rq));
			ASSERT_UINT(cfsbw_group_h_nr_running(p->g[i], rq), ==, 0);
		}
	} else {
		char buf[16];
		snprintf(buf, sizeof buf, "%lld",
			 (long long)drv_rng_range(&p->rng, 1000, 12000));
		ASSERT_INT(cfsbw_sysctl_write(p->d.tree,
					      "sched_cfs_bandwidth_slice_us", buf), ==, 0);
	}
}

/* What the runs went through, so that a generator that stops reaching
 * the interesting states fails instead of passing vacuously. */
struct coverage {
	uint64_t throttles, fires, slack_starts, offlines, configs;
};

static void run_seed(uint64_t seed, enum cfsbw_policy policy,
		     struct coverage *cov)
{
	struct prop *p = calloc(1, sizeof(*p));
	ASSERT_TRUE(p != NULL);
	p->policy = policy;
	p->rng = seed;
	static const unsigned rqs[] = {1, 2, 3, 4, 8};
	unsigned nr_rq = rqs[drv_rng_next(&p->rng) % 5];
	drv_init(&p->d, nr_rq, policy);
	p->g[0] = cfsbw_tree_root(p->d.tree);
	for (size_t i = 0; i < NR_PATHS; i++) {
		long long quota = drv_rng_range(&p->rng, 0, 3) == 0
					  ? -1
					  : drv_rng_range(&p->rng, 1000, 40000);
		long long period = drv_rng_range(&p->rng, 20000, 200000);
		if (policy == CFSBW_POLICY_HARDLIMITS) {
			struct cfsbw_group *g = drv_group(&p->d, prop_paths[i], 0, period);
			char buf[32];
			snprintf(buf, sizeof buf, "%lld", quota);
			ASSERT_INT(drv_write(&p->d, g, "cpu.cfs_runtime_us", buf), ==, 0);
			p->g[i + 1] = g;
		} else {
			p->g[i + 1] = drv_group(&p->d, prop_paths[i], quota, period);
		}
	}
	int n;
	for (n = 0; n < NR_STEPS; n++) {
		snapshot(p);
		step(p);
		cov->offlines += p->offline_rq >= 0;
		cov->configs += strcmp(p->what, "config") == 0;
		if (!test_failed)
			check_all(p);
		if (test_failed)
			break;
	}
	if (test_failed)
		fprintf(stderr, "    seed %llu (%s, %u rqs), step %d (%s), t %lld ns\n",
			(unsigned long long)seed, cfsbw_policy_name(policy),
			nr_rq, n, p->what, (long long)p->d.now);
	for (size_t i = 0; i < p->d.ngroups; i++) {
		cov->fires += p->d.groups[i].nr_fires;
		cov->slack_starts += p->d.groups[i].nr_slack_starts;
	}
	cov->throttles += p->d.nev_total;
	drv_fini(&p->d);
	free(p);
}

static void run_seeds(enum cfsbw_policy policy)
{
	struct coverage cov = {0};
	const char *env = getenv("CFSBW_TEST_SEED");
	if (env) {
		run_seed(strtoull(env, NULL, 0), policy, &cov);
		return;
	}
	for (uint64_t s = 1; s <= NR_SEEDS && !test_failed; s++)
		run_seed(s * UINT64_C(0x5851f42d4c957f2d), policy, &cov);
	if (test_failed)
		return;
	if (getenv("CFSBW_TEST_VERBOSE"))
		fprintf(stderr, "    %s: %llu throttle events, %llu refreshes, %llu slack timers, %llu offlines, %llu writes\n",
			cfsbw_policy_name(policy), (unsigned long long)cov.throttles,
			(unsigned long long)cov.fires, (unsigned long long)cov.slack_starts,
			(unsigned long long)cov.offlines, (unsigned long long)cov.configs);
	/* Well below what the seeds reach (CFSBW_TEST_VERBOSE=1 shows it). */
	ASSERT_UINT(cov.throttles, >=, 300);
	ASSERT_UINT(cov.fires, >=, 300);
	ASSERT_UINT(cov.offlines, >=, 50);
	ASSERT_UINT(cov.configs, >=, 100);
	if (policy == CFSBW_POLICY_UPSTREAM)
		ASSERT_UINT(cov.slack_starts, >=, 1);
}

TEST(random_sequences_v4, "R12,R13")
{
	run_seeds(CFSBW_POLICY_V4);
}

TEST(random_sequences_upstream, "R12,R13")
{
	run_seeds(CFSBW_POLICY_UPSTREAM);
}

/* hardlimits: everything but the pool's conservation. */
TEST(random_sequences_hardlimits, "R12,hardlimits")
{
	run_seeds(CFSBW_POLICY_HARDLIMITS);
}

TEST_MAIN(TEST_ENTRY(random_sequences_v4) TEST_ENTRY(random_sequences_upstream)
	  TEST_ENTRY(random_sequences_hardlimits))
