/*
 * sim_int.h - the simulator's private header: the machine's objects and the
 * interfaces between the simulator's files.
 *
 *   evq.c       the event queue: timers in a heap keyed by (time, sequence)
 *   rng.c       seeded streams, exponential samples in integers
 *   cfs.c       the fair-scheduling model: entities, per-CPU queues of
 *               entities ordered by virtual runtime, weights from shares;
 *               CFS's placement and preemption
 *   eevdf.c     EEVDF (`scheduler eevdf`, Linux 6.6 on): lag, virtual
 *               deadlines, the eligible pick
 *   machine.c   CPUs, sleep and wake-up, throttling as the core decides
 *               it (R7, R10), picking what runs
 *   balance.c   load balancing (R8, R9)
 *   pelt.c      averaged load for balancing (`balance_load pelt`)
 *   run.c       ticks, timers, the run
 *   setup.c     building the machine from a scenario, memory
 *   workload.c  busy, duty, requests, trace; latencies
 *   requests.c  a requests task: arrivals and service times, drawn when
 *               reached
 *   scenario.c  a scenario's life; its text into lines of words
 *   scenario_directives.c  what each line of a scenario says
 *   trace_csv.c run_us,sleep_us trace text
 *   report.c    text and JSON reports
 *
 * Everything runs on one thread; time is int64_t nanoseconds of simulated
 * time; no decision uses floating point.
 */
#ifndef CFSBW_SIM_INT_H
#define CFSBW_SIM_INT_H

#include "common/helpers.h"
#include "cfsbw_sim.h"

/* A broken invariant of the model: common/helpers.h's BUG_ON. */
#define SIM_BUG_ON(cond) BUG_ON(cond)

/* A static function inlined into its callers whatever the compiler's
 * estimate: for the small steps of the most frequent work (arming a
 * timer, a heap's meld, a group's weight on the walk up). */
#if defined(__GNUC__) || defined(__clang__)
#define SIM_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define SIM_ALWAYS_INLINE static inline
#endif

/* The lowest set bit of bits != 0. */
static inline unsigned sim_ctz64(uint64_t bits)
{
#if defined(__GNUC__) || defined(__clang__)
	return (unsigned)__builtin_ctzll(bits);
#else
	unsigned b = 0;
	while (!(bits & (UINT64_C(1) << b)))
		b++;
	return b;
#endif
}

/* ---- evq.c ---------------------------------------------------------- */

enum sim_timer_kind {
	SIM_T_TICK,    /* the scheduler tick of every busy CPU */
	SIM_T_BURST,   /* the running task's burst of CPU ends (per CPU) */
	SIM_T_WAKE,    /* a task wakes, or a request arrives (per task) */
	SIM_T_PERIOD,  /* a group's period timer (R10) */
	SIM_T_SLACK,   /* a group's slack timer (upstream) */
	SIM_T_SAMPLE,  /* a group's timeline row */
	SIM_T_BALANCE, /* periodic load balancing */
};

#define SIM_TIMER_IDLE UINT32_MAX
#define SIM_EVQ_NONE UINT32_MAX

/* A timer is its number in the queue: its deadline and the rest are in the
 * queue's record for that number (struct sim_evq_rec); what it is for
 * follows from the number (run.c). */
struct sim_timer {
	uint32_t
		num; /* its number in the queue's tables (cfsbw_sim__evq_add) */
	uint16_t kind;
};

/* A heap slot: the deadline beside the timer's number, 16 bytes, so that
 * the four children of a slot share one cache line. */
struct sim_evq_slot {
	int64_t when;
	uint32_t num;
	uint32_t unused;
};

struct sim_evq_heap {
	struct sim_evq_slot *slot;
	uint32_t len;
};

/* What the queue keeps of one timer, 32 bytes: two to a cache line. */
struct sim_evq_rec {
	int64_t when;      /* deadline when armed */
	uint64_t seq;      /* sequence number when armed */
	uint32_t pos;      /* position in its heap or near array */
	uint32_t next, prev; /* links in its bucket */
	uint8_t where;     /* idle, near, wheel or far */
	uint8_t burst;     /* a SIM_T_BURST timer (first at an instant) */
	uint16_t unused;
};

/* The queue (evq.c): a near array, a wheel of buckets, a far heap; records
 * indexed by a timer's number. */
struct sim_evq {
	struct sim_evq_heap near, far;
	int64_t cursor;           /* the near tier's bucket */
	struct sim_evq_rec *rec;  /* [num] */
	struct sim_timer **timer; /* [num] */
	uint32_t *head;           /* [bucket]: its first timer */
	uint64_t *bitmap;         /* [bucket / 64]: buckets with timers */
	uint32_t nr_wheel, cap, nr;
	uint64_t next_seq;
};

/* Room for cap timers (cfsbw_sim__evq_size() bytes at mem, 64-byte aligned). */
size_t cfsbw_sim__evq_size(uint32_t cap);
void cfsbw_sim__evq_init(struct sim_evq *q, void *mem, uint32_t cap);
void cfsbw_sim__timer_init(struct sim_timer *t, enum sim_timer_kind kind);
/* Give t its number in q: every timer once, before it is armed.  Numbers
 * are given in the order of the calls, from 0. */
void cfsbw_sim__evq_add(struct sim_evq *q, struct sim_timer *t);
/* Arm (or re-arm) t at when >= 0.  The queue holds every timer: never
 * fails. */
void cfsbw_sim__timer_arm(struct sim_evq *q, struct sim_timer *t, int64_t when);
void cfsbw_sim__timer_cancel(struct sim_evq *q, struct sim_timer *t);
void cfsbw_sim__evq_cancel_num(struct sim_evq *q, uint32_t num);
static inline bool timer_armed(const struct sim_evq *q,
			       const struct sim_timer *t)
{
	return q->rec[t->num].where != 0;
}
/* When t was last armed for, and its sequence number then. */
static inline int64_t timer_when(const struct sim_evq *q,
				 const struct sim_timer *t)
{
	return q->rec[t->num].when;
}
static inline uint64_t timer_seq(const struct sim_evq *q,
				 const struct sim_timer *t)
{
	return q->rec[t->num].seq;
}
/* The earliest timer, left armed: its number (SIM_EVQ_NONE when none is
 * armed), or the timer (NULL).  Inline while the near tier holds one (the
 * run asks at every event); cfsbw_sim__evq_advance() moves to the next
 * bucket that holds any. */
uint32_t cfsbw_sim__evq_advance(struct sim_evq *q);
static inline uint32_t cfsbw_sim__evq_peek_num(struct sim_evq *q)
{
	if (q->near.len)
		return q->near.slot[q->near.len - 1].num;
	return cfsbw_sim__evq_advance(q);
}
struct sim_timer *cfsbw_sim__evq_peek(struct sim_evq *q);

/* ---- rng.c ---------------------------------------------------------- */

#define SIM_RNG_LOG_TABLE 1024u

/* One sequence of xoshiro256**. */
struct sim_stream {
	uint64_t s[4];
};

/* What every exponential sample reads, the same for every seed. */
struct sim_rng {
	/* log2(1 + i/1024), Q30 (< 2^30): 4 KB, half the lines of 64-bit
	 * entries for the lookups of every exponential sample */
	uint32_t log2_table[SIM_RNG_LOG_TABLE + 1];
};

void cfsbw_sim__rng_init(struct sim_rng *r);
/* A stream from a key: a seed, or stream_key()'s for one of its streams. */
void cfsbw_sim__stream_seed(struct sim_stream *st, uint64_t key);
/* The key of stream number `which` of a seed: streams of one seed are
 * independent of each other. */
uint64_t cfsbw_sim__stream_key(uint64_t seed, uint64_t which);
/* The two streams of the index-th task of a scenario for seed: streams
 * 2 index and 2 index + 1 (a requests task's arrivals, or a duty task's
 * phase, then service times).  The fidelity benchmark's processes call it
 * too, to draw what the simulator draws. */
void cfsbw_sim__task_streams(struct sim_stream st[2], uint64_t seed,
			     uint64_t index);
uint64_t cfsbw_sim__stream_next(struct sim_stream *st);
/* An exponential sample of mean mean_ns (>= 0) from stream st, in integer
 * arithmetic (r: the seeded table). */
int64_t cfsbw_sim__rng_exp(const struct sim_rng *r, struct sim_stream *st,
			   int64_t mean_ns);

/* ---- cfs.c ---------------------------------------------------------- */

#define NICE_0_LOAD 1024u
#define MIN_SHARES_WEIGHT 2u

/* Intrusive pairing heap: no allocation on enqueue. */
struct ph_node {
	struct ph_node *child, *next, *prev;
};

/* A domain: SIM_DOMAIN_CPUS neighbouring CPUs, like the cache-sharing
 * domains Linux balances first and where a waking task looks for an
 * idle CPU (balance.c, machine.c). */
#define SIM_DOMAIN_CPUS 64u

/*
 * A scheduling entity: one per task, one per group per CPU (the root group
 * has none: its queue is the CPU's).  What the walk up from a running task
 * reads at every level (cfsbw_sim__cpu_update_curr) comes first.
 */
struct sim_entity {
	int64_t vruntime;      /* ns of virtual time, compared wrap-safely */
	int64_t sum_exec;      /* CPU time while an entity on the path ran */
	uint64_t weight;
	struct sim_entity *parent;
	struct sim_cfs_rq *cfs_rq; /* the queue it is (or would be) on */
	bool on_rq;
	/* its queue's curr, and it ran since the queue's min_vruntime last
	 * took it in: the walk up marks it without reading the queue, and
	 * the queue settles before it is read or changed (cfs_settle) */
	bool ran;
	uint32_t id;           /* ties on vruntime go to the lower id */
	unsigned depth;        /* entities above this one */
	/* One of the two models' (a run uses one): CFS's sum_exec when last
	 * picked (check_preempt_tick), or EEVDF's virtual deadline, vruntime
	 * + slice * NICE_0_LOAD / weight (eevdf.c).  One field, so that a
	 * group's entity and queue stay on three cache lines. */
	union {
		int64_t prev_sum_exec;
		int64_t deadline;
	};
	struct ph_node node;
	struct sim_cfs_rq *my_q;   /* a group entity's own queue; NULL: task */
	/* EEVDF (eevdf.c): off a queue, its lag, V - vruntime when it left
	 * (clamped), restored at its next placement; while it runs, equal to
	 * deadline as long as its slice is protected (RUN_TO_PARITY) */
	int64_t vlag;
};

struct sim_cfs_rq {
	struct ph_node *root;   /* queued entities except curr */
	int64_t left_vruntime;  /* root's vruntime (a queued entity's does
				 * not change): read without touching it */
	int64_t min_vruntime;
	struct sim_entity *curr;
	uint64_t load;          /* weights of on_rq entities, curr included */
	unsigned nr_running;    /* on_rq entities, curr included */
	uint32_t ev_root;       /* EEVDF: its heap's entities by deadline
				 * (eevdf.c); 0: empty; SIM_EV_NO_TREE: not
				 * kept (a short queue) */
	struct sim_gcpu *owner; /* the group on this CPU owning the queue */
	/* EEVDF only (eevdf.c): the sum of weight * vruntime over the heap's
	 * entities, modulo 2^64: with min_vruntime it gives the weighted
	 * average, whose true value fits 63 bits, exactly */
	uint64_t sum_wv;
};

/* One group on one CPU: its entity and its queue, on cache lines of their
 * own (64-byte aligned, setup.c). */
struct sim_gcpu {
	_Alignas(64) struct sim_entity se;
	struct sim_cfs_rq q;
	uint64_t contrib;   /* q.load counted in the group's tg_load */
	bool throttled;     /* R7: the core throttled this account */
	struct sim_group *group;
};

/* A group, on cache lines of its own (setup.c): what a charge and a
 * reweight read of it come first, on one line. */
struct sim_group {
	_Alignas(64) struct cfsbw_group *cg;
	struct sim_group *parent;
	struct sim_gcpu *pc;    /* [nr_cpus], right after the group */
	uint64_t tg_load;       /* R8: runnable load of unthrottled queues */
	int64_t usage_ns;       /* CPU time of the group's own tasks during
				 * the run; of its subtree after it
				 * (cfsbw_sim_run() adds the children's) */
	unsigned shares;
	unsigned index;
	unsigned depth;
	uint64_t throttles;
	struct sim_timer period_timer, slack_timer, sample_timer;
	/* timeline */
	int64_t sample_start_ns, sample_usage_ns;
	uint64_t sample_throttles, sample_throttled_time;
};

struct sim_cpu;
struct cfsbw_sim;

/* Virtual time for delta ns of running at se's weight (inline: every
 * level of every charge). */
static inline int64_t cfsbw_sim__cfs_calc_delta_fair(int64_t delta,
						     const struct sim_entity *se)
{
	if (se->weight == NICE_0_LOAD)
		return delta;
	return (int64_t)((uint64_t)delta * NICE_0_LOAD / se->weight);
}
void cfsbw_sim__cfs_rq_init(struct sim_cfs_rq *q, struct sim_gcpu *owner);

/* The queued entity that comes first (NULL: none but curr, if any). */
static inline struct sim_entity *cfsbw_sim__cfs_first(const struct sim_cfs_rq *q)
{
	return q->root ? container_of(q->root, struct sim_entity, node) : NULL;
}
/* c ? a : b without a branch (a mask), where c is unpredictable. */
static inline int64_t sim_select(bool c, int64_t a, int64_t b)
{
	uint64_t mask = (uint64_t)0 - (uint64_t)c;
	return (int64_t)((uint64_t)b ^ (((uint64_t)a ^ (uint64_t)b) & mask));
}

/* An entity that is on no queue: what a queue with no curr reads as its
 * curr (cfsbw_sim__cfs_update_min_vruntime). */
extern const struct sim_entity cfsbw_sim__no_entity;

/* min_vruntime only moves forward: it is the queue's notion of "now"
 * (inline: at every settle and dequeue).  Written as selections, not
 * branches, a queue without curr reading cfsbw_sim__no_entity (on no
 * queue): whether curr is queued and whether the heap is empty change
 * from one call to the next at random, and as branches this was the
 * simulator's most often mispredicted one. */
static inline void cfsbw_sim__cfs_update_min_vruntime(struct sim_cfs_rq *q)
{
	const struct sim_entity *curr =
		q->curr ? q->curr : &cfsbw_sim__no_entity;
	int64_t m = q->min_vruntime, left = q->left_vruntime;
	bool has_left = q->root != NULL, has_curr = curr->on_rq;
	int64_t cv = curr->vruntime;
	bool curr_first = has_curr & !(has_left & vtime_before(left, cv));
	int64_t v = sim_select(curr_first, cv, sim_select(has_left, left, m));
	q->min_vruntime = sim_select(vtime_diff(v, m) > 0, v, m);
}
/*
 * Take in what curr ran since it was last taken in, as Linux's
 * update_curr() does at every level at once.  Between two changes of a
 * queue's entities only curr's virtual time moves, forward, so
 * min(curr, leftmost) only grows and the value at the last charge is
 * the largest of that stretch: settling once, before the queue is next
 * read or changed, gives the very min_vruntime of settling at every
 * charge.  Inline: before every enqueue, dequeue, put and placement.
 */
static inline void cfsbw_sim__cfs_settle(struct sim_cfs_rq *q)
{
	struct sim_entity *curr = q->curr;
	if (curr && curr->ran) {
		curr->ran = false;
		cfsbw_sim__cfs_update_min_vruntime(q);
	}
}
/* Every entity in q's heap (curr aside) once, in no useful order: the
 * first (NULL: none), then the one after se.  For the walks that visit
 * all of them (throttling's task states), not for picking. */
struct sim_entity *cfsbw_sim__cfs_heap_first(const struct sim_cfs_rq *q);
struct sim_entity *cfsbw_sim__cfs_heap_next(const struct sim_cfs_rq *q,
					    struct sim_entity *se);
/* The same walk, skipping se's subtree when into is false: every entity
 * below se in the heap comes at or after it in vruntime. */
struct sim_entity *cfsbw_sim__cfs_heap_after(const struct sim_cfs_rq *q,
					     struct sim_entity *se, bool into);
void cfsbw_sim__cfs_enqueue_entity(const struct cfsbw_sim *s,
				   struct sim_cfs_rq *q, struct sim_entity *se);
void cfsbw_sim__cfs_dequeue_entity(const struct cfsbw_sim *s,
				   struct sim_cfs_rq *q, struct sim_entity *se);
/* The pick leaving the running path in place (cfs.c), and the switch
 * from the running task's path to the picked one's. */
struct sim_entity *cfsbw_sim__cfs_pick_from(const struct cfsbw_sim *s,
					    struct sim_cfs_rq *q);
void cfsbw_sim__cfs_switch_path(const struct cfsbw_sim *s,
				struct sim_entity *pse, struct sim_entity *se);
void cfsbw_sim__cfs_put_entity(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			       struct sim_entity *se);
void cfsbw_sim__cfs_take_entity(const struct cfsbw_sim *s,
				struct sim_cfs_rq *q, struct sim_entity *se);
/* Where a waking entity joins q: CFS's sleeper credit, or EEVDF's lag. */
void cfsbw_sim__cfs_place_entity(const struct cfsbw_sim *s,
				 struct sim_cfs_rq *q, struct sim_entity *se);
void cfsbw_sim__cfs_reweight_group(const struct cfsbw_sim *s,
				   struct sim_group *g, unsigned cpu);
/* EEVDF: se's weight becomes w, with V, its lag and its time to its
 * deadline kept in real time; queued, it leaves the heap and comes back
 * at its new vruntime (reweight_group's path when the weight changes). */
void cfsbw_sim__cfs_reweight_eevdf(const struct cfsbw_sim *s,
				   struct sim_entity *se, uint64_t w);
void cfsbw_sim__cfs_reweight_path(struct cfsbw_sim *s, struct sim_group *g,
				  unsigned cpu);
void cfsbw_sim__cfs_enqueue_path(struct cfsbw_sim *s, struct sim_entity *se,
				 unsigned cpu);
void cfsbw_sim__cfs_dequeue_path(struct cfsbw_sim *s, struct sim_entity *se,
				 unsigned cpu);
int64_t cfsbw_sim__cfs_sched_slice(const struct cfsbw_sim *s,
				   const struct sim_entity *se);
bool cfsbw_sim__cfs_check_preempt_tick(const struct cfsbw_sim *s,
				       struct sim_cfs_rq *q,
				       struct sim_entity *curr);
bool cfsbw_sim__cfs_wakeup_preempt(const struct cfsbw_sim *s,
				   struct sim_entity *curr,
				   struct sim_entity *se);

/* ---- EEVDF (eevdf.c): the fair scheduler of Linux 6.6 and later -------- */

/* V: q's weighted average vruntime, curr included, floored. */
int64_t cfsbw_sim__eevdf_avg(const struct sim_cfs_rq *q);
#define SIM_EV_NO_TREE UINT32_MAX
/* A node of a queue's tree of queued entities ordered by deadline, with
 * the least vruntime of its subtree (eevdf.c). */
struct sim_ev_node {
	uint32_t child[2];    /* left, right: 1 + an entity's id; 0: none */
	uint32_t prio;        /* the treap's heap order, from the id */
	int64_t min_vruntime;
	struct sim_entity *se;
};
/* The nodes, when the run is EEVDF's (setup.c); 0 or -ENOMEM. */
int cfsbw_sim__eevdf_init(struct cfsbw_sim *s);
/* se joins or leaves q's tree (cfs.c's heap_add and heap_del). */
void cfsbw_sim__eevdf_insert(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			     struct sim_entity *se);
void cfsbw_sim__eevdf_erase(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			    struct sim_entity *se);
/* The eligible entity of q with the earliest deadline, curr included; with
 * protect, curr while its slice is protected (a wake-up's question). */
struct sim_entity *cfsbw_sim__eevdf_pick(const struct cfsbw_sim *s,
					 const struct sim_cfs_rq *q,
					 bool protect);
/* se was picked to run: its slice is protected until it ends. */
void cfsbw_sim__eevdf_picked(struct sim_entity *se);
/* se, still on q, leaves it: its lag, clamped. */
void cfsbw_sim__eevdf_save_lag(const struct cfsbw_sim *s,
			       const struct sim_cfs_rq *q,
			       struct sim_entity *se);
/* se, off q, is placed to join it: V minus its lag, a new deadline (half
 * a slice away for a task's first placement). */
void cfsbw_sim__eevdf_place(const struct cfsbw_sim *s,
			    const struct sim_cfs_rq *q, struct sim_entity *se,
			    bool initial);
/* se, running, reached its deadline: a new one; true if it did. */
bool cfsbw_sim__eevdf_update_deadline(const struct cfsbw_sim *s,
				      struct sim_entity *se);
/* se's weight becomes w (the caller sets it): its vruntime and deadline,
 * if queued (avg: its queue's V), else its lag. */
void cfsbw_sim__eevdf_reweight(struct sim_entity *se, int64_t avg,
			       uint64_t w);

/* ---- the machine (machine.c) ------------------------------------------ */

enum sim_task_state {
	SIM_TS_SLEEPING,
	SIM_TS_WAITING,
	SIM_TS_THROTTLED,
	SIM_TS_RUNNING,
	SIM_TS_COUNT
};

struct sim_line;

/*
 * A task, on cache lines of its own (64-byte aligned, setup.c): its entity
 * (the walk up from a running task reads its first 48 bytes), then what
 * a CPU's list walk reads (throttling, balancing: the link, state and
 * group), then what every charge and change of state writes (the burst
 * left, the time in each state), then what an arrival or a wake-up reads
 * and writes (its timer, its request queue), then the rest.
 */
/* A decayed average (pelt.c): fixed point, SIM_PELT_SHIFT bits below the
 * unit, as of the start of period `period` (of SIM_PELT_PERIOD_NS). */
#define SIM_PELT_SHIFT 10
#define SIM_PELT_PERIOD_NS INT64_C(1024000)
struct sim_pelt {
	uint64_t avg;
	int64_t period;
};

struct sim_task {
	_Alignas(64) struct sim_entity se;
	enum sim_task_state state;
	unsigned cpu;
	struct list_head link; /* on its CPU's list while runnable */
	struct sim_group *g;
	/* 128: every charge (the burst) and every change of state: a switch
	 * touches the task's first three lines, no more */
	int64_t burst_left;   /* CPU left in this burst; INT64_MAX: busy */
	int64_t state_since;
	/* when it last stopped running (Linux's se.exec_start as a switch
	 * leaves it): balancing leaves a task that ran within the
	 * scenario's migration_cost where it is (balance.c) */
	int64_t last_ran_ns;
	/* time in each state, added to its line's at the end of the run: a
	 * change of state touches the task alone */
	int64_t state_ns[SIM_TS_COUNT];
	bool runnable;
	bool exited;
	/* the spec's workload and its figures, copied (workload_init):
	 * read at every wake-up, arrival and end of burst */
	uint8_t workload;      /* enum cfsbw_sim_workload */
	bool arrivals_periodic, service_exp;
	struct sim_timer wake;
	/* 192: requests (requests.c): the arrival of the one in service or
	 * waiting for a CPU, and of the next, drawn ahead (already past
	 * when it is queued) */
	int64_t req_arrival, next_arrival;
	int64_t work_ns;       /* duty: run_ns; requests: service_ns */
	int64_t gap_ns;        /* duty: sleep_ns; requests: mean_gap_ns */
	struct sim_line *line;
	const struct cfsbw_sim_task_spec *spec;
	int64_t cycle_start;  /* duty: when this cycle's run became due */
	uint64_t migrations;
	/* balance_load pelt (pelt.c): how runnable it has been, 1024 the
	 * whole time */
	struct sim_pelt pelt;
	/* wake_scan util (machine.c): its previous CPU when it last woke to
	 * a busy one, at first the CPU it starts on (Linux's
	 * recent_used_cpu) */
	unsigned recent_cpu;
	/* 320: its own draws, streams 2k and 2k + 1 of the seed for the k-th
	 * task (workload_init): requests' arrivals and service times
	 * (requests.c); a duty task's random phase from the first.  One
	 * cache line for both, read at every arrival and service. */
	_Alignas(64) struct sim_stream draw[2];
	/* 384: the rest, for traces */
	/* trace: the steps it replays (its thread's, or the CSV's) */
	const struct cfsbw_sim_trace_step *steps;
	size_t nr_steps;
	bool steps_loop;
	int64_t start_ns;      /* its thread's first run */
	int64_t end_ns;        /* it exits at its first step past it (0: no) */
	int64_t timer_next_ns; /* rt-app timer: the last expiry, -1: none */
	bool gated;            /* wake-ups tied to the line's progress */
	int64_t gate_ns, gate_lag_ns; /* waiting for that progress */
	struct sim_task *gate_next;   /* the line's waiters, by gate_ns */
	int64_t start_gate_ns, start_gate_lag_ns;
	size_t trace_pos;
};

/* 1 KB of a line's latencies, from blocks all lines share (latency.c):
 * 4-byte ones or 8-byte ones, each line keeping a list of each. */
#define SIM_LAT_CHUNK_VALUES 254u
#define SIM_LAT_CHUNK_LONGS 127u
struct sim_lat_chunk {
	struct sim_lat_chunk *next;
	union {
		uint32_t v[SIM_LAT_CHUNK_VALUES];
		int64_t lv[SIM_LAT_CHUNK_LONGS];
	};
};

/* A task line, on cache lines of its own (64-byte aligned, setup.c): what
 * a completed request or cycle writes comes first. */
struct sim_line {
	/* latencies (latency.c): under 2^32 ns in chunks of 4-byte values,
	 * from lat_slot on in the last; the longer ones likewise in chunks
	 * of 8-byte values */
	_Alignas(64) uint32_t *lat_slot;
	uint32_t *lat_slot_end;
	size_t nr_lat;
	int64_t lat_sum, lat_max;
	uint64_t completed;
	struct sim_lat_chunk *lat_first, *lat_last;
	/* 64 */
	int64_t *long_slot, *long_slot_end;
	size_t nr_long;
	struct sim_lat_chunk *long_first, *long_last;
	uint64_t lat_lost;
	const struct cfsbw_sim_task_spec *spec;
	int64_t state_ns[SIM_TS_COUNT]; /* its tasks', at the end of the run */
	uint64_t migrations;
	uint64_t pending;     /* requests still queued at the end */
	struct cfsbw_sim_latency summary; /* line_finish's */
	uint64_t exited;      /* tasks that finished (trace replays) */
	int64_t last_exit_ns;
	int64_t progress_ns;  /* CPU of the trace steps completed */
	struct sim_task *gated; /* tasks waiting for progress, by gate */
};

/* A CPU, on a cache line of its own (setup.c): what a charge, a tick and
 * a switch read of it. */
struct sim_cpu {
	_Alignas(64) struct sim_task *curr;
	int64_t exec_start;
	struct sim_timer burst;
	/* runnable tasks here, the most recently run or arrived first */
	struct list_head tasks;
	unsigned nr;           /* R9 count as last seen */
	bool resched;          /* on the resched list */
	bool idle;
	int64_t busy_since;    /* when it last stopped being idle */
};

enum sim_pending_op { SIM_OP_THROTTLE, SIM_OP_UNTHROTTLE };

struct sim_pending {
	struct sim_group *g;
	unsigned cpu;
	enum sim_pending_op op;
};

struct cfsbw_sim {
	const struct cfsbw_sim_scenario *sc;
	const struct cfsbw_allocator *alloc; /* NULL: the C library's */
	struct cfsbw_tree *tree;
	unsigned nr_cpus;
	int64_t now;
	int64_t end_ns;
	int64_t tick_ns;
	/* CFS tunables (scaled by CPUs as Linux does), ns */
	int64_t latency_ns, min_gran_ns, wakeup_gran_ns;
	unsigned nr_latency;
	/* the fair scheduler: CFS (cfs.c) or EEVDF (eevdf.c) */
	bool eevdf;
	int64_t base_slice_ns; /* EEVDF: each entity's request, scaled */
	/* EEVDF: one tree node per entity, at 1 + its id (eevdf.c) */
	struct sim_ev_node *ev_nodes;
	int64_t balance_ns;
	struct sim_evq evq;
	void *evq_mem;
	struct sim_rng rng;
	struct sim_cpu *cpus;      /* [nr_cpus], on cache lines of their own */
	void *cpus_mem;            /* their allocation */
	struct sim_group **groups; /* in creation order; [0] is the root */
	size_t nr_groups;
	/* the groups, each with its pc after it, one after the other in one
	 * allocation (setup.c: add_group) */
	void *groups_mem;
	char *group_block;
	size_t group_bytes, cap_groups;
	struct sim_task *tasks;
	void *tasks_mem;   /* tasks' allocation (tasks is aligned in it) */
	void *lines_mem;   /* lines' allocation (lines is aligned in it) */
	size_t nr_tasks;
	struct sim_line *lines;
	size_t nr_lines;
	struct sim_timer balance_timer;
	struct sim_timer tick_timer;
	/* decisions of the core, acted on after it returns */
	struct sim_pending *pending;
	size_t nr_pending, cap_pending;
	bool draining;
	unsigned *resched_list;
	size_t nr_resched;
	/* load balancing */
	uint64_t *idle_mask;  /* bit set: CPU runs nothing */
	unsigned nr_idle;
	unsigned nr_overloaded; /* CPUs whose R9 count is >= 2 */
	uint64_t *sort_keys;
	uint64_t balance_passes;
	/* Per CPU as a destination (its domain's nr_balance_failed): the
	 * periodic passes in a row that found it out of balance and moved
	 * nothing to it, and the pass that last counted one; CPUs with a
	 * count above 0 */
	unsigned *balance_failed;
	uint64_t *balance_failed_pass;
	unsigned nr_balance_failing;
	/* balance_load pelt (pelt.c): each CPU's averaged load; NULL: the
	 * balancer reads the weight queued now */
	struct sim_pelt *cpu_pelt;
	/* wake_scan util (machine.c, balance.c): each CPU's busy time,
	 * averaged as PELT averages (its utilisation), and per domain the
	 * CPUs a waking task may look at for an idle one, from the domain's
	 * utilisation at the last balancing pass; NULL: every CPU */
	struct sim_pelt *cpu_util;
	unsigned *idle_scan;
	uint32_t next_entity_id;
	cfsbw_sim_timeline_fn *timeline;
	void *timeline_ctx;
	/* totals */
	uint64_t events, switches, migrations;
	int64_t busy_ns;
	size_t nr_exited; /* tasks that exited: the run ends at nr_tasks when
			   * the scenario says until_done */
	/* latencies' memory (latency.c): blocks, the free part of the last */
	struct sim_lat_block *lat_blocks;
	char *lat_next, *lat_end;
	size_t lat_block_size;
	void *lat_scratch; /* line_finish's copy of a line's chunks */
	size_t cap_scratch; /* its bytes */
};

static inline struct sim_task *task_of(struct sim_entity *se)
{
	return container_of(se, struct sim_task, se);
}

/* setup.c: memory through the scenario's allocator, zeroed; NULL when
 * n * size overflows or memory ran out. */
void *cfsbw_sim__zalloc(const struct cfsbw_sim *s, size_t n, size_t size);
/* The same, not necessarily zeroed: for arrays filled before they are read
 * (the queues and records that grow during a run). */
void *cfsbw_sim__alloc(const struct cfsbw_sim *s, size_t n, size_t size);
/* p (old_n elements, NULL when 0) grown to new_n >= old_n, its elements
 * kept; NULL when out of memory, p then unchanged. */
void *cfsbw_sim__grow(const struct cfsbw_sim *s, void *p, size_t old_n,
		      size_t new_n, size_t size);
void cfsbw_sim__free(const struct cfsbw_sim *s, void *p);
/* bytes for data written once, in order (latencies): from 2 MB on, aligned
 * to 2 MB and on huge pages where the system has them; not zeroed. */
void *cfsbw_sim__alloc_bulk(const struct cfsbw_sim *s, size_t bytes);

/* machine.c, for setup.c: the core's callbacks, a CPU's first state. */
extern const struct cfsbw_ops cfsbw_sim__core_ops;
void cfsbw_sim__cpu_init(struct cfsbw_sim *s, unsigned c);

static inline bool group_in_subtree(const struct sim_group *a,
				    const struct sim_group *top)
{
	while (a && a->depth > top->depth)
		a = a->parent;
	return a == top;
}

/* machine.c, for run.c and balance.c */
void cfsbw_sim__cpu_update_curr(struct cfsbw_sim *s, unsigned c);
void cfsbw_sim__cpu_resched(struct cfsbw_sim *s, unsigned c);
/* Reschedule the CPUs marked, act on the core's decisions: both asked
 * for after every event and every charge, most often with nothing to do,
 * so the test is inline. */
void cfsbw_sim__resched_cpus(struct cfsbw_sim *s);
void cfsbw_sim__drain_pending(struct cfsbw_sim *s);
static inline void cfsbw_sim__process_resched(struct cfsbw_sim *s)
{
	if (s->nr_resched > 0)
		cfsbw_sim__resched_cpus(s);
}
static inline void cfsbw_sim__core_drain(struct cfsbw_sim *s)
{
	if (s->nr_pending > 0)
		cfsbw_sim__drain_pending(s);
}
void cfsbw_sim__schedule_cpu(struct cfsbw_sim *s, unsigned c);
void cfsbw_sim__task_attach(struct cfsbw_sim *s, struct sim_task *t,
			    unsigned c);
void cfsbw_sim__task_detach(struct cfsbw_sim *s, struct sim_task *t);
void cfsbw_sim__task_renormalize(struct sim_task *t, unsigned from,
				 unsigned to);
void cfsbw_sim__check_preempt_wakeup(struct cfsbw_sim *s, unsigned c,
				     struct sim_task *t);

/* budget.c: refuse a scenario that asks for more events than its budget
 * (max_events), naming the line that asks for the most; 0 or -EINVAL. */
int cfsbw_sim__check_budget(const struct cfsbw_sim *s,
			    struct cfsbw_sim_error *err);

/* balance.c: a CPU about to idle pulls a task (true if it did); the
 * periodic pass. */
bool cfsbw_sim__balance_newidle(struct cfsbw_sim *s, unsigned dst);
void cfsbw_sim__balance(struct cfsbw_sim *s);

/* pelt.c: averaged load for balancing (balance_load pelt) */
void cfsbw_sim__pelt_advance(struct sim_pelt *p, int64_t now, uint64_t held);
uint64_t cfsbw_sim__pelt_cpu_load(struct cfsbw_sim *s, unsigned c);
void cfsbw_sim__pelt_root_changing(const struct cfsbw_sim *s,
				   const struct sim_cfs_rq *q);
void cfsbw_sim__pelt_task_runnable(const struct cfsbw_sim *s,
				   struct sim_task *t, bool runnable);
uint64_t cfsbw_sim__pelt_task_load(const struct cfsbw_sim *s,
				   struct sim_task *t, uint64_t h);
void cfsbw_sim__pelt_task_moves(struct cfsbw_sim *s, struct sim_task *t,
				unsigned from, unsigned to);
uint64_t cfsbw_sim__task_h_load(const struct sim_task *t);
/* Queue q's load is about to change: a CPU's root queue first closes its
 * average up to now (balance_load pelt).  One test when it is off. */
static inline void cfsbw_sim__pelt_load_changing(const struct cfsbw_sim *s,
						 const struct sim_cfs_rq *q)
{
	if (s->cpu_pelt && q->owner->group == s->groups[0])
		cfsbw_sim__pelt_root_changing(s, q);
}

/* wake_scan util: CPU c's utilisation now (pelt.c: its busy time
 * averaged), the CPUs of domain d, and how many of them a waking task
 * may look at when its domain's utilisation adds up to sum_util
 * (balance.c, Linux's SIS_UTIL). */
uint64_t cfsbw_sim__pelt_cpu_util(const struct cfsbw_sim *s, unsigned c);
static inline unsigned cfsbw_sim__domain_span(const struct cfsbw_sim *s,
					      unsigned d)
{
	unsigned first = d * SIM_DOMAIN_CPUS;
	return s->nr_cpus - first < SIM_DOMAIN_CPUS ? s->nr_cpus - first
						    : SIM_DOMAIN_CPUS;
}
unsigned cfsbw_sim__idle_scan_depth(uint64_t sum_util, unsigned span);
/* The CPU a waking task t goes to (machine.c; the tests call it). */
unsigned cfsbw_sim__select_cpu(struct cfsbw_sim *s, struct sim_task *t);

/* machine.c, for workload.c */
void cfsbw_sim__task_set_state(struct cfsbw_sim *s, struct sim_task *t,
			       enum sim_task_state st);
void cfsbw_sim__task_wake(struct cfsbw_sim *s, struct sim_task *t);
void cfsbw_sim__task_sleep(struct cfsbw_sim *s, struct sim_task *t);
void cfsbw_sim__task_continue(struct cfsbw_sim *s, struct sim_task *t);

/* requests.c: a requests task (workload.c hands it on) */
void cfsbw_sim__req_start(struct cfsbw_sim *s, struct sim_task *t);
/* Its wake-up timer: the next request arrived at an idle task. */
void cfsbw_sim__req_arrival(struct cfsbw_sim *s, struct sim_task *t);
/* The running task t finished its request. */
void cfsbw_sim__req_done(struct cfsbw_sim *s, struct sim_task *t);
/* At the end of the run: the requests that arrived and are not done
 * (each arrival not yet reached counted as the event it was). */
uint64_t cfsbw_sim__req_pending(struct cfsbw_sim *s, struct sim_task *t);

/* workload.c */
void cfsbw_sim__workload_init(struct cfsbw_sim *s, struct sim_task *t);
void cfsbw_sim__workload_start(struct cfsbw_sim *s, struct sim_task *t);
/* The running task t finished its burst: continue, sleep or exit. */
void cfsbw_sim__workload_burst_done(struct cfsbw_sim *s, struct sim_task *t);
void cfsbw_sim__workload_wake_timer(struct cfsbw_sim *s, struct sim_task *t);

/* ---- latency.c ---------------------------------------------------------- */

void cfsbw_sim__line_record(struct cfsbw_sim *s, struct sim_line *l,
			    int64_t latency_ns);
/* After the run: the percentiles cfsbw_sim__line_latency() gives. */
void cfsbw_sim__line_finish(struct cfsbw_sim *s, struct sim_line *l);
void cfsbw_sim__line_latency(const struct sim_line *l,
			     struct cfsbw_sim_latency *out);
/* Forget l's latencies (their memory stays the run's: for tests). */
void cfsbw_sim__line_clear(struct sim_line *l);
/* The latencies' memory, every line's, given back. */
void cfsbw_sim__lat_free(struct cfsbw_sim *s);

/* ---- scenario and trace text (scenario.c) ------------------------------ */

/* Fill err (when not NULL) with the line and the message; returns -EINVAL. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
int cfsbw_sim__input_fail(struct cfsbw_sim_error *err, unsigned line,
			  const char *fmt, ...);
/* "out of memory" at the line; returns -ENOMEM. */
int cfsbw_sim__input_oom(struct cfsbw_sim_error *err, unsigned line);

/* One line of a scenario that has words: word[0] is its directive. */
typedef int cfsbw_sim__words_fn(void *ctx, unsigned line, char **word,
				int nr_words);
/*
 * Split text into lines ('#' starts a comment) and each line into words
 * separated by white space; call fn for each line with words, stopping at
 * the first that returns non-zero.  Clears err first.  Returns 0, fn's
 * result, or -EINVAL for a line too long or of too many words.
 */
int cfsbw_sim__scenario_read_words(const char *text,
				   struct cfsbw_sim_error *err,
				   cfsbw_sim__words_fn *fn, void *ctx);

/* A decimal integer in [lo, hi] (kstrtoull's rules: common/helpers.h). */
static inline bool sim_parse_uint(const char *s, uint64_t lo, uint64_t hi,
				  uint64_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

#endif /* CFSBW_SIM_INT_H */
