/*
 * admit.c - taking processes in: the command cfsbw run starts, the
 * processes --pid names with their descendants, and a process placed in a
 * group (SPEC section 8's write to cgroup.procs), or moved to another.
 */
#include <errno.h>
#include <string.h>

#include "host/host_int.h"

struct seize_ctx {
	struct cfsbw_host *h;
	struct host_group *grp;
	unsigned depth;
};

static int seize_proc(struct cfsbw_host *h, pid_t pid, struct host_group *grp,
		      unsigned depth, bool children);

static void seize_child(void *ctx, pid_t child)
{
	struct seize_ctx *c = ctx;
	/* Best effort: children come and go. */
	seize_proc(c->h, child, c->grp, c->depth + 1, true);
}

/* Take in a running process (and, with children, its descendants). */
static int seize_proc(struct cfsbw_host *h, pid_t pid, struct host_group *grp,
		      unsigned depth, bool children)
{
	if (cfsbw_host__thread_find(h, pid))
		return 0;
	struct host_proc *p = cfsbw_host__proc_new(h, pid);
	if (!p)
		return -ENOMEM;
	int err = cfsbw_host__trace_seize_threads(h, p);
	if (err < 0 || !p->threads)
		goto fail;
	err = cfsbw_host__proc_join(h, p, grp, false);
	if (err < 0)
		goto fail;
	if (!children || depth > 64)
		return 0;
	struct seize_ctx c = {h, grp, depth};
	for (struct host_thread *t = p->threads; t; t = t->proc_next)
		cfsbw_host__trace_children(pid, t->tid, seize_child, &c);
	return 0;

fail:
	for (struct host_thread *t = p->threads; t; t = t->proc_next)
		cfsbw_host__thread_detach(t->tid, 0);
	cfsbw_host__proc_leave(h, p);
	cfsbw_host__proc_free(h, p);
	return err < 0 ? err : -ESRCH;
}

static struct host_group *run_group(struct cfsbw_host *h)
{
	return h->group ? cfsbw_host__group_get(h, h->group) : NULL;
}

int cfsbw_host_spawn(struct cfsbw_host *h, char *const argv[])
{
	if (h->root_pid)
		return -EBUSY;
	struct host_group *grp = run_group(h);
	if (!grp)
		return h->group ? -ENOMEM : -EINVAL;
	struct host_spawn sp;
	int err = cfsbw_host__trace_spawn_start(h, argv, &sp);
	if (err < 0)
		return err;
	struct host_proc *p = cfsbw_host__proc_new(h, sp.pid);
	if (!p || !cfsbw_host__thread_new(h, p, sp.pid)) {
		err = -ENOMEM;
		goto fail;
	}
	err = cfsbw_host__proc_join(h, p, grp, true);
	if (err < 0)
		goto fail;
	/* Set only now: a failure above leaves no command behind. */
	h->root_pid = sp.pid;
	h->root_is_child = true;
	int status;
	err = cfsbw_host__trace_spawn_go(&sp, &status);
	if (err < 0)
		cfsbw_host__on_exited(h, sp.pid, status); /* exec failed: 127 */
	return err;

fail:
	if (p) {
		cfsbw_host__proc_leave(h, p);
		cfsbw_host__proc_free(h, p);
	}
	cfsbw_host__trace_spawn_abort(&sp);
	return err;
}

int cfsbw_host_attach(struct cfsbw_host *h, pid_t pid)
{
	if (h->root_pid && h->root_is_child)
		return -EBUSY;
	if (pid <= 0)
		return -ESRCH;
	struct host_group *grp = run_group(h);
	if (!grp)
		return h->group ? -ENOMEM : -EINVAL;
	bool first = !h->root_pid;
	if (first) {
		h->root_pid = pid;
		h->root_is_child = false;
	}
	/* It may be governed already: a descendant of one given before. */
	h->place_reason[0] = '\0';
	int err = seize_proc(h, pid, grp, 0, true);
	if (err < 0) {
		if (first)
			h->root_pid = 0;
		if (err == -EPERM)
			cfsbw_host__trace_why_not(pid, h->place_reason,
						  sizeof h->place_reason);
		return err;
	}
	struct host_thread *t = cfsbw_host__thread_find(h, pid);
	if (!t)
		return -ESRCH;
	struct host_proc *p = t->proc;
	if (p->pid != h->root_pid && !p->extra_root) {
		p->extra_root = true;
		h->nr_extra_roots++;
	}
	return 0;
}

int cfsbw_host_place(struct cfsbw_host *h, pid_t pid, struct cfsbw_group *g)
{
	h->place_reason[0] = '\0';
	if (!g || cfsbw_group_tree(g) != h->tree)
		return -EINVAL;
	/* A thread id stands for its whole process, as with cgroup.procs. */
	pid_t tgid = pid > 0 ? cfsbw_host__trace_tgid(pid) : -1;
	if (tgid <= 0)
		return -ESRCH;
	struct host_group *grp = cfsbw_host__group_get(h, g);
	if (!grp)
		return -ENOMEM;
	struct host_thread *t = cfsbw_host__thread_find(h, tgid);
	if (t && t->proc->grp) {
		cfsbw_host__proc_move(h, t->proc, grp);
		cfsbw_host__gtimers_sync(h);
		return 0;
	}
	int err = seize_proc(h, tgid, grp, 0, false);
	if (err == -EPERM)
		cfsbw_host__trace_why_not(tgid, h->place_reason,
					  sizeof h->place_reason);
	cfsbw_host__gtimers_sync(h);
	return err;
}

const char *cfsbw_host_place_reason(const struct cfsbw_host *h)
{
	return h->place_reason;
}
