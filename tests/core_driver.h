/*
 * core_driver.h - a scripted-clock driver for the core's tests.
 *
 * It owns a tree, a clock the test moves by hand, and a record of every
 * decision the core hands to its driver: which (group, runqueue) throttled
 * or unthrottled, in order and at what time, and which timers it asked for.
 * Timers fire only when the test moves the clock past them
 * (drv_advance), exactly at their expiry, in expiry order.
 *
 * It also keeps a model of runnable tasks per (group, runqueue) so that the
 * tests can check the core's counts (R9) against an independent count.
 */
#ifndef CFSBW_TESTS_CORE_DRIVER_H
#define CFSBW_TESTS_CORE_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfsbw.h"

#define MS(x) ((int64_t)(x) * CFSBW_NSEC_PER_MSEC)
#define US(x) ((int64_t)(x) * CFSBW_NSEC_PER_USEC)

enum drv_event_kind { DRV_THROTTLE, DRV_UNTHROTTLE };

struct drv_event {
	enum drv_event_kind kind;
	struct cfsbw_group *g;
	unsigned rq;
	int64_t now;
};

/* Per group bookkeeping, found by the group's driver_data. */
struct drv_group {
	struct cfsbw_group *g;
	int64_t period_expiry; /* armed period timer, or -1 */
	int64_t slack_expiry;  /* armed slack timer, or -1 */
	unsigned nr_period_starts, nr_slack_starts;
	unsigned nr_double_starts; /* core asked while the timer ran */
	uint64_t nr_fires;         /* period-timer fires */
	/* R12 model: throttle start per rq (-1: not throttled), closed sum. */
	int64_t *throttled_since;
	uint64_t throttled_time;
	/* upstream: when the throttled time started counting per rq (-1:
	 * not counting), only while a task waits under the account. */
	int64_t *clock_since;
	/* Runnable tasks of this group per rq (the test's model). */
	unsigned *tasks;
	/* CPU time charged to this group (itself and descendants). */
	int64_t consumed;
};

#define DRV_MAX_GROUPS 32
#define DRV_MAX_EVENTS 4096

struct drv {
	struct cfsbw_tree *tree;
	unsigned nr_rq;
	int64_t now;
	struct drv_event ev[DRV_MAX_EVENTS];
	size_t nev;           /* events recorded since the last drv_clear */
	uint64_t nev_total;   /* all events ever */
	unsigned nr_bad_events; /* throttle of a throttled one, and so on */
	bool clock_needs_tasks; /* upstream's R12 (Linux 6.18) */
	struct drv_group groups[DRV_MAX_GROUPS];
	size_t ngroups;
};

/* Creates the tree (allocator may be NULL).  Returns 0 or the core's error. */
int drv_init_alloc(struct drv *d, unsigned nr_rq, enum cfsbw_policy policy,
		   const struct cfsbw_allocator *allocator);
/* Same with the C library's allocator; aborts the program on failure. */
void drv_init(struct drv *d, unsigned nr_rq, enum cfsbw_policy policy);
void drv_fini(struct drv *d);

/* upstream's R12 model: each throttled account's clock runs while a task
 * waits under it; called whenever tasks or throttles change. */
void drv_sync_clocks(struct drv *d);
/* Registers a group created outside drv_group (e.g. the root). */
struct drv_group *drv_adopt(struct drv *d, struct cfsbw_group *g);
/*
 * Creates path and writes quota_us and period_us (0: leave the default;
 * quota -1: unlimited).  Aborts on any error: tests that check errors call
 * the core directly.
 */
struct cfsbw_group *drv_group(struct drv *d, const char *path,
			      long long quota_us, long long period_us);
struct drv_group *drv_of(struct cfsbw_group *g);
struct drv_group *drv_root(struct drv *d);

/* Writes a file at d->now; returns the core's result. */
int drv_write(struct drv *d, struct cfsbw_group *g, const char *file,
	      const char *text);
/* Reads one "key value" line of cpu.stat (or any file); -1 if missing. */
long long drv_stat_field(struct cfsbw_group *g, const char *key);

/* A task of g becomes runnable / stops being runnable on rq, at d->now. */
void drv_enqueue(struct drv *d, struct cfsbw_group *g, unsigned rq);
void drv_dequeue(struct drv *d, struct cfsbw_group *g, unsigned rq);
/*
 * Charges delta ns ending at d->now to g on rq and adds it to the consumed
 * time of g and its ancestors; returns the core's answer.
 */
bool drv_charge(struct drv *d, struct cfsbw_group *g, unsigned rq,
		int64_t delta);

/*
 * Moves the clock to t, firing every armed timer with expiry <= t at its
 * expiry, in expiry order (equal expiries: groups in registration order,
 * a group's period timer before its slack timer).
 */
void drv_advance(struct drv *d, int64_t t);
/* Fires g's period timer now (it must be armed), late or not. */
int64_t drv_fire_period(struct drv *d, struct cfsbw_group *g);

/* Forgets the recorded events (not the models). */
void drv_clear(struct drv *d);
/* Number of recorded events of kind for g on rq (g NULL: any group). */
unsigned drv_count(const struct drv *d, enum drv_event_kind kind,
		   const struct cfsbw_group *g, unsigned rq);
#define DRV_ANY_RQ 0xffffffffu

/*
 * The test's own count of tasks runnable on rq that can run (R9): a task
 * of group g counts unless an account on g's path is throttled on rq.
 */
unsigned drv_model_nr_running(struct drv *d, unsigned rq);

/*
 * Drives every rq in [0, nr_busy) with one always-runnable task of g:
 * every tick ns, from d->now to until, charges the tick to each rq that is
 * not throttled, then fires timers due.  Returns nothing; see
 * drv_group.consumed.
 */
void drv_run_busy(struct drv *d, struct cfsbw_group *g, unsigned nr_busy,
		  int64_t tick, int64_t until);

/* splitmix64: the tests' seeded generator. */
uint64_t drv_rng_next(uint64_t *state);
/* Uniform in [lo, hi]. */
int64_t drv_rng_range(uint64_t *state, int64_t lo, int64_t hi);

#endif
