/*
 * setup.c - building the machine from a scenario, and taking it down:
 * the core's tree with the scenario's policy, sysctls and groups (every
 * setting through the core's file interface, so that R2 applies and an
 * error names the line), the groups' per-CPU entities, the tasks, and all
 * memory through the scenario's allocator.
 */
/* madvise(): the bulk memory's huge pages */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "sim/sim_int.h"

static void *alloc_with(const struct cfsbw_allocator *a, size_t n,
			size_t size, bool zero)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t bytes = n * size;
	if (bytes == 0)
		bytes = 1;
	if (!a)
		return zero ? calloc(1, bytes) : malloc(bytes);
	return a->alloc(bytes, _Alignof(max_align_t), a->ctx);
}

static void *zalloc_with(const struct cfsbw_allocator *a, size_t n,
			 size_t size)
{
	return alloc_with(a, n, size, true);
}

void *cfsbw_sim__zalloc(const struct cfsbw_sim *s, size_t n, size_t size)
{
	return alloc_with(s->alloc, n, size, true);
}

void *cfsbw_sim__alloc(const struct cfsbw_sim *s, size_t n, size_t size)
{
	return alloc_with(s->alloc, n, size, false);
}

/*
 * With the C library's allocator, realloc(): a large block grows in place
 * or by remapping its pages, where a copy into a new block would write
 * (and fault in) every byte twice: the request queues of starved tasks and
 * the latencies of long runs are megabytes.  A scenario's allocator has no
 * realloc: a new block, the copy, the old block freed.
 */
void *cfsbw_sim__grow(const struct cfsbw_sim *s, void *p, size_t old_n,
		      size_t new_n, size_t size)
{
	if (size && new_n > SIZE_MAX / size)
		return NULL;
	size_t bytes = new_n * size;
	if (!s->alloc)
		return realloc(p, bytes ? bytes : 1);
	void *q = cfsbw_sim__alloc(s, new_n, size);
	if (!q)
		return NULL;
	if (old_n)
		memcpy(q, p, old_n * size);
	cfsbw_sim__free(s, p);
	return q;
}

void cfsbw_sim__free(const struct cfsbw_sim *s, void *p)
{
	if (!p)
		return;
	if (s->alloc)
		s->alloc->free(p, s->alloc->ctx);
	else
		free(p);
}

#define SIM_HUGE_PAGE ((size_t)2 << 20)

/*
 * A huge page takes one fault where 512 small ones take 512 (about 10 us
 * each on a virtual machine) and one TLB entry: worth it for memory that
 * is written through, in order.  A scenario's allocator is asked for the
 * alignment; with the C library's, the block is also advised onto huge
 * pages (where transparent huge pages are "madvise", as on many systems).
 */
void *cfsbw_sim__alloc_bulk(const struct cfsbw_sim *s, size_t bytes)
{
	size_t align = bytes >= SIM_HUGE_PAGE ? SIM_HUGE_PAGE : 64;
	if (bytes > SIZE_MAX - align)
		return NULL;
	if (s->alloc)
		return s->alloc->alloc(bytes, align, s->alloc->ctx);
	void *p = aligned_alloc(align, (bytes + align - 1) / align * align);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	if (p && align == SIM_HUGE_PAGE)
		(void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: may be refused */
#endif
	return p;
}

static unsigned ilog2u(unsigned v)
{
	unsigned k = 0;
	while (v >>= 1)
		k++;
	return k;
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static void
set_error(struct cfsbw_sim_error *err, unsigned line, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	err->line = line;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/* n elements of size bytes, zeroed, on cache lines of their own: *mem
 * gets the allocation to free (63 bytes more), the result the aligned
 * start; NULL when out of memory or n * size overflows.  From 2 MB, in
 * a bulk block (huge pages where the system gives them): the groups of a
 * 64-CPU machine of 200 groups are 2.5 MB, 600 small pages each faulted
 * in as setup writes it (13 to 20 us a fault on the development VM). */
static void *zalloc_lines(struct cfsbw_sim *s, size_t n, size_t size,
			  void **mem)
{
	if (size && n > (SIZE_MAX - 63) / size)
		return *mem = NULL;
	size_t bytes = n * size + 63;
	if (bytes >= SIM_HUGE_PAGE) {
		*mem = cfsbw_sim__alloc_bulk(s, bytes);
		/* a scenario's allocator gives zeroed memory (cfsbw.h), the
		 * C library's aligned_alloc does not: zeroed once either way */
		if (*mem && !s->alloc)
			memset(*mem, 0, bytes);
	} else {
		*mem = cfsbw_sim__zalloc(s, 1, bytes);
	}
	return *mem ? (char *)*mem + (-(uintptr_t)*mem & 63) : NULL;
}

static int add_group(struct cfsbw_sim *s, struct cfsbw_group *cg)
{
	/* the group, then its entities per CPU, in the block setup_groups
	 * took for them all: a sim_group is a whole number of cache lines,
	 * so they start on one */
	SIM_BUG_ON(s->nr_groups >= s->cap_groups);
	struct sim_group *g = (struct sim_group *)(void *)(s->group_block +
							   s->nr_groups *
								   s->group_bytes);
	g->pc = (struct sim_gcpu *)(void *)(g + 1);
	g->cg = cg;
	g->index = (unsigned)s->nr_groups;
	g->depth = cfsbw_group_depth(cg);
	g->parent = cfsbw_group_parent(cg)
			    ? cfsbw_group_driver_data(cfsbw_group_parent(cg))
			    : NULL;
	g->shares = cfsbw_group_shares(cg);
	cfsbw_group_set_driver_data(cg, g);
	cfsbw_sim__timer_init(&g->period_timer, SIM_T_PERIOD);
	cfsbw_sim__timer_init(&g->slack_timer, SIM_T_SLACK);
	cfsbw_sim__timer_init(&g->sample_timer, SIM_T_SAMPLE);
	for (unsigned c = 0; c < s->nr_cpus; c++) {
		struct sim_gcpu *gc = &g->pc[c];
		gc->group = g;
		cfsbw_sim__cfs_rq_init(&gc->q, gc);
		gc->se.my_q = &gc->q;
		gc->se.weight = MIN_SHARES_WEIGHT;
		gc->se.id = s->next_entity_id++;
		if (g->parent) {
			gc->se.cfs_rq = &g->parent->pc[c].q;
			gc->se.parent = g->parent->parent ? &g->parent->pc[c].se
							  : NULL;
			gc->se.depth = g->depth - 1;
		}
	}
	s->groups[s->nr_groups++] = g;
	return 0;
}

/* The random first periods' streams: numbers far above the tasks'
 * (cfsbw_sim__task_streams), one per group. */
#define FIRST_PERIOD_STREAMS (UINT64_C(1) << 63)

/*
 * Where group number i's period grid lies (the scenario's first_period):
 * a share of its period, or a point drawn for the group from the seed,
 * uniform as Linux's get_random_u32_below(period), within armed_ns: the
 * period the group had when its quota was set (0: none was, its own
 * period).  Linux arms the timer
 * then and forwards it by a changed period only from its first expiry,
 * so a quota written before the period (at the default 100 ms) has its
 * first refresh within 100 ms, whatever the period after (docs/sim.md,
 * "The kernel's first period is short").
 */
static int64_t first_period_phase(const struct cfsbw_sim *s,
				  const struct cfsbw_group *cg, size_t i,
				  int64_t armed_ns)
{
	int64_t period = cfsbw_group_period_ns(cg);
	if (s->sc->first_period > 0)
		return period * s->sc->first_period / 100;
	if (armed_ns <= 0)
		armed_ns = period;
	struct sim_stream st;
	uint64_t key = cfsbw_sim__stream_key(s->sc->seed,
					     FIRST_PERIOD_STREAMS + i);
	cfsbw_sim__stream_seed(&st, key);
	return (int64_t)(cfsbw_sim__stream_next(&st) % (uint64_t)armed_ns);
}

static int setup_groups(struct cfsbw_sim *s, struct cfsbw_sim_error *err)
{
	const struct cfsbw_sim_scenario *sc = s->sc;
	int rc;
	for (size_t i = 0; i < sc->nr_sysctls; i++) {
		const struct cfsbw_sim_sysctl_spec *y = &sc->sysctls[i];
		rc = cfsbw_sysctl_write(s->tree, y->name, y->value);
		if (rc) {
			set_error(err, y->line, "sysctl %s %s: %s", y->name,
				  y->value, errno_text(rc));
			return rc == -ENOMEM ? rc : -EINVAL;
		}
	}
	/* the root and each group line at most ("group /" sets the root) */
	s->cap_groups = sc->nr_groups + 1;
	s->group_bytes = sizeof(struct sim_group) +
			 (size_t)s->nr_cpus * sizeof(struct sim_gcpu);
	s->group_block = zalloc_lines(s, s->cap_groups, s->group_bytes,
				      &s->groups_mem);
	if (!s->group_block)
		return -ENOMEM;
	if ((rc = add_group(s, cfsbw_tree_root(s->tree))))
		return rc;
	for (size_t i = 0; i < sc->nr_groups; i++) {
		const struct cfsbw_sim_group_spec *gs = &sc->groups[i];
		struct cfsbw_group *cg = cfsbw_tree_root(s->tree);
		bool root = !strcmp(gs->path, "/");
		/* "group / ..." configures the root, which always exists */
		rc = root ? 0 : cfsbw_group_create(s->tree, gs->path, &cg);
		if (rc == -ENOENT) {
			set_error(err, gs->line,
				  "group %s: its parent is not declared before it",
				  gs->path);
			return -EINVAL;
		}
		if (rc == -EEXIST) {
			set_error(err, gs->line, "group %s: declared twice",
				  gs->path);
			return -EINVAL;
		}
		if (rc) {
			set_error(err, gs->line, "group %s: %s", gs->path,
				  rc == -EINVAL ? "not a group path"
						: errno_text(rc));
			return rc == -ENOMEM ? rc : -EINVAL;
		}
		int64_t armed_ns = 0; /* the period when a quota was set */
		for (size_t k = 0; k < gs->nr_settings; k++) {
			const struct cfsbw_sim_setting *st = &gs->settings[k];
			rc = cfsbw_file_write(cg, st->file, st->value, 0);
			if (!rc && !armed_ns &&
			    cfsbw_group_quota_ns(cg) != CFSBW_RUNTIME_INF)
				armed_ns = cfsbw_group_period_ns(cg);
			if (rc == -ENOENT) {
				set_error(err, gs->line,
					  "%s=%s: no file %s in this policy",
					  st->file, st->value, st->file);
				return -EINVAL;
			}
			if (rc) {
				/* R2: the core's errno and the rule broken;
				 * the root's files take no write at all. */
				set_error(err, gs->line, "%s=%s: %s (%s)",
					  st->file, st->value, errno_text(rc),
					  root && rc == -EINVAL
						  ? "R2: the root group cannot "
						    "be limited or reweighted"
						  : cfsbw_file_rule(st->file));
				return rc == -ENOMEM ? rc : -EINVAL;
			}
		}
		if (root) {
			s->groups[0]->shares = cfsbw_group_shares(cg);
		} else if ((rc = add_group(s, cg))) {
			return rc;
		} else if (gs->first_period_ns > 0) {
			cfsbw_group_set_period_phase(cg, gs->first_period_ns);
		} else if (sc->first_period) {
			cfsbw_group_set_period_phase(
				cg, first_period_phase(s, cg, i, armed_ns));
		}
	}
	return 0;
}

static int setup_tasks(struct cfsbw_sim *s, struct cfsbw_sim_error *err)
{
	const struct cfsbw_sim_scenario *sc = s->sc;
	size_t total = 0;
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		struct cfsbw_group *cg =
			cfsbw_group_find(s->tree, sc->tasks[i].group);
		if (!cg) {
			set_error(err, sc->tasks[i].line,
				  "task %s: no such group (declare it with a "
				  "group line first)",
				  sc->tasks[i].group);
			return -EINVAL;
		}
		total += sc->tasks[i].count;
	}
	s->lines = zalloc_lines(s, sc->nr_tasks, sizeof(*s->lines),
				&s->lines_mem);
	s->tasks = zalloc_lines(s, total, sizeof(*s->tasks), &s->tasks_mem);
	if (!s->lines || !s->tasks)
		return -ENOMEM;
	s->nr_lines = sc->nr_tasks;
	size_t k = 0;
	for (size_t i = 0; i < sc->nr_tasks; i++) {
		const struct cfsbw_sim_task_spec *ts = &sc->tasks[i];
		struct sim_line *line = &s->lines[i];
		struct sim_group *g = cfsbw_group_driver_data(
			cfsbw_group_find(s->tree, ts->group));
		line->spec = ts;
		for (unsigned n = 0; n < ts->count; n++, k++) {
			struct sim_task *t = &s->tasks[k];
			t->g = g;
			t->line = line;
			t->spec = ts;
			/* fork balancing: spread in creation order */
			t->cpu = (unsigned)(k % s->nr_cpus);
			t->recent_cpu = t->cpu;
			t->state = SIM_TS_SLEEPING;
			t->last_ran_ns = INT64_MIN; /* never ran: cold */
			t->se.weight = NICE_0_LOAD;
			t->se.id = s->next_entity_id++;
			t->se.depth = g->depth;
			t->se.cfs_rq = &g->pc[t->cpu].q;
			t->link.prev = t->link.next = &t->link;
			if (ts->nr_threads) {
				/* a replay: one task per thread */
				const struct cfsbw_sim_trace_thread *th =
					&ts->threads[n % ts->nr_threads];
				t->steps = th->steps;
				t->nr_steps = th->nr_steps;
				t->steps_loop = th->loop;
				t->start_ns = th->start_ns;
				t->end_ns = th->end_ns;
				/* progress ties hold for one copy of
				 * each thread, played once */
				t->gated = ts->trace_gated &&
					   ts->count == ts->nr_threads &&
					   !th->loop;
				t->start_gate_ns = th->start_gate_progress_ns;
				t->start_gate_lag_ns = th->start_gate_lag_ns;
			} else {
				t->steps = ts->trace;
				t->nr_steps = ts->trace_len;
				t->steps_loop = ts->trace_loop;
			}
			cfsbw_sim__timer_init(&t->wake, SIM_T_WAKE);
			s->nr_tasks = k + 1;
			cfsbw_sim__workload_init(s, t);
		}
	}
	return 0;
}

/* Number every timer of the machine in the event queue, in the order
 * run.c's on_timer() decodes. */
static void register_timers(struct cfsbw_sim *s)
{
	for (unsigned c = 0; c < s->nr_cpus; c++)
		cfsbw_sim__evq_add(&s->evq, &s->cpus[c].burst);
	for (size_t i = 0; i < s->nr_tasks; i++)
		cfsbw_sim__evq_add(&s->evq, &s->tasks[i].wake);
	for (size_t i = 0; i < s->nr_groups; i++) {
		cfsbw_sim__evq_add(&s->evq, &s->groups[i]->period_timer);
		cfsbw_sim__evq_add(&s->evq, &s->groups[i]->slack_timer);
		cfsbw_sim__evq_add(&s->evq, &s->groups[i]->sample_timer);
	}
	cfsbw_sim__evq_add(&s->evq, &s->tick_timer);
	cfsbw_sim__evq_add(&s->evq, &s->balance_timer);
	SIM_BUG_ON(s->tick_timer.num !=
		   s->nr_cpus + s->nr_tasks + 3 * s->nr_groups);
}

int cfsbw_sim_create(const struct cfsbw_sim_scenario *sc,
		     struct cfsbw_sim **out, struct cfsbw_sim_error *err)
{
	if (err) {
		err->line = 0;
		err->msg[0] = '\0';
	}
	if (sc->nr_cpus < 1 || sc->nr_cpus > CFSBW_SIM_MAX_CPUS ||
	    sc->hz < CFSBW_SIM_MIN_HZ || sc->hz > CFSBW_SIM_MAX_HZ ||
	    sc->duration_ns <= 0 ||
	    sc->duration_ns > CFSBW_SIM_MAX_DURATION_NS) {
		set_error(err, 0, "cpus, hz or duration out of range");
		return -EINVAL;
	}
	struct cfsbw_sim *s = zalloc_with(sc->allocator, 1, sizeof(*s));
	if (!s) {
		set_error(err, 0, "out of memory");
		return -ENOMEM;
	}
	s->alloc = sc->allocator;
	int rc = -ENOMEM;
	unsigned n = sc->nr_cpus;
	s->sc = sc;
	s->nr_cpus = n;
	s->end_ns = sc->duration_ns;
	s->tick_ns = CFSBW_NSEC_PER_SEC / sc->hz;
	/* Linux scales its latency tunables by 1 + log2(min(cpus, 8)). */
	int64_t factor = 1 + ilog2u(n < 8 ? n : 8);
	s->latency_ns = 6 * CFSBW_NSEC_PER_MSEC * factor;
	s->min_gran_ns = 750 * CFSBW_NSEC_PER_USEC * factor;
	s->wakeup_gran_ns = 1 * CFSBW_NSEC_PER_MSEC * factor;
	s->nr_latency = 8;
	s->eevdf = sc->scheduler == CFSBW_SIM_SCHED_EEVDF;
	/* EEVDF's base_slice, 0.7 ms (Linux 6.12 on), scaled the same way */
	s->base_slice_ns = sc->base_slice_ns
				   ? sc->base_slice_ns
				   : 700 * CFSBW_NSEC_PER_USEC * factor;
	/* larger machines balance less often, as Linux's wider domains do:
	 * 4 ms up to 64 CPUs, 4 ms more per 64 CPUs beyond */
	s->balance_ns = 4 * CFSBW_NSEC_PER_MSEC * (int64_t)((n + 63) / 64);
	cfsbw_sim__rng_init(&s->rng);
	cfsbw_sim__timer_init(&s->balance_timer, SIM_T_BALANCE);
	cfsbw_sim__timer_init(&s->tick_timer, SIM_T_TICK);

	struct cfsbw_tree_config cfg = {
		.nr_rq = n,
		.policy = sc->policy,
		.ops = &cfsbw_sim__core_ops,
		.ctx = s,
		.allocator = sc->allocator,
	};
	rc = cfsbw_tree_create(&cfg, &s->tree);
	if (rc) {
		set_error(err, 0, "cannot create the group tree: %s",
			  errno_text(rc));
		cfsbw_sim__free(s, s);
		return rc;
	}
	rc = -ENOMEM;
	s->cpus = zalloc_lines(s, n, sizeof(*s->cpus), &s->cpus_mem);
	s->groups = cfsbw_sim__zalloc(s, sc->nr_groups + 1, sizeof(*s->groups));
	s->cap_pending = 2 * (size_t)n + sc->nr_groups + 64;
	s->pending = cfsbw_sim__zalloc(s, s->cap_pending, sizeof(*s->pending));
	s->resched_list = cfsbw_sim__zalloc(s, n, sizeof(*s->resched_list));
	s->idle_mask =
		cfsbw_sim__zalloc(s, (n + 63) / 64, sizeof(*s->idle_mask));
	s->sort_keys = cfsbw_sim__zalloc(s, n, sizeof(*s->sort_keys));
	s->balance_failed =
		cfsbw_sim__zalloc(s, n, sizeof(*s->balance_failed));
	s->balance_failed_pass =
		cfsbw_sim__zalloc(s, n, sizeof(*s->balance_failed_pass));
	if (!s->cpus || !s->groups || !s->pending || !s->resched_list ||
	    !s->idle_mask || !s->sort_keys || !s->balance_failed ||
	    !s->balance_failed_pass)
		goto fail;
	if (sc->balance_load == CFSBW_SIM_LOAD_PELT &&
	    !(s->cpu_pelt = cfsbw_sim__zalloc(s, n, sizeof(*s->cpu_pelt))))
		goto fail;
	if (sc->wake_scan == CFSBW_SIM_WAKE_UTIL) {
		unsigned domains = (n + SIM_DOMAIN_CPUS - 1) / SIM_DOMAIN_CPUS;
		s->cpu_util = cfsbw_sim__zalloc(s, n, sizeof(*s->cpu_util));
		s->idle_scan =
			cfsbw_sim__zalloc(s, domains, sizeof(*s->idle_scan));
		if (!s->cpu_util || !s->idle_scan)
			goto fail;
		/* until the first pass: the whole domain, as Linux starts */
		for (unsigned d = 0; d < domains; d++)
			s->idle_scan[d] = cfsbw_sim__domain_span(s, d);
	}
	for (unsigned c = 0; c < n; c++)
		cfsbw_sim__cpu_init(s, c);
	if ((rc = setup_groups(s, err)))
		goto fail;
	if ((rc = cfsbw_sim__check_budget(s, err)))
		goto fail;
	if ((rc = setup_tasks(s, err)))
		goto fail;
	if (s->eevdf && (rc = cfsbw_sim__eevdf_init(s)))
		goto fail;
	size_t nr_timers = (size_t)n + s->nr_tasks + 3 * s->nr_groups + 2;
	rc = -ENOMEM;
	if (nr_timers > UINT32_MAX - 1)
		goto fail;
	/* 64 bytes more, to align it on a cache line */
	s->evq_mem = cfsbw_sim__alloc(
		s, cfsbw_sim__evq_size((uint32_t)nr_timers) + 64, 1);
	if (!s->evq_mem)
		goto fail;
	cfsbw_sim__evq_init(&s->evq,
			    (char *)s->evq_mem + (-(uintptr_t)s->evq_mem & 63),
			    (uint32_t)nr_timers);
	register_timers(s);
	*out = s;
	return 0;
fail:
	if (rc == -ENOMEM && err && !err->msg[0])
		set_error(err, 0, "out of memory");
	cfsbw_sim_free(s);
	return rc;
}

void cfsbw_sim_free(struct cfsbw_sim *s)
{
	if (!s)
		return;
	if (s->lines)
		cfsbw_sim__lat_free(s);
	cfsbw_sim__free(s, s->groups_mem);
	cfsbw_tree_free(s->tree);
	cfsbw_sim__free(s, s->evq_mem);
	cfsbw_sim__free(s, s->tasks_mem);
	cfsbw_sim__free(s, s->lines_mem);
	cfsbw_sim__free(s, s->groups);
	cfsbw_sim__free(s, s->cpus_mem);
	cfsbw_sim__free(s, s->pending);
	cfsbw_sim__free(s, s->resched_list);
	cfsbw_sim__free(s, s->idle_mask);
	cfsbw_sim__free(s, s->sort_keys);
	cfsbw_sim__free(s, s->balance_failed);
	cfsbw_sim__free(s, s->balance_failed_pass);
	cfsbw_sim__free(s, s->cpu_pelt);
	cfsbw_sim__free(s, s->cpu_util);
	cfsbw_sim__free(s, s->idle_scan);
	cfsbw_sim__free(s, s->ev_nodes);
	cfsbw_sim__free(s, s);
}
