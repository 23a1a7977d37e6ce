/*
 * cmd_daemon.c - cfsbw daemon: one process holding a live tree of groups
 * (SPEC section 8), served as a cgroupfs-compatible mount (--mount DIR)
 * and over a Unix socket (cfsbw ctl, cfsbw top, cfsbw run --group).
 * The control tree itself is src/daemon/.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cfsbw.h"
#include "cli/cli.h"
#include "daemon/daemon.h"

static const char daemon_usage[] =
	"usage: cfsbw daemon [OPTIONS]\n"
	"\n"
	"Hold a live tree of groups, each with its CPU quota per period, as\n"
	"Linux's cgroup v1 cpu controller does, without root or cgroups.\n"
	"Groups are directories of the mount (mkdir, rmdir; echo and cat on\n"
	"cpu.cfs_quota_us, cpu.cfs_period_us, cpu.shares, cpu.max,\n"
	"cpu.cfs_burst_us, cpu.stat, cpuacct.usage, cgroup.procs, tasks) and\n"
	"the same operations go over the socket (cfsbw ctl).  Runs until\n"
	"SIGINT, SIGTERM or SIGHUP; then every process is resumed and released.\n"
	"\n"
	"options:\n"
	"  --mount DIR        serve the tree at DIR with FUSE (/dev/fuse)\n"
	"  --socket PATH      the control socket (default: $CFSBW_SOCKET,\n"
	"                     /run/cfsbw.sock for root, else\n"
	"                     $XDG_RUNTIME_DIR/cfsbw.sock or /tmp/cfsbw-UID.sock)\n"
	"  --state FILE       keep the tree's groups, settings and processes in\n"
	"                     FILE (rewritten atomically on each change) and\n"
	"                     restore them at start\n"
	"  --policy NAME      v4 (default) or upstream\n"
	"  --metrics H:P      serve Prometheus metrics at http://H:P/metrics\n"
	"  -h, --help         this text\n"
	"\n"
	"example:\n"
	"  cfsbw daemon --mount /tmp/cg &\n"
	"  mkdir /tmp/cg/web && echo 50000 > /tmp/cg/web/cpu.cfs_quota_us\n"
	"  cfsbw run --group /web -- ./server\n"
	"See cfsbw(1) and docs/host.md.\n";

struct daemon_opts {
	const char *mount, *socket, *state, *policy, *metrics;
};

__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt,
							    ...)
{
	va_list ap;
	fputs("cfsbw daemon: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(cfsbw daemon --help for the options)\n", stderr);
	return 2;
}

static int parse_args(int argc, char **argv, struct daemon_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(daemon_usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--mount"))
			slot = &o->mount;
		else if (!strcmp(a, "--socket"))
			slot = &o->socket;
		else if (!strcmp(a, "--state"))
			slot = &o->state;
		else if (!strcmp(a, "--policy"))
			slot = &o->policy;
		else if (!strcmp(a, "--metrics"))
			slot = &o->metrics;
		else
			return bad_usage("unknown option '%s'", a);
		if (i + 1 >= argc)
			return bad_usage("%s needs a value", a);
		*slot = argv[++i];
	}
	return -1;
}

/*
 * The loop until the host driver's daemon mode is on main: epoll over the
 * daemon's descriptors, a signalfd for SIGINT/SIGTERM/SIGHUP and a timerfd
 * for the once-a-second tick.  It governs no processes.
 */
#define MAX_WATCH 1024
struct loop {
	int epfd;
	struct watch {
		int fd;
		cfsbw_daemon_fd_fn *fn;
		void *ctx;
	} w[MAX_WATCH];
};

static int loop_watch(void *ctx, int fd, cfsbw_daemon_fd_fn *fn, void *fn_ctx)
{
	struct loop *l = ctx;
	for (int i = 0; i < MAX_WATCH; i++)
		if (!l->w[i].fn) {
			struct epoll_event ev = {.events = EPOLLIN};
			ev.data.u32 = (uint32_t)i;
			if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev))
				return -errno;
			l->w[i] = (struct watch){fd, fn, fn_ctx};
			return 0;
		}
	return -ENOSPC;
}

static int loop_unwatch(void *ctx, int fd)
{
	struct loop *l = ctx;
	for (int i = 0; i < MAX_WATCH; i++)
		if (l->w[i].fn && l->w[i].fd == fd) {
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
			l->w[i].fn = NULL;
			return 0;
		}
	return -ENOENT;
}

static const struct cfsbw_daemon_driver loop_driver = {
	.watch_fd = loop_watch,
	.unwatch_fd = loop_unwatch,
};

static void log_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "cfsbw daemon: %s\n", line);
}

int cli_daemon_main(int argc, char **argv)
{
	struct daemon_opts o = {0};
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	enum cfsbw_policy policy = CFSBW_POLICY_V4;
	if (o.policy && (cfsbw_policy_parse(o.policy, &policy) ||
			 policy == CFSBW_POLICY_HARDLIMITS))
		return bad_usage("--policy '%s': v4 or upstream", o.policy);
	char sock_buf[4096];
	const char *sock = o.socket ? o.socket
				    : cfsbw_daemon_default_socket(
					      sock_buf, sizeof sock_buf);

	static struct loop l;
	l.epfd = epoll_create1(EPOLL_CLOEXEC);
	struct cfsbw_tree_config tc = {.nr_rq = 1, .policy = policy};
	struct cfsbw_tree *tree;
	if (l.epfd < 0 || cfsbw_tree_create(&tc, &tree)) {
		fprintf(stderr, "cfsbw daemon: cannot start: %s\n",
			strerror(errno));
		return 1;
	}
	struct cfsbw_daemon_config dc = {
		.tree = tree,
		.driver = &loop_driver,
		.driver_ctx = &l,
		.state_path = o.state,
		.log = log_line,
	};
	struct cfsbw_daemon *d = NULL;
	int err = cfsbw_daemon_create(&dc, &d);
	if (err) {
		fprintf(stderr, "cfsbw daemon: %s: %s\n", o.state,
			strerror(-err));
		cfsbw_tree_free(tree);
		return 1;
	}
	rc = 1;
	if ((err = cfsbw_daemon_listen(d, sock))) {
		fprintf(stderr, "cfsbw daemon: socket %s: %s\n", sock,
			strerror(-err));
		goto out;
	}
	if (o.mount && (err = cfsbw_daemon_mount(d, o.mount))) {
		fprintf(stderr, "cfsbw daemon: --mount %s: %s%s\n", o.mount,
			strerror(-err),
			access("/dev/fuse", F_OK) ? " (/dev/fuse is missing; "
						    "use cfsbw ctl)"
						  : "");
		goto out;
	}
	if (o.metrics && (err = cfsbw_daemon_metrics_listen(d, o.metrics))) {
		fprintf(stderr, "cfsbw daemon: --metrics %s: %s\n", o.metrics,
			strerror(-err));
		goto out;
	}
	cfsbw_daemon_restore_procs(d);

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its = {{1, 0}, {1, 0}};
	timerfd_settime(tfd, 0, &its, NULL);
	struct epoll_event ev = {.events = EPOLLIN};
	ev.data.u32 = MAX_WATCH;
	epoll_ctl(l.epfd, EPOLL_CTL_ADD, sfd, &ev);
	ev.data.u32 = MAX_WATCH + 1;
	epoll_ctl(l.epfd, EPOLL_CTL_ADD, tfd, &ev);
	fprintf(stderr, "cfsbw daemon: pid %d, socket %s%s%s\n", (int)getpid(),
		sock, o.mount ? ", mount " : "", o.mount ? o.mount : "");
	for (bool running = true; running;) {
		struct epoll_event evs[16];
		int n = epoll_wait(l.epfd, evs, 16, -1);
		for (int i = 0; i < n; i++) {
			uint32_t k = evs[i].data.u32;
			if (k == MAX_WATCH) {
				running = false;
			} else if (k == MAX_WATCH + 1) {
				uint64_t ticks;
				if (read(tfd, &ticks, sizeof ticks) > 0)
					cfsbw_daemon_tick(d);
			} else if (l.w[k].fn) {
				l.w[k].fn(l.w[k].ctx, l.w[k].fd);
			}
		}
	}
	rc = 0;
	close(sfd);
	close(tfd);
out:
	cfsbw_daemon_destroy(d);
	cfsbw_tree_free(tree);
	close(l.epfd);
	return rc;
}
