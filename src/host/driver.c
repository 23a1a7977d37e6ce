/*
 * driver.c - a driver's life: the process-wide state it takes (the signal
 * mask, SIGCHLD's disposition, two real-time signals) and gives back, its
 * core tree, its timers, and the accessors of include/cfsbw_host.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "host/host_int.h"

/* One driver per process (cfsbw_host.h, "Process-wide state"). */
static bool host_exists;

/* ---- life cycle ---- */

/*
 * An ignored SIGCHLD (inherited from whoever started us) would be
 * discarded, not queued, and tracees' zombies reaped before we could read
 * their clocks: take the default disposition while we run.  Every event
 * is read from the signalfd, never by a handler.
 */
static int signals_take(struct cfsbw_host *h)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	if (sigaction(SIGCHLD, &dfl, &h->old_chld) < 0)
		return -errno;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, h->cputimer_signo);
	sigaddset(&set, h->timer_signo);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	int err = 0;
	if (sigprocmask(SIG_BLOCK, &set, &h->old_mask) < 0) {
		err = -errno;
		goto fail_mask;
	}
	h->sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (h->sig_fd < 0) {
		err = -errno;
		goto fail_sigfd;
	}
	return 0;

fail_sigfd:
	sigprocmask(SIG_SETMASK, &h->old_mask, NULL);
fail_mask:
	sigaction(SIGCHLD, &h->old_chld, NULL);
	return err;
}

/*
 * Every timer is deleted by now; a signal of theirs may still be pending,
 * and unblocked its default action would kill the caller: take them.
 */
static void signals_give_back(struct cfsbw_host *h)
{
	sigset_t ours;
	sigemptyset(&ours);
	sigaddset(&ours, h->cputimer_signo);
	sigaddset(&ours, h->timer_signo);
	struct timespec zero = {0, 0};
	while (sigtimedwait(&ours, NULL, &zero) > 0)
		;
	close(h->sig_fd);
	sigaction(SIGCHLD, &h->old_chld, NULL);
	sigprocmask(SIG_SETMASK, &h->old_mask, NULL);
}

int cfsbw_host_create(const struct cfsbw_host_config *cfg,
		      struct cfsbw_host **out)
{
	/*
	 * Hard limits (seeds 009-011) bound a group by its runqueues' shares,
	 * which processes do not have here, and the reach's promises assume a
	 * pool that only the period timer refills.
	 */
	if (cfg->policy >= CFSBW_POLICY_COUNT ||
	    cfg->policy == CFSBW_POLICY_HARDLIMITS)
		return -EINVAL;
	if (host_exists)
		return -EBUSY;
	struct cfsbw_host *h = calloc(1, sizeof(*h));
	int err = -ENOMEM;
	if (!h)
		goto fail_alloc;
	h->cfg = *cfg;
	h->sig_fd = -1;
	h->epoll_fd = -1;
	list_init(&h->groups);
	h->cputimer_signo = SIGRTMIN + 2;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	h->nr_cpus = cpus > 0 ? (unsigned)cpus : 1;
	h->timer_signo = SIGRTMIN + 3;
	err = cfsbw_host__table_init(h);
	if (err < 0)
		goto fail_table;

	struct cfsbw_tree_config tc = {
		.nr_rq = h->nr_rq,
		.policy = cfg->policy,
		.ops = &cfsbw_host__ops,
		.ctx = h,
	};
	err = cfsbw_tree_create(&tc, &h->tree);
	if (err < 0)
		goto fail_tree;
	if (!cfg->daemon) {
		err = cfsbw_group_create(h->tree, "/run", &h->group);
		if (err < 0)
			goto fail_group;
	} else {
		/*
		 * Many groups: their periods end together (R10, on the grid
		 * of CLOCK_MONOTONIC's multiples of the period), so one
		 * wake-up and one timer refresh them all, and the groups'
		 * POSIX timer, periodic, is never set again (group.c).
		 */
		cfsbw_tree_align_periods(h->tree, true);
	}

	for (int i = 0; i < HOST_NR_TIMERS; i++) {
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = h->timer_signo;
		sev.sigev_value.sival_int = i;
		if (timer_create(CLOCK_MONOTONIC, &sev, &h->timers[i]) < 0) {
			err = -errno;
			goto fail_timers;
		}
		h->nr_timers = i + 1;
	}
	err = signals_take(h);
	if (err < 0)
		goto fail_timers;
	host_exists = true;
	*out = h;
	return 0;

fail_timers:
	for (int i = 0; i < h->nr_timers; i++)
		timer_delete(h->timers[i]);
fail_group:
	cfsbw_tree_free(h->tree);
fail_tree:
	cfsbw_host__table_free(h);
fail_table:
	free(h);
fail_alloc:
	return err;
}

void cfsbw_host_destroy(struct cfsbw_host *h)
{
	if (!h)
		return;
	if (h->nr_threads || h->nr_early)
		cfsbw_host__release_all(h);
	for (unsigned rq = 0; rq < h->nr_rq; rq++)
		if (h->procs[rq])
			cfsbw_host__cputimer_delete(h->procs[rq]);
	if (h->epoll_fd >= 0)
		close(h->epoll_fd);
	free(h->watches);
	for (int i = 0; i < h->nr_timers; i++)
		timer_delete(h->timers[i]);
	signals_give_back(h);
	cfsbw_host__groups_free(h);
	cfsbw_tree_free(h->tree);
	cfsbw_host__table_free(h);
	free(h);
	host_exists = false;
}

struct cfsbw_group *cfsbw_host_group(struct cfsbw_host *h)
{
	return h->group;
}

struct cfsbw_tree *cfsbw_host_tree(struct cfsbw_host *h)
{
	return h->tree;
}

uint64_t cfsbw_host_usage_ns(const struct cfsbw_host *h)
{
	return h->usage_ns;
}

unsigned cfsbw_host_nr_live(const struct cfsbw_host *h)
{
	return h->nr_live;
}

void cfsbw_host_stop(struct cfsbw_host *h)
{
	h->stop_requested = true;
}

