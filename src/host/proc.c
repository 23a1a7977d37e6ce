/*
 * proc.c - the table of governed processes and threads.
 *
 * Threads are found by tid (every ptrace stop names a tid) in a chained
 * hash table that doubles when it fills; processes are found by runqueue
 * number (a CPU-time timer's signal names the runqueue).  Runqueue numbers
 * are reused once a process has left the core (cfsbw_rq_offline permits it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host_int.h"

#define HASH_INITIAL 256u

static unsigned tid_hash(pid_t tid, unsigned mask)
{
	return ((unsigned)tid * 2654435761u) & mask;
}

/*
 * The driver's tables per runqueue, to n entries each (from NULL at
 * first).  -ENOMEM leaves the tables grown before the failure grown, which
 * is harmless: nr_rq says how much of them is in use.
 */
static int proc_tables_resize(struct cfsbw_host *h, unsigned n)
{
#define TABLE_RESIZE(table)                                                    \
	do {                                                                   \
		void *resized = realloc(h->table, n * sizeof(*h->table));       \
		if (!resized)                                                  \
			return -ENOMEM;                                        \
		h->table = resized;                                            \
	} while (0)
	TABLE_RESIZE(procs);
	TABLE_RESIZE(free_rq);
	TABLE_RESIZE(arm_list);
	TABLE_RESIZE(stop_list);
#undef TABLE_RESIZE
	return 0;
}

/* Runqueues nr_rq..n-1 come into use: empty, under the free ones (the
 * lowest number is popped first). */
static void proc_tables_add(struct cfsbw_host *h, unsigned n)
{
	for (unsigned rq = h->nr_rq; rq < n; rq++)
		h->procs[rq] = NULL;
	memmove(h->free_rq + (n - h->nr_rq), h->free_rq,
		h->nr_free_rq * sizeof(*h->free_rq));
	for (unsigned i = 0; i < n - h->nr_rq; i++)
		h->free_rq[i] = n - 1 - i;
	h->nr_free_rq += n - h->nr_rq;
	h->nr_rq = n;
}

int cfsbw_host__table_init(struct cfsbw_host *h)
{
	h->hash = calloc(HASH_INITIAL, sizeof(*h->hash));
	if (!h->hash)
		return -ENOMEM;
	h->hash_mask = HASH_INITIAL - 1;
	if (proc_tables_resize(h, HOST_NR_RQ_INITIAL) < 0) {
		cfsbw_host__table_free(h);
		return -ENOMEM;
	}
	proc_tables_add(h, HOST_NR_RQ_INITIAL);
	return 0;
}

void cfsbw_host__table_free(struct cfsbw_host *h)
{
	if (h->procs) {
		for (unsigned rq = 0; rq < h->nr_rq; rq++) {
			struct host_proc *p = h->procs[rq];
			if (!p)
				continue;
			while (p->threads) {
				struct host_thread *t = p->threads;
				p->threads = t->proc_next;
				if (t->stat_fd >= 0)
					close(t->stat_fd);
				free(t);
			}
			free(p);
		}
	}
	free(h->stop_list);
	free(h->arm_list);
	free(h->free_rq);
	free(h->procs);
	free(h->hash);
	h->stop_list = h->arm_list = h->free_rq = NULL;
	h->procs = NULL;
	h->hash = NULL;
	h->nr_rq = h->nr_free_rq = 0;
}

struct host_thread *cfsbw_host__thread_find(struct cfsbw_host *h, pid_t tid)
{
	struct host_thread *t = h->hash[tid_hash(tid, h->hash_mask)];
	while (t && t->tid != tid)
		t = t->hash_next;
	return t;
}

static void hash_grow(struct cfsbw_host *h)
{
	unsigned size = (h->hash_mask + 1) * 2;
	struct host_thread **n = calloc(size, sizeof(*n));
	if (!n)
		return; /* longer chains; still correct */
	for (unsigned i = 0; i <= h->hash_mask; i++) {
		while (h->hash[i]) {
			struct host_thread *t = h->hash[i];
			h->hash[i] = t->hash_next;
			unsigned b = tid_hash(t->tid, size - 1);
			t->hash_next = n[b];
			n[b] = t;
		}
	}
	free(h->hash);
	h->hash = n;
	h->hash_mask = size - 1;
}

/*
 * Doubles the runqueues: the core's tree first (every group gets accounts
 * for them), then the driver's tables.  Runs between events, never inside
 * a core call.  Returns 0 or -ENOMEM / -ENOSPC with the free list as it
 * was (a tree left larger than the tables is harmless).
 */
static int proc_table_grow(struct cfsbw_host *h)
{
	if (h->nr_rq >= HOST_NR_RQ_MAX)
		return -ENOSPC;
	unsigned n = h->nr_rq * 2 < HOST_NR_RQ_MAX ? h->nr_rq * 2 : HOST_NR_RQ_MAX;
	int err = cfsbw_tree_set_nr_rq(h->tree, n);
	if (err < 0)
		return err;
	err = proc_tables_resize(h, n);
	if (err < 0)
		return err;
	proc_tables_add(h, n);
	return 0;
}

bool cfsbw_host__proc_room(struct cfsbw_host *h)
{
	return h->nr_free_rq > 0 || proc_table_grow(h) == 0;
}

struct host_proc *cfsbw_host__proc_new(struct cfsbw_host *h, pid_t pid)
{
	if (!cfsbw_host__proc_room(h))
		return NULL;
	struct host_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->rq = h->free_rq[--h->nr_free_rq];
	h->procs[p->rq] = p;
	h->nr_live++;
	return p;
}

struct host_thread *cfsbw_host__thread_new(struct cfsbw_host *h, struct host_proc *p,
				 pid_t tid)
{
	struct host_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (h->nr_threads >= h->hash_mask)
		hash_grow(h);
	t->tid = tid;
	t->proc = p;
	t->stat_fd = -1;
	unsigned b = tid_hash(tid, h->hash_mask);
	t->hash_next = h->hash[b];
	h->hash[b] = t;
	t->proc_next = p->threads;
	p->threads = t;
	p->nr_threads++;
	h->nr_threads++;
	return t;
}

bool cfsbw_host__thread_forget(struct cfsbw_host *h, struct host_thread *t)
{
	struct host_proc *p = t->proc;
	struct host_thread **pp = &h->hash[tid_hash(t->tid, h->hash_mask)];
	while (*pp != t)
		pp = &(*pp)->hash_next;
	*pp = t->hash_next;
	pp = &p->threads;
	while (*pp != t)
		pp = &(*pp)->proc_next;
	*pp = t->proc_next;
	p->nr_threads--;
	h->nr_threads--;
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	free(t);
	return p->nr_threads == 0;
}

/* The process must have no threads left and have left the core. */
void cfsbw_host__proc_free(struct cfsbw_host *h, struct host_proc *p)
{
	while (p->threads)
		cfsbw_host__thread_forget(h, p->threads);
	h->procs[p->rq] = NULL;
	h->free_rq[h->nr_free_rq++] = p->rq;
	h->nr_live--;
	free(p);
}

/*
 * A child born traced may report its first stop before its parent reports
 * the fork event that names it; such tids wait here (a handful at most).
 */
bool cfsbw_host__early_add(struct cfsbw_host *h, pid_t tid, int64_t now_ns)
{
	if (h->nr_early >= HOST_MAX_EARLY)
		return false;
	h->early_since_ns[h->nr_early] = now_ns;
	h->early[h->nr_early++] = tid;
	return true;
}

static void early_remove(struct cfsbw_host *h, unsigned i)
{
	h->nr_early--;
	h->early[i] = h->early[h->nr_early];
	h->early_since_ns[i] = h->early_since_ns[h->nr_early];
}

bool cfsbw_host__early_take(struct cfsbw_host *h, pid_t tid)
{
	for (unsigned i = 0; i < h->nr_early; i++) {
		if (h->early[i] == tid) {
			early_remove(h, i);
			return true;
		}
	}
	return false;
}

/*
 * A held tid whose creator never named it (its creator was not traced: a
 * thread of a --pid target that appeared while we attached) must not stay
 * stopped: after HOST_EARLY_MAX_NS it is let go, ungoverned.
 */
int64_t cfsbw_host__early_expire(struct cfsbw_host *h, int64_t now_ns,
		       void (*release)(pid_t tid))
{
	int64_t next = 0;
	for (unsigned i = 0; i < h->nr_early;) {
		int64_t due = h->early_since_ns[i] + HOST_EARLY_MAX_NS;
		if (now_ns >= due) {
			release(h->early[i]);
			early_remove(h, i);
		} else {
			if (!next || due < next)
				next = due;
			i++;
		}
	}
	return next;
}
