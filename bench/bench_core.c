/*
 * bench_core.c - what the controller core costs, in nanoseconds, each
 * figure beside a baseline run in the same process:
 *   - a charge on the fast path (runtime held locally, no slice crossed),
 *     against an out-of-line subtract-and-compare of the same shape;
 *   - a charge that acquires a slice from the pool (lock, take, give);
 *   - a period refresh that unthrottles K accounts, K = 1 .. 4096, and the
 *     same K with many more runqueues and groups, beside the group or
 *     under it (the cost must follow K, not the groups below: R11 is read
 *     up the path, nothing is written down the subtree);
 *   - a charge at hierarchy depths 1, 4 and 16, with every level limited
 *     (R5 charges each) and with only the leaf limited (unlimited
 *     ancestors must cost nothing).
 * Each figure is the best of several repeats, to shed scheduler noise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfsbw.h"

#define REPEATS 5

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

static int64_t timer_expires;

static void on_timer(void *ctx, struct cfsbw_group *g, int64_t expires_ns)
{
	(void)ctx;
	(void)g;
	timer_expires = expires_ns;
}

static const struct cfsbw_ops ops = {.period_timer_start = on_timer};

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_core: %s: %s\n", what, strerror(-err));
	exit(1);
}

static struct cfsbw_tree *tree_new(unsigned nr_rq)
{
	struct cfsbw_tree_config cfg = {.nr_rq = nr_rq, .ops = &ops};
	struct cfsbw_tree *tree;
	int err = cfsbw_tree_create(&cfg, &tree);
	if (err)
		die("tree", err);
	return tree;
}

static struct cfsbw_group *group_new(struct cfsbw_tree *tree, const char *path,
				     const char *quota_us, const char *period_us)
{
	struct cfsbw_group *g;
	int err = cfsbw_group_create(tree, path, &g);
	if (!err && period_us)
		err = cfsbw_file_write(g, "cpu.cfs_period_us", period_us, 0);
	if (!err && quota_us)
		err = cfsbw_file_write(g, "cpu.cfs_quota_us", quota_us, 0);
	if (err)
		die(path, err);
	return g;
}

static void sysctl_slice(struct cfsbw_tree *tree, const char *us)
{
	int err = cfsbw_sysctl_write(tree, "sched_cfs_bandwidth_slice_us", us);
	if (err)
		die("slice", err);
}

/* The baseline: a subtract and a compare behind a call, as a charge is. */
struct plain_account {
	int64_t remaining;
};

__attribute__((noinline)) static int plain_charge(struct plain_account *a,
						 int64_t delta)
{
	int64_t left = a->remaining - delta;
	if (left > 0) {
		a->remaining = left;
		return 0;
	}
	return 1;
}

/* volatile so the compiler keeps the call per iteration. */
static int (*volatile plain_charge_fn)(struct plain_account *,
				       int64_t) = plain_charge;

static double bench_baseline(long n)
{
	double best = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		struct plain_account a = {INT64_MAX};
		int64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			plain_charge_fn(&a, 1);
		double ns = (double)(now_ns() - t0) / (double)n;
		best = ns < best ? ns : best;
	}
	return best;
}

/* A charge of 1 ns against a slice of 1000 s: never crosses a boundary. */
static double bench_fast_path(long n, struct cfsbw_group *g)
{
	double best = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		cfsbw_charge(g, 0, 1, 0); /* take the first slice */
		int64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			cfsbw_charge(g, 0, 1, i);
		double ns = (double)(now_ns() - t0) / (double)n;
		best = ns < best ? ns : best;
	}
	return best;
}

static double bench_fast(long n)
{
	struct cfsbw_tree *tree = tree_new(1);
	sysctl_slice(tree, "1000000000");
	struct cfsbw_group *g = group_new(tree, "/g", "17592186044415", "1000000");
	double ns = bench_fast_path(n, g);
	cfsbw_tree_free(tree);
	return ns;
}

/* Every charge uses up its whole slice, so every one asks the pool. */
static double bench_slice(long n)
{
	struct cfsbw_tree *tree = tree_new(1);
	sysctl_slice(tree, "1");
	struct cfsbw_group *g = group_new(tree, "/g", "17592186044415", "1000000");
	double best = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		int64_t t0 = now_ns();
		for (long i = 0; i < n; i++)
			cfsbw_charge(g, 0, 1000, i);
		double ns = (double)(now_ns() - t0) / (double)n;
		best = ns < best ? ns : best;
	}
	cfsbw_tree_free(tree);
	return best;
}

/*
 * K accounts throttled; a refresh gives each one slice, which unthrottles
 * it.  The slice S is chosen so the quota, K slices, is at least 1 ms: each
 * round every account runs its slice dry against an empty pool and
 * throttles, and the refresh hands the whole quota back out.  The tree has
 * nr_rq runqueues, extra_groups other limited groups and `below` unlimited
 * groups under the throttled one, all idle.  Returns ns per refresh.
 */
static double bench_refresh(unsigned k, unsigned nr_rq, unsigned extra_groups,
			    unsigned below)
{
	struct cfsbw_tree *tree = tree_new(nr_rq);
	unsigned slice_us = (1000 + k - 1) / k;
	char text[32];
	snprintf(text, sizeof text, "%u", slice_us);
	sysctl_slice(tree, text);
	for (unsigned i = 0; i < extra_groups; i++) {
		snprintf(text, sizeof text, "/idle%u", i);
		group_new(tree, text, "1000", "1000000");
	}
	snprintf(text, sizeof text, "%u", k * slice_us);
	struct cfsbw_group *g = group_new(tree, "/g", text, "1000000");
	for (unsigned i = 0; i < below; i++) {
		snprintf(text, sizeof text, "/g/c%u", i);
		group_new(tree, text, NULL, NULL);
	}
	for (unsigned rq = 0; rq < k; rq++)
		cfsbw_task_enqueue(g, rq, 0);
	int64_t delta = (int64_t)slice_us * CFSBW_NSEC_PER_USEC;

	double best = 1e30;
	int rounds = k >= 1024 ? 20 : 200;
	for (int r = 0; r < REPEATS; r++) {
		int64_t spent = 0;
		for (int i = 0; i < rounds; i++) {
			for (unsigned rq = 0; rq < k; rq++)
				cfsbw_charge(g, rq, delta, timer_expires - 1);
			for (unsigned rq = 0; rq < k; rq++)
				if (!cfsbw_account_throttled(g, rq))
					die("an account did not throttle", -EINVAL);
			int64_t t0 = now_ns();
			int64_t next = cfsbw_period_timer_fire(g, timer_expires);
			spent += now_ns() - t0;
			if (next == CFSBW_TIMER_STOP)
				die("refresh stopped its timer", -EINVAL);
			timer_expires = next;
		}
		double ns = (double)spent / rounds;
		best = ns < best ? ns : best;
	}
	for (unsigned rq = 0; rq < k; rq++)
		if (cfsbw_account_throttled(g, rq))
			die("an account stayed throttled", -EINVAL);
	cfsbw_tree_free(tree);
	return best;
}

/* A chain /l1/l2/.../ld; all_limited: every level, else only the leaf. */
static double bench_depth(long n, unsigned depth, int all_limited)
{
	struct cfsbw_tree *tree = tree_new(1);
	sysctl_slice(tree, "1000000000");
	char path[256] = "";
	struct cfsbw_group *g = NULL;
	for (unsigned d = 1; d <= depth; d++) {
		size_t len = strlen(path);
		snprintf(path + len, sizeof path - len, "/l%u", d);
		int limited = all_limited || d == depth;
		g = group_new(tree, path, limited ? "17592186044415" : NULL,
			      limited ? "1000000" : NULL);
	}
	double ns = bench_fast_path(n, g);
	cfsbw_tree_free(tree);
	return ns;
}

/*
 * cfsbw_group_find of a path among `siblings` groups under one parent, ns
 * a lookup (names.c): the same whatever their number, where a scan of
 * the siblings grew with it (20,000 groups took 10 s to create).
 */
static double bench_find(unsigned siblings)
{
	struct cfsbw_tree *tree = tree_new(1);
	char path[32];
	for (unsigned i = 0; i < siblings; i++) {
		snprintf(path, sizeof path, "/g%u", i);
		group_new(tree, path, NULL, NULL);
	}
	double best = 1e18;
	const long n = 2000000;
	for (int rep = 0; rep < REPEATS; rep++) {
		int64_t t0 = now_ns();
		unsigned found = 0;
		for (long i = 0; i < n; i++) {
			snprintf(path, sizeof path, "/g%u",
				 (unsigned)(i * 7919) % siblings);
			found += cfsbw_group_find(tree, path) != NULL;
		}
		double ns = (double)(now_ns() - t0) / (double)n;
		if (found != (unsigned)n)
			die("find", -ENOENT);
		best = ns < best ? ns : best;
	}
	cfsbw_tree_free(tree);
	return best;
}

int main(void)
{
	const long n = 20000000;
	double base = bench_baseline(n);

	printf("cfsbw core benchmark (best of %d; ratio = ns / baseline ns)\n\n",
	       REPEATS);
	printf("%-52s %10s %8s\n", "operation", "ns", "ratio");
	printf("%-52s %10.2f %8.2f\n", "baseline: out-of-line subtract+compare",
	       base, 1.0);
	double fast = bench_fast(n);
	printf("%-52s %10.2f %8.2f\n", "charge, fast path (no slice crossed)",
	       fast, fast / base);
	double slice = bench_slice(n / 4);
	printf("%-52s %10.2f %8.2f\n", "charge that acquires a slice", slice,
	       slice / base);
	for (unsigned depth = 1; depth <= 16; depth *= 4) {
		char label[64];
		double all = bench_depth(n, depth, 1);
		snprintf(label, sizeof label,
			 "charge at depth %2u, every level limited", depth);
		printf("%-52s %10.2f %8.2f\n", label, all, all / base);
		double leaf = bench_depth(n, depth, 0);
		snprintf(label, sizeof label,
			 "charge at depth %2u, only the leaf limited", depth);
		printf("%-52s %10.2f %8.2f\n", label, leaf, leaf / base);
	}

	printf("\n%-36s %6s %6s %12s %12s\n", "period refresh", "rqs", "groups",
	       "ns/refresh", "ns/account");
	double r1 = 0, k4096 = 0;
	for (unsigned k = 1; k <= 4096; k *= 4) {
		double ns = bench_refresh(k, k, 0, 0);
		if (k == 1)
			r1 = ns;
		k4096 = ns;
		char label[64];
		snprintf(label, sizeof label, "unthrottle K=%u", k);
		printf("%-36s %6u %6u %12.1f %12.2f\n", label, k, 1, ns,
		       ns / k);
	}
	double wide = bench_refresh(64, 4096, 0, 0);
	printf("%-36s %6u %6u %12.1f %12.2f\n", "unthrottle K=64, many rqs", 4096,
	       1, wide, wide / 64);
	double many = bench_refresh(64, 64, 1000, 0);
	printf("%-36s %6u %6u %12.1f %12.2f\n", "unthrottle K=64, many groups", 64,
	       1001, many, many / 64);
	double under = bench_refresh(64, 64, 0, 1000);
	printf("%-36s %6u %6u %12.1f %12.2f\n", "unthrottle K=64, 1000 below it",
	       64, 1001, under, under / 64);
	printf("\nrefresh K=4096 / K=1: %.0fx (linear in K would be 4096x at "
	       "most)\n",
	       k4096 / r1);

	/* the path is formatted in the loop: both rows pay for it alike */
	double f10 = bench_find(10), f20k = bench_find(20000);
	printf("\n%-52s %10s %8s\n", "group lookup by path (with its snprintf)",
	       "ns", "ratio");
	printf("%-52s %10.2f %8.2f\n", "among 10 siblings", f10, 1.0);
	printf("%-52s %10.2f %8.2f\n", "among 20,000 siblings", f20k,
	       f20k / f10);
	return 0;
}
