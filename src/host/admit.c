/*
 * admit.c - taking processes in: the command cfsbw run starts, the
 * processes --pid names with their descendants, and a process placed in a
 * group (SPEC section 8's write to cgroup.procs), or moved to another.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The children of every thread of pid, each taken in (seize_child). */
static void seize_children(struct seize_ctx *c, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid > 0)
			cfsbw_host__trace_children(pid, tid, seize_child, c);
	}
	if (d)
		closedir(d);
}

/*
 * A descendant of a --pid process that cannot be traced (another user's,
 * as under a set-user-ID program, or traced already): recorded with the
 * reason, so that cfsbw can say which processes it does not govern.
 */
static void note_ungoverned(struct cfsbw_host *h, pid_t pid, int err)
{
	if (h->nr_ungoverned < HOST_MAX_UNGOVERNED) {
		struct host_ungoverned *u = &h->ungoverned[h->nr_ungoverned];
		u->pid = pid;
		if (err == -EPERM)
			cfsbw_host__trace_why_not(pid, u->why, sizeof u->why);
		else
			snprintf(u->why, sizeof u->why, "%s", strerror(-err));
	}
	h->nr_ungoverned++;
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
	err = err < 0 ? err : -ESRCH;
	/*
	 * A descendant that cannot be taken in is said, not skipped with
	 * its children: theirs may be traceable (a set-user-ID program's
	 * child that drops back to the user).  Its own later children are
	 * not seen: only a traced parent's children are born traced.
	 */
	if (depth > 0 && children && err != -ESRCH) {
		note_ungoverned(h, pid, err);
		if (depth <= 64) {
			struct seize_ctx cc = {h, grp, depth};
			seize_children(&cc, pid);
		}
	}
	return err;
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

unsigned cfsbw_host_nr_ungoverned(const struct cfsbw_host *h)
{
	return h->nr_ungoverned;
}

pid_t cfsbw_host_ungoverned(const struct cfsbw_host *h, unsigned i,
			    const char **why)
{
	if (i >= h->nr_ungoverned || i >= HOST_MAX_UNGOVERNED)
		return 0;
	*why = h->ungoverned[i].why;
	return h->ungoverned[i].pid;
}
