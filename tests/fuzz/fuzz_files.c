/*
 * fuzz_files.c - the core (cfsbw.h) driven by random sequences of
 * operations, as a driver and a user could mix them, under each of the
 * three policies, with invariants checked after every step.
 *
 * The input's first bytes choose the policy, the runqueues and the clock's
 * start; then each step is an operation: create or destroy a group, write
 * or read a file or the slice sysctl, enqueue or dequeue a task, charge
 * running time, fire the timers that are due, take a runqueue offline, grow
 * the tree.  This harness plays a driver that keeps the core's contract
 * (cfsbw.h): it charges and dequeues only tasks it enqueued, fires a timer
 * only when the core armed it and the clock reached it, cancels a group's
 * timers before destroying it, and moves its clock forward only.
 *
 * After every step (the core's promises, SPEC section 2 and R2-R12):
 *  - a rejected file or sysctl write changed nothing: every file of every
 *    group reads the same, pools and accounts hold the same runtime, and no
 *    callback fired;
 *  - cpu.stat never decreases (R12);
 *  - a limited group's pool holds between 0 and quota + burst (R4, R10);
 *  - no account gets more than its pool gave: outside a refresh and a
 *    configuration call, the runtime of a group's pool and accounts
 *    together never grows;
 *  - the throttle and unthrottle callbacks alternate per account and agree
 *    with cfsbw_account_throttled() (R7, R10); a charge says "stop" exactly
 *    when the task's path is throttled (R11);
 *  - each runqueue's cfsbw_rq_nr_running() is the number of tasks this
 *    driver enqueued there under no throttled account (R9).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cfsbw.h"
#include "fuzz.h"

#define FZ_MAX_RQ 8u
#define FZ_MAX_GROUPS 16u
#define FZ_MAX_STEPS 400u
#define FZ_FILE_BYTES 256
#define FZ_MAX_FILES 16u

/* Sums of runtimes, beyond int64_t's range if the core's values go wild. */
__extension__ typedef __int128 fz_i128;

struct fz_group {
	struct cfsbw_group *g; /* NULL: a free slot */
	int64_t period_at;     /* armed period timer's expiry, or -1 */
	int64_t slack_at;      /* armed slack timer's expiry, or -1 */
	unsigned tasks[FZ_MAX_RQ];
	bool throttled[FZ_MAX_RQ]; /* by the callbacks */
	struct cfsbw_stats stats;  /* last seen */
};

struct fz {
	struct cfsbw_tree *tree;
	enum cfsbw_policy policy;
	unsigned nr_rq;
	int64_t now;
	struct fz_group groups[FZ_MAX_GROUPS];
	unsigned nr_callbacks; /* of any kind, ever */
	unsigned nr_throttle_callbacks; /* throttle and unthrottle, ever */
	bool in_fire;          /* a timer of ours is running */
};

static struct fz_group *fz_of(struct cfsbw_group *g)
{
	struct fz_group *fg = cfsbw_group_driver_data(g);
	FZ_CHECK(fg && fg->g == g, "a callback for a group we do not know");
	return fg;
}

static void cb_throttle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct fz *f = ctx;
	struct fz_group *fg = fz_of(g);
	f->nr_callbacks++;
	f->nr_throttle_callbacks++;
	FZ_CHECK(rq < f->nr_rq, "rq %u of %u", rq, f->nr_rq);
	FZ_CHECK(!fg->throttled[rq], "%s on rq %u throttled twice",
		 cfsbw_group_path(g), rq);
	fg->throttled[rq] = true;
}

static void cb_unthrottle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct fz *f = ctx;
	struct fz_group *fg = fz_of(g);
	f->nr_callbacks++;
	f->nr_throttle_callbacks++;
	FZ_CHECK(rq < f->nr_rq, "rq %u of %u", rq, f->nr_rq);
	FZ_CHECK(fg->throttled[rq], "%s on rq %u unthrottled while running",
		 cfsbw_group_path(g), rq);
	fg->throttled[rq] = false;
}

static void cb_period_start(void *ctx, struct cfsbw_group *g, int64_t at)
{
	struct fz *f = ctx;
	struct fz_group *fg = fz_of(g);
	f->nr_callbacks++;
	/* R10: the core asks only when the timer is not already running. */
	FZ_CHECK(f->in_fire || fg->period_at < 0,
		 "%s: period timer started while armed for %lld",
		 cfsbw_group_path(g), (long long)fg->period_at);
	FZ_CHECK(at >= 0, "period timer at %lld", (long long)at);
	fg->period_at = at;
}

static void cb_slack_start(void *ctx, struct cfsbw_group *g, int64_t at)
{
	struct fz *f = ctx;
	struct fz_group *fg = fz_of(g);
	f->nr_callbacks++;
	FZ_CHECK(f->policy == CFSBW_POLICY_UPSTREAM,
		 "slack timer in policy %s", cfsbw_policy_name(f->policy));
	FZ_CHECK(at >= 0, "slack timer at %lld", (long long)at);
	if (fg->slack_at < 0 || at < fg->slack_at)
		fg->slack_at = at;
}

static const struct cfsbw_ops fz_ops = {
	.throttle = cb_throttle,
	.unthrottle = cb_unthrottle,
	.period_timer_start = cb_period_start,
	.slack_timer_start = cb_slack_start,
};

static struct fz_group *fz_adopt(struct fz *f, struct cfsbw_group *g)
{
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
		struct fz_group *fg = &f->groups[i];
		if (fg->g)
			continue;
		memset(fg, 0, sizeof *fg);
		fg->g = g;
		fg->period_at = fg->slack_at = -1;
		cfsbw_group_stats(g, &fg->stats);
		cfsbw_group_set_driver_data(g, fg);
		return fg;
	}
	return NULL;
}

/* A live group chosen by the input, or NULL if there is none. */
static struct fz_group *fz_pick(struct fz *f, struct fz_input *in)
{
	unsigned start = fz_below(in, FZ_MAX_GROUPS);
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
		struct fz_group *fg = &f->groups[(start + i) % FZ_MAX_GROUPS];
		if (fg->g)
			return fg;
	}
	return NULL;
}

/* ---- values written to files ---- */

static const char *const fz_values[] = {
	"-1", "max", "0", "1", "999", "1000", "1001", "5000", "10000",
	"50000", "100000", "500000", "1000000", "1000001", "2", "262144",
	"262145", "17592186044415", "17592186044416", "9223372036854775",
	"9223372036854775807", "9223372036854775808",
	"18446744073709551615", "18446744073709551616",
	"-9223372036854775808", "-0", "+100", " 1000", "1000 ", "1000\n",
	"1000\n\n", "", "\n", "max 100000", "max\n", "50000 100000",
	"2000 1000", "1000 1000000\n", "1000 1000001", "max 999",
	"100000 max", "1e3", "0x400", "1000abc", "-1\n", "100000 100000 1",
	"max  100000", "-5 100000", "4294967296", "-4294967296",
};

/* A value: one of the list, digits, or raw bytes of the input. */
static void fz_value(struct fz_input *in, char *out, size_t size)
{
	unsigned kind = fz_u8(in) % 4;
	if (kind <= 1) {
		unsigned i = fz_below(in, sizeof fz_values / sizeof fz_values[0]);
		snprintf(out, size, "%s", fz_values[i]);
	} else if (kind == 2) {
		snprintf(out, size, "%llu",
			 (unsigned long long)fz_bytes(in, 1 + fz_u8(in) % 8));
	} else {
		size_t n = fz_u8(in) % 24;
		if (n > size - 1)
			n = size - 1;
		for (size_t i = 0; i < n; i++) {
			char c = (char)fz_u8(in);
			out[i] = c ? c : ' ';
		}
		out[n] = '\0';
	}
}

/* ---- the state a rejected write must leave alone ---- */

struct fz_snapshot {
	char files[FZ_MAX_GROUPS][FZ_MAX_FILES][FZ_FILE_BYTES];
	char slice[64];
	int64_t pool[FZ_MAX_GROUPS];
	int64_t acct[FZ_MAX_GROUPS][FZ_MAX_RQ];
	bool thr[FZ_MAX_GROUPS][FZ_MAX_RQ];
	unsigned nr_callbacks;
};

static void fz_snap(struct fz *f, struct fz_snapshot *s)
{
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
		struct cfsbw_group *g = f->groups[i].g;
		for (unsigned k = 0; k < FZ_MAX_FILES; k++)
			s->files[i][k][0] = '\0';
		if (!g)
			continue;
		const char *name;
		for (unsigned k = 0; k < FZ_MAX_FILES &&
				     (name = cfsbw_file_name(f->tree, k));
		     k++) {
			int n = cfsbw_file_read(g, name, s->files[i][k],
						FZ_FILE_BYTES);
			FZ_CHECK(n >= 0 || n == -EINVAL,
				 "read %s of %s: %d", name,
				 cfsbw_group_path(g), n);
		}
		s->pool[i] = cfsbw_group_pool_runtime_ns(g);
		for (unsigned rq = 0; rq < f->nr_rq; rq++) {
			s->acct[i][rq] = cfsbw_account_runtime_ns(g, rq);
			s->thr[i][rq] = cfsbw_account_throttled(g, rq);
		}
	}
	int n = cfsbw_sysctl_read(f->tree, "sched_cfs_bandwidth_slice_us",
				  s->slice, sizeof s->slice);
	FZ_CHECK(n > 0, "slice sysctl read: %d", n);
	s->nr_callbacks = f->nr_callbacks;
}

static void fz_same(struct fz *f, const struct fz_snapshot *a,
		    const char *what, const char *value)
{
	static struct fz_snapshot b;
	fz_snap(f, &b);
	FZ_CHECK(a->nr_callbacks == b.nr_callbacks,
		 "a rejected %s '%s' fired a callback", what, value);
	FZ_CHECK(!strcmp(a->slice, b.slice), "a rejected %s '%s' changed "
		 "the slice: %s -> %s", what, value, a->slice, b.slice);
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
		if (!f->groups[i].g)
			continue;
		const char *path = cfsbw_group_path(f->groups[i].g);
		for (unsigned k = 0; k < FZ_MAX_FILES; k++)
			FZ_CHECK(!strcmp(a->files[i][k], b.files[i][k]),
				 "a rejected %s '%s' changed file %u of %s: "
				 "'%s' -> '%s'", what, value, k, path,
				 a->files[i][k], b.files[i][k]);
		FZ_CHECK(a->pool[i] == b.pool[i], "a rejected %s '%s' changed "
			 "the pool of %s", what, value, path);
		for (unsigned rq = 0; rq < f->nr_rq; rq++)
			FZ_CHECK(a->acct[i][rq] == b.acct[i][rq] &&
					 a->thr[i][rq] == b.thr[i][rq],
				 "a rejected %s '%s' changed %s on rq %u", what,
				 value, path, rq);
	}
}

/* ---- invariants after every step ---- */

/* Runtime a limited group holds: its pool plus every account. */
static fz_i128 fz_held(struct fz *f, struct cfsbw_group *g)
{
	fz_i128 sum = cfsbw_group_pool_runtime_ns(g);
	for (unsigned rq = 0; rq < f->nr_rq; rq++)
		sum += cfsbw_account_runtime_ns(g, rq);
	return sum;
}

static void fz_held_all(struct fz *f, fz_i128 *held)
{
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
		struct cfsbw_group *g = f->groups[i].g;
		held[i] = g && cfsbw_group_quota_ns(g) != CFSBW_RUNTIME_INF
				  ? fz_held(f, g)
				  : 0;
	}
}

/* No account got more than its pool gave: the runtime held did not grow. */
static void fz_check_conserved(struct fz *f, const fz_i128 *before,
			       const char *step)
{
	fz_i128 after[FZ_MAX_GROUPS];
	fz_held_all(f, after);
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++)
		FZ_CHECK(after[i] <= before[i],
			 "%s: %s holds %lld ns more than before", step,
			 cfsbw_group_path(f->groups[i].g),
			 (long long)(after[i] - before[i]));
}

static void fz_check(struct fz *f, const char *step)
{
	for (unsigned rq = 0; rq < f->nr_rq; rq++) {
		unsigned runnable = 0;
		for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
			struct fz_group *fg = &f->groups[i];
			if (fg->g && !cfsbw_throttled(fg->g, rq))
				runnable += fg->tasks[rq];
		}
		FZ_CHECK(cfsbw_rq_nr_running(f->tree, rq) == runnable,
			 "%s: rq %u runs %u tasks, %u runnable", step, rq,
			 cfsbw_rq_nr_running(f->tree, rq), runnable);
	}
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
		struct fz_group *fg = &f->groups[i];
		if (!fg->g)
			continue;
		const char *path = cfsbw_group_path(fg->g);
		struct cfsbw_stats st;
		cfsbw_group_stats(fg->g, &st);
#define FZ_STAT_MONOTONIC(name, upstream_only)                                 \
	FZ_CHECK(st.name >= fg->stats.name, "%s: %s cpu.stat " #name           \
		 " went from %llu to %llu", step, path,                        \
		 (unsigned long long)fg->stats.name,                           \
		 (unsigned long long)st.name);
		CFSBW_STAT_MAP(FZ_STAT_MONOTONIC)
#undef FZ_STAT_MONOTONIC
		fg->stats = st;
		int64_t quota = cfsbw_group_quota_ns(fg->g);
		if (quota != CFSBW_RUNTIME_INF) {
			int64_t pool = cfsbw_group_pool_runtime_ns(fg->g);
			int64_t burst = cfsbw_group_burst_ns(fg->g);
			FZ_CHECK(pool >= 0 && pool <= quota + burst,
				 "%s: %s pool %lld outside [0, %lld + %lld]",
				 step, path, (long long)pool, (long long)quota,
				 (long long)burst);
		}
		for (unsigned rq = 0; rq < f->nr_rq; rq++)
			FZ_CHECK(cfsbw_account_throttled(fg->g, rq) ==
					 fg->throttled[rq],
				 "%s: %s on rq %u: core says %d, callbacks %d",
				 step, path, rq,
				 cfsbw_account_throttled(fg->g, rq),
				 fg->throttled[rq]);
	}
}

/* ---- the operations ---- */

static const char *const fz_names[] = {"a", "b", "c", "web", "x.y_z-1"};

static void op_create(struct fz *f, struct fz_input *in)
{
	struct fz_group *parent = fz_pick(f, in);
	char path[256];
	const char *pp = cfsbw_group_path(parent->g);
	unsigned kind = fz_u8(in) % 8;
	if (kind < 6) {
		const char *name =
			fz_names[fz_below(in, sizeof fz_names / sizeof fz_names[0])];
		snprintf(path, sizeof path, "%s%s%s", pp, pp[1] ? "/" : "",
			 name);
	} else {
		/* Anything at all, to try the path rules. */
		char raw[80];
		size_t n = fz_u8(in) % 72;
		for (size_t i = 0; i < n; i++) {
			char c = (char)fz_u8(in);
			raw[i] = c ? c : '/';
		}
		raw[n] = '\0';
		snprintf(path, sizeof path, "%s", raw);
	}
	struct cfsbw_group *g = NULL;
	struct fz_snapshot *before = malloc(sizeof *before);
	FZ_CHECK(before, "out of memory");
	fz_snap(f, before);
	int err = cfsbw_group_create(f->tree, path, &g);
	if (err < 0) {
		FZ_CHECK(err == -EINVAL || err == -ENOENT || err == -EEXIST,
			 "create '%s': %d", path, err);
		fz_same(f, before, "group create", path);
	} else {
		FZ_CHECK(g && cfsbw_group_find(f->tree, path) == g,
			 "create '%s': not found after", path);
		FZ_CHECK(!strcmp(cfsbw_group_path(g), path),
			 "create '%s' made '%s'", path, cfsbw_group_path(g));
		FZ_CHECK(cfsbw_group_quota_ns(g) == CFSBW_RUNTIME_INF,
			 "a new group starts unlimited (R1)");
		if (!fz_adopt(f, g))
			FZ_CHECK(cfsbw_group_destroy(g) == 0,
				 "destroying the new, empty %s", path);
	}
	free(before);
}

static void op_destroy(struct fz *f, struct fz_input *in)
{
	struct fz_group *fg = fz_pick(f, in);
	bool busy = !cfsbw_group_parent(fg->g) ||
		    cfsbw_group_first_child(fg->g);
	for (unsigned rq = 0; rq < f->nr_rq; rq++)
		busy = busy || fg->tasks[rq];
	/* The driver cancels the group's timers first. */
	int64_t period_at = fg->period_at, slack_at = fg->slack_at;
	fg->period_at = fg->slack_at = -1;
	int err = cfsbw_group_destroy(fg->g);
	FZ_CHECK(err == (busy ? -EBUSY : 0), "destroy %s: %d, busy %d",
		 cfsbw_group_path(fg->g), err, busy);
	if (err == 0) {
		fg->g = NULL;
	} else {
		fg->period_at = period_at;
		fg->slack_at = slack_at;
	}
}

static void op_write(struct fz *f, struct fz_input *in)
{
	struct fz_group *fg = fz_pick(f, in);
	unsigned nr_files = 0;
	while (cfsbw_file_name(f->tree, nr_files))
		nr_files++;
	unsigned k = fz_below(in, nr_files + 2);
	const char *name = k < nr_files ? cfsbw_file_name(f->tree, k)
			   : k == nr_files ? "sched_cfs_bandwidth_slice_us"
					   : "cpu.cfs_quota";
	char value[64];
	fz_value(in, value, sizeof value);
	struct fz_snapshot *before = malloc(sizeof *before);
	FZ_CHECK(before, "out of memory");
	fz_snap(f, before);
	int err = k == nr_files
			  ? cfsbw_sysctl_write(f->tree, name, value)
			  : cfsbw_file_write(fg->g, name, value, f->now);
	FZ_CHECK(err == 0 || err == -EINVAL || err == -ERANGE ||
			 err == -ENOENT,
		 "write '%s' to %s: %d", value, name, err);
	if (k > nr_files)
		FZ_CHECK(err == -ENOENT, "write to no file: %d", err);
	if (err < 0)
		fz_same(f, before, name, value);
	free(before);
}

static void op_read(struct fz *f, struct fz_input *in)
{
	struct fz_group *fg = fz_pick(f, in);
	const char *name = cfsbw_file_name(f->tree, fz_below(in, FZ_MAX_FILES));
	if (!name)
		name = "cpu.nothing";
	char full[FZ_FILE_BYTES], small[FZ_FILE_BYTES];
	int n = cfsbw_file_read(fg->g, name, full, sizeof full);
	if (n < 0) {
		FZ_CHECK(n == -ENOENT, "read %s: %d", name, n);
		return;
	}
	FZ_CHECK((size_t)n == strlen(full), "read %s: length %d of '%s'", name,
		 n, full);
	size_t size = fz_u8(in) % (size_t)(n + 2);
	memset(small, 'X', sizeof small);
	int m = cfsbw_file_read(fg->g, name, small, size);
	if (size > (size_t)n) {
		FZ_CHECK(m == n && !strcmp(small, full),
			 "read %s into %zu bytes: %d", name, size, m);
	} else {
		FZ_CHECK(m == -ENOSPC, "read %s (%d bytes) into %zu: %d", name,
			 n, size, m);
		FZ_CHECK(size == 0 || memchr(small, '\0', size),
			 "read %s into %zu: not NUL-terminated", name, size);
		FZ_CHECK(small[size] == 'X', "read %s into %zu wrote past it",
			 name, size);
	}
}

/* now + delta, saturating at INT64_MAX (the clock of a driver that has
 * run for 292 years stays there). */
static int64_t fz_later(int64_t now, int64_t delta)
{
	return delta > INT64_MAX - now ? INT64_MAX : now + delta;
}

/*
 * A delta of time: mostly ticks and slices, sometimes whole periods, and
 * now and then anything up to INT64_MAX (cfsbw.h: a charge above
 * CFSBW_CHARGE_MAX_NS counts as that much).
 */
static int64_t fz_delta(struct fz_input *in)
{
	unsigned kind = fz_u8(in) % 16;
	if (kind < 4)
		return (int64_t)fz_bytes(in, 2); /* up to 65 us */
	if (kind < 8)
		return (int64_t)fz_bytes(in, 3) * 64; /* up to 1 s */
	if (kind < 12)
		return (int64_t)(fz_u8(in) % 16) * CFSBW_NSEC_PER_MSEC;
	if (kind < 15)
		return (int64_t)fz_bytes(in, 5); /* up to 18 min */
	return (int64_t)(fz_bytes(in, 8) & (uint64_t)INT64_MAX);
}

static void op_charge(struct fz *f, struct fz_input *in)
{
	struct fz_group *fg = fz_pick(f, in);
	unsigned rq = fz_below(in, f->nr_rq);
	if (!fg->tasks[rq])
		return; /* only a task that runs there is charged */
	int64_t delta = fz_delta(in);
	fz_i128 before[FZ_MAX_GROUPS];
	fz_held_all(f, before);
	/* Fire no timer here: the charge ends at now + delta. */
	f->now = fz_later(f->now, delta);
	bool stop = cfsbw_charge(fg->g, rq, delta, f->now);
	FZ_CHECK(stop == cfsbw_throttled(fg->g, rq),
		 "charge of %s on rq %u says stop=%d, throttled=%d",
		 cfsbw_group_path(fg->g), rq, stop,
		 cfsbw_throttled(fg->g, rq));
	fz_check_conserved(f, before, "charge");
}

static void op_enqueue(struct fz *f, struct fz_input *in, bool enqueue)
{
	struct fz_group *fg = fz_pick(f, in);
	unsigned rq = fz_below(in, f->nr_rq);
	if (!enqueue && !fg->tasks[rq])
		return;
	if (enqueue && fg->tasks[rq] >= 1000)
		return;
	fz_i128 before[FZ_MAX_GROUPS];
	fz_held_all(f, before);
	if (enqueue) {
		cfsbw_task_enqueue(fg->g, rq, f->now);
		fg->tasks[rq]++;
	} else {
		cfsbw_task_dequeue(fg->g, rq, f->now);
		fg->tasks[rq]--;
	}
	FZ_CHECK(cfsbw_group_h_nr_running(fg->g, rq) <= 1000u * FZ_MAX_GROUPS,
		 "h_nr_running %u", cfsbw_group_h_nr_running(fg->g, rq));
	fz_check_conserved(f, before, enqueue ? "enqueue" : "dequeue");
}

/*
 * Move the clock and fire the timers due, in expiry order: either each at
 * its expiry, as a punctual driver would, or all at the end, late (a
 * driver that was descheduled: the core counts the periods missed).  At
 * most FZ_MAX_FIRES fires per step, so that a 1 ms period and a long jump
 * cost no more than a few; what is left fires, late, at a later step.
 */
#define FZ_MAX_FIRES 16

static void op_advance(struct fz *f, struct fz_input *in)
{
	int64_t until = fz_later(f->now, fz_delta(in));
	if (fz_u8(in) & 1)
		f->now = until;
	for (unsigned fires = 0; fires < FZ_MAX_FIRES; fires++) {
		struct fz_group *next = NULL;
		bool slack = false;
		int64_t at = until;
		for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
			struct fz_group *fg = &f->groups[i];
			if (!fg->g)
				continue;
			if (fg->period_at >= 0 && fg->period_at <= at &&
			    (!next || fg->period_at < at)) {
				next = fg;
				at = fg->period_at;
				slack = false;
			}
			if (fg->slack_at >= 0 && fg->slack_at <= at &&
			    (!next || fg->slack_at < at)) {
				next = fg;
				at = fg->slack_at;
				slack = true;
			}
		}
		if (!next)
			break;
		if (at > f->now)
			f->now = at;
		fz_i128 before[FZ_MAX_GROUPS];
		fz_held_all(f, before);
		f->in_fire = true;
		if (slack) {
			next->slack_at = -1;
			int64_t again = cfsbw_slack_timer_fire(next->g, f->now);
			if (again != CFSBW_TIMER_STOP) {
				FZ_CHECK(again > f->now || again == INT64_MAX,
					 "slack timer again at "
					 "%lld, now %lld", (long long)again,
					 (long long)f->now);
				next->slack_at = again;
			}
		} else {
			next->period_at = -1;
			int64_t again = cfsbw_period_timer_fire(next->g, f->now);
			if (again != CFSBW_TIMER_STOP) {
				FZ_CHECK(again > f->now || again == INT64_MAX,
					 "period timer again "
					 "at %lld, now %lld", (long long)again,
					 (long long)f->now);
				next->period_at = again;
			}
		}
		f->in_fire = false;
		if (slack)
			fz_check_conserved(f, before, "slack timer");
		fz_check(f, slack ? "slack timer" : "period timer");
	}
	if (until > f->now)
		f->now = until;
}

static void op_offline(struct fz *f, struct fz_input *in)
{
	unsigned rq = fz_below(in, f->nr_rq);
	unsigned callbacks = f->nr_throttle_callbacks;
	cfsbw_rq_offline(f->tree, rq, f->now);
	/* cfsbw.h: no throttle or unthrottle callback (the slack timer may
	 * start, in the upstream policy only: cb_slack_start checks). */
	FZ_CHECK(f->nr_throttle_callbacks == callbacks,
		 "rq_offline fired a throttle or unthrottle callback");
	for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
		struct fz_group *fg = &f->groups[i];
		if (!fg->g)
			continue;
		fg->tasks[rq] = 0;
		fg->throttled[rq] = false;
		FZ_CHECK(!cfsbw_account_throttled(fg->g, rq) &&
				 !cfsbw_group_h_nr_running(fg->g, rq),
			 "%s on rq %u after offline: throttled %d, %u tasks",
			 cfsbw_group_path(fg->g), rq,
			 cfsbw_account_throttled(fg->g, rq),
			 cfsbw_group_h_nr_running(fg->g, rq));
	}
}

static void op_grow(struct fz *f, struct fz_input *in)
{
	unsigned want = 1 + fz_below(in, FZ_MAX_RQ + 1);
	if (want > FZ_MAX_RQ) {
		/* Beyond the core's limit: refused, nothing changed. */
		FZ_CHECK(cfsbw_tree_set_nr_rq(f->tree, CFSBW_MAX_RQ + 1) ==
				 -EINVAL, "grow past CFSBW_MAX_RQ");
		FZ_CHECK(cfsbw_tree_nr_rq(f->tree) == f->nr_rq, "nr_rq moved");
		return;
	}
	int err = cfsbw_tree_set_nr_rq(f->tree, want);
	if (want < f->nr_rq) {
		FZ_CHECK(err == -EINVAL, "shrink to %u: %d", want, err);
		return;
	}
	FZ_CHECK(err == 0, "grow to %u: %d", want, err);
	for (unsigned rq = f->nr_rq; rq < want; rq++)
		for (unsigned i = 0; i < FZ_MAX_GROUPS; i++) {
			struct cfsbw_group *g = f->groups[i].g;
			if (!g)
				continue;
			FZ_CHECK(!cfsbw_account_throttled(g, rq) &&
					 !cfsbw_group_h_nr_running(g, rq),
				 "new rq %u of %s not empty", rq,
				 cfsbw_group_path(g));
		}
	f->nr_rq = want;
	FZ_CHECK(cfsbw_tree_nr_rq(f->tree) == want, "nr_rq %u after growing "
		 "to %u", cfsbw_tree_nr_rq(f->tree), want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_input in = {data, size};
	static struct fz f;
	memset(&f, 0, sizeof f);
	f.policy = (enum cfsbw_policy)(fz_u8(&in) % CFSBW_POLICY_COUNT);
	f.nr_rq = 1 + fz_u8(&in) % FZ_MAX_RQ;
	/* The clock starts anywhere within a year, or (1 in 16) within a
	 * day of INT64_MAX, where expiries saturate. */
	unsigned start = fz_u8(&in);
	int64_t offset = (int64_t)(fz_bytes(&in, 7) %
				   (INT64_C(366) * 86400 * CFSBW_NSEC_PER_SEC));
	f.now = start % 16 == 15 ? INT64_MAX - offset / 366 : offset;
	struct cfsbw_tree_config cfg = {
		.nr_rq = f.nr_rq, .policy = f.policy, .ops = &fz_ops, .ctx = &f,
	};
	int err = cfsbw_tree_create(&cfg, &f.tree);
	FZ_CHECK(err == 0, "tree create: %d", err);
	FZ_CHECK(fz_adopt(&f, cfsbw_tree_root(f.tree)), "root");

	for (unsigned step = 0; step < FZ_MAX_STEPS && in.n; step++) {
		const char *name;
		switch (fz_u8(&in) % 12) {
		case 0:
			name = "create";
			op_create(&f, &in);
			break;
		case 1:
			name = "destroy";
			op_destroy(&f, &in);
			break;
		case 2:
		case 3:
			name = "write";
			op_write(&f, &in);
			break;
		case 4:
			name = "read";
			op_read(&f, &in);
			break;
		case 5:
		case 6:
			name = "charge";
			op_charge(&f, &in);
			break;
		case 7:
			name = "enqueue";
			op_enqueue(&f, &in, true);
			break;
		case 8:
			name = "dequeue";
			op_enqueue(&f, &in, false);
			break;
		case 9:
			name = "advance";
			op_advance(&f, &in);
			break;
		case 10:
			name = "offline";
			op_offline(&f, &in);
			break;
		default:
			name = "grow";
			op_grow(&f, &in);
			break;
		}
		fz_check(&f, name);
	}
	cfsbw_tree_free(f.tree);
	return 0;
}
