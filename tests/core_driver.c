/* core_driver.c - the scripted-clock driver of the core's tests; see core_driver.h. */
#include "core_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void drv_die(const char *what, const char *detail, int err)
{
	fprintf(stderr, "core_driver: %s %s: %d\n", what, detail ? detail : "",
		err);
	abort();
}

static struct drv *drv_from_ctx(void *ctx)
{
	return ctx;
}

struct drv_group *drv_of(struct cfsbw_group *g)
{
	return cfsbw_group_driver_data(g);
}

static struct drv_group *drv_lookup(struct drv *d, struct cfsbw_group *g)
{
	struct drv_group *dg = drv_of(g);
	return dg ? dg : drv_adopt(d, g);
}

static void drv_record(struct drv *d, enum drv_event_kind kind,
		       struct cfsbw_group *g, unsigned rq)
{
	if (d->nev < DRV_MAX_EVENTS)
		d->ev[d->nev++] = (struct drv_event){kind, g, rq, d->now};
	d->nev_total++;
}

static void cb_throttle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct drv *d = drv_from_ctx(ctx);
	struct drv_group *dg = drv_lookup(d, g);
	if (rq >= d->nr_rq || dg->throttled_since[rq] >= 0)
		d->nr_bad_events++;
	else
		dg->throttled_since[rq] = d->now;
	drv_record(d, DRV_THROTTLE, g, rq);
	drv_sync_clocks(d);
}

static void cb_unthrottle(void *ctx, struct cfsbw_group *g, unsigned rq)
{
	struct drv *d = drv_from_ctx(ctx);
	struct drv_group *dg = drv_lookup(d, g);
	if (rq >= d->nr_rq || dg->throttled_since[rq] < 0) {
		d->nr_bad_events++;
	} else {
		if (!d->clock_needs_tasks)
			dg->throttled_time +=
				(uint64_t)(d->now - dg->throttled_since[rq]);
		dg->throttled_since[rq] = -1;
	}
	drv_record(d, DRV_UNTHROTTLE, g, rq);
	drv_sync_clocks(d);
}

/* Tasks waiting under g on rq: its own, and those of every child not
 * throttled there (a throttled child hides its own). */
static unsigned waiting(struct cfsbw_group *g, unsigned rq)
{
	struct drv_group *dg = drv_of(g);
	unsigned n = dg ? dg->tasks[rq] : 0;
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c)) {
		struct drv_group *dc = drv_of(c);
		if (!dc || dc->throttled_since[rq] < 0)
			n += waiting(c, rq);
	}
	return n;
}

void drv_sync_clocks(struct drv *d)
{
	if (!d->clock_needs_tasks)
		return;
	for (size_t i = 0; i < d->ngroups; i++) {
		struct drv_group *dg = &d->groups[i];
		for (unsigned rq = 0; rq < d->nr_rq; rq++) {
			bool on = dg->throttled_since[rq] >= 0 &&
				  waiting(dg->g, rq) > 0;
			bool running = dg->clock_since[rq] >= 0;
			if (on && !running) {
				dg->clock_since[rq] = d->now;
			} else if (!on && running) {
				dg->throttled_time +=
					(uint64_t)(d->now - dg->clock_since[rq]);
				dg->clock_since[rq] = -1;
			}
		}
	}
}

static void cb_period_timer_start(void *ctx, struct cfsbw_group *g,
				  int64_t expires_ns)
{
	struct drv *d = drv_from_ctx(ctx);
	struct drv_group *dg = drv_lookup(d, g);
	if (dg->period_expiry >= 0)
		dg->nr_double_starts++;
	dg->period_expiry = expires_ns;
	dg->nr_period_starts++;
}

static void cb_slack_timer_start(void *ctx, struct cfsbw_group *g,
				 int64_t expires_ns)
{
	struct drv *d = drv_from_ctx(ctx);
	struct drv_group *dg = drv_lookup(d, g);
	if (dg->slack_expiry >= 0)
		dg->nr_double_starts++;
	dg->slack_expiry = expires_ns;
	dg->nr_slack_starts++;
}

static const struct cfsbw_ops drv_ops = {
	.throttle = cb_throttle,
	.unthrottle = cb_unthrottle,
	.period_timer_start = cb_period_timer_start,
	.slack_timer_start = cb_slack_timer_start,
};

int drv_init_alloc(struct drv *d, unsigned nr_rq, enum cfsbw_policy policy,
		   const struct cfsbw_allocator *allocator)
{
	memset(d, 0, sizeof(*d));
	d->nr_rq = nr_rq;
	d->clock_needs_tasks = policy == CFSBW_POLICY_UPSTREAM;
	struct cfsbw_tree_config cfg = {
		.nr_rq = nr_rq,
		.policy = policy,
		.ops = &drv_ops,
		.ctx = d,
		.allocator = allocator,
	};
	int err = cfsbw_tree_create(&cfg, &d->tree);
	if (err)
		return err;
	drv_adopt(d, cfsbw_tree_root(d->tree));
	return 0;
}

void drv_init(struct drv *d, unsigned nr_rq, enum cfsbw_policy policy)
{
	int err = drv_init_alloc(d, nr_rq, policy, NULL);
	if (err)
		drv_die("tree_create", NULL, err);
}

void drv_fini(struct drv *d)
{
	for (size_t i = 0; i < d->ngroups; i++) {
		free(d->groups[i].throttled_since);
		free(d->groups[i].clock_since);
		free(d->groups[i].tasks);
	}
	cfsbw_tree_free(d->tree);
	d->tree = NULL;
	d->ngroups = 0;
}

struct drv_group *drv_adopt(struct drv *d, struct cfsbw_group *g)
{
	if (d->ngroups == DRV_MAX_GROUPS)
		drv_die("adopt", "too many groups", 0);
	struct drv_group *dg = &d->groups[d->ngroups++];
	memset(dg, 0, sizeof(*dg));
	dg->g = g;
	dg->period_expiry = -1;
	dg->slack_expiry = -1;
	dg->throttled_since = malloc(sizeof(int64_t) * d->nr_rq);
	dg->clock_since = malloc(sizeof(int64_t) * d->nr_rq);
	dg->tasks = calloc(d->nr_rq, sizeof(unsigned));
	if (!dg->throttled_since || !dg->clock_since || !dg->tasks)
		drv_die("adopt", "out of memory", 0);
	for (unsigned rq = 0; rq < d->nr_rq; rq++)
		dg->throttled_since[rq] = dg->clock_since[rq] = -1;
	cfsbw_group_set_driver_data(g, dg);
	return dg;
}

struct drv_group *drv_root(struct drv *d)
{
	return drv_of(cfsbw_tree_root(d->tree));
}

int drv_write(struct drv *d, struct cfsbw_group *g, const char *file,
	      const char *text)
{
	return cfsbw_file_write(g, file, text, d->now);
}

struct cfsbw_group *drv_group(struct drv *d, const char *path,
			      long long quota_us, long long period_us)
{
	struct cfsbw_group *g = NULL;
	int err = cfsbw_group_create(d->tree, path, &g);
	if (err)
		drv_die("group_create", path, err);
	drv_adopt(d, g);
	char buf[32];
	if (period_us) {
		snprintf(buf, sizeof buf, "%lld", period_us);
		err = drv_write(d, g, "cpu.cfs_period_us", buf);
		if (err)
			drv_die("write cpu.cfs_period_us", buf, err);
	}
	if (quota_us) {
		snprintf(buf, sizeof buf, "%lld", quota_us);
		err = drv_write(d, g, "cpu.cfs_quota_us", buf);
		if (err)
			drv_die("write cpu.cfs_quota_us", buf, err);
	}
	return g;
}

long long drv_stat_field(struct cfsbw_group *g, const char *key)
{
	char buf[512];
	if (cfsbw_file_read(g, "cpu.stat", buf, sizeof buf) < 0)
		return -1;
	size_t klen = strlen(key);
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return strtoll(line + klen + 1, NULL, 10);
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

void drv_enqueue(struct drv *d, struct cfsbw_group *g, unsigned rq)
{
	drv_lookup(d, g)->tasks[rq]++;
	cfsbw_task_enqueue(g, rq, d->now);
	drv_sync_clocks(d);
}

void drv_dequeue(struct drv *d, struct cfsbw_group *g, unsigned rq)
{
	struct drv_group *dg = drv_lookup(d, g);
	if (dg->tasks[rq] == 0)
		drv_die("dequeue", "no task", 0);
	dg->tasks[rq]--;
	cfsbw_task_dequeue(g, rq, d->now);
	drv_sync_clocks(d);
}

bool drv_charge(struct drv *d, struct cfsbw_group *g, unsigned rq,
		int64_t delta)
{
	for (struct cfsbw_group *p = g; p; p = cfsbw_group_parent(p))
		drv_lookup(d, p)->consumed += delta;
	return cfsbw_charge(g, rq, delta, d->now);
}

int64_t drv_fire_period(struct drv *d, struct cfsbw_group *g)
{
	struct drv_group *dg = drv_lookup(d, g);
	dg->period_expiry = -1;
	dg->nr_fires++;
	int64_t next = cfsbw_period_timer_fire(g, d->now);
	if (next != CFSBW_TIMER_STOP) {
		if (next <= d->now) {
			/* A timer in the past would fire forever. */
			d->nr_bad_events++;
		} else {
			if (dg->period_expiry >= 0)
				dg->nr_double_starts++;
			dg->period_expiry = next;
		}
	}
	return next;
}

static void drv_fire_slack(struct drv *d, struct drv_group *dg)
{
	dg->slack_expiry = -1;
	int64_t next = cfsbw_slack_timer_fire(dg->g, d->now);
	if (next != CFSBW_TIMER_STOP) {
		if (next <= d->now)
			d->nr_bad_events++;
		else
			dg->slack_expiry = next;
	}
}

void drv_advance(struct drv *d, int64_t t)
{
	for (;;) {
		struct drv_group *best = NULL;
		bool slack = false;
		int64_t when = 0;
		for (size_t i = 0; i < d->ngroups; i++) {
			struct drv_group *dg = &d->groups[i];
			if (dg->period_expiry >= 0 && dg->period_expiry <= t &&
			    (!best || dg->period_expiry < when)) {
				best = dg;
				slack = false;
				when = dg->period_expiry;
			}
			if (dg->slack_expiry >= 0 && dg->slack_expiry <= t &&
			    (!best || dg->slack_expiry < when)) {
				best = dg;
				slack = true;
				when = dg->slack_expiry;
			}
		}
		if (!best)
			break;
		if (when > d->now)
			d->now = when;
		if (slack)
			drv_fire_slack(d, best);
		else
			drv_fire_period(d, best->g);
	}
	if (t > d->now)
		d->now = t;
}

void drv_clear(struct drv *d)
{
	d->nev = 0;
}

unsigned drv_count(const struct drv *d, enum drv_event_kind kind,
		   const struct cfsbw_group *g, unsigned rq)
{
	unsigned n = 0;
	for (size_t i = 0; i < d->nev; i++) {
		const struct drv_event *e = &d->ev[i];
		if (e->kind == kind && (!g || e->g == g) &&
		    (rq == DRV_ANY_RQ || e->rq == rq))
			n++;
	}
	return n;
}

unsigned drv_model_nr_running(struct drv *d, unsigned rq)
{
	unsigned n = 0;
	for (size_t i = 0; i < d->ngroups; i++) {
		struct drv_group *dg = &d->groups[i];
		bool blocked = false;
		for (struct cfsbw_group *p = dg->g; p; p = cfsbw_group_parent(p))
			blocked |= cfsbw_account_throttled(p, rq);
		if (!blocked)
			n += dg->tasks[rq];
	}
	return n;
}

void drv_run_busy(struct drv *d, struct cfsbw_group *g, unsigned nr_busy,
		  int64_t tick, int64_t until)
{
	for (int64_t t = d->now + tick; t <= until; t += tick) {
		/* Timers due before this tick fire first, at their expiry;
		 * one due at t fires after the tick that ends at t. */
		drv_advance(d, t - 1);
		d->now = t;
		for (unsigned rq = 0; rq < nr_busy; rq++)
			if (!cfsbw_throttled(g, rq))
				drv_charge(d, g, rq, tick);
	}
}

uint64_t drv_rng_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

int64_t drv_rng_range(uint64_t *state, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)(hi - lo) + 1;
	return lo + (int64_t)(drv_rng_next(state) % span);
}
