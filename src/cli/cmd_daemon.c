/*
 * cmd_daemon.c - cfsbw daemon: one process holding a live tree of groups
 * (SPEC section 8), served as a cgroupfs-compatible mount (--mount DIR)
 * and over a Unix socket (cfsbw ctl, cfsbw top, cfsbw run --group).
 * The control tree itself is src/daemon/.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsbw.h"
#include "cfsbw_host.h"
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

static int parse_args(int argc, char **argv, struct daemon_opts *o)
{
	const struct cli_opt opts[] = {
		{"--mount", &o->mount},	    {"--socket", &o->socket},
		{"--state", &o->state},	    {"--policy", &o->policy},
		{"--metrics", &o->metrics}, {NULL, NULL},
	};
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i], daemon_usage))
			return 0;
		const char **value = cli_opt_value(opts, argv[i]);
		if (!value)
			return cli_bad_usage("daemon", "unknown option '%s'",
					     argv[i]);
		if (i + 1 >= argc)
			return cli_bad_usage("daemon", "%s needs a value",
					     argv[i]);
		*value = argv[++i];
	}
	return -1;
}

/*
 * The daemon's driver is the host driver in daemon mode: its loop watches
 * the daemon's descriptors, and its groups hold the processes.
 */
static int drv_watch(void *ctx, int fd, cfsbw_daemon_fd_fn *fn, void *fn_ctx)
{
	return fn ? cfsbw_host_watch_fd(ctx, fd, fn, fn_ctx)
		  : cfsbw_host_unwatch_fd(ctx, fd);
}

static int drv_place(void *ctx, pid_t pid, struct cfsbw_group *g,
		     const char **why)
{
	int err = cfsbw_host_place(ctx, pid, g);
	if (err == -EPERM)
		*why = cfsbw_host_place_reason(ctx);
	return err;
}

static int drv_for_each_pid(void *ctx, struct cfsbw_group *g, bool threads,
			    cfsbw_daemon_pid_fn *fn, void *fn_ctx)
{
	return threads ? cfsbw_host_for_each_thread(ctx, g, fn, fn_ctx)
		       : cfsbw_host_for_each_proc(ctx, g, fn, fn_ctx);
}

static uint64_t drv_usage_ns(void *ctx, const struct cfsbw_group *g)
{
	/* cpuacct.usage to the nanosecond, not up to a slice behind. */
	cfsbw_host_charge_now(ctx);
	return cfsbw_host_group_usage_ns(ctx, g);
}

static int drv_group_destroy(void *ctx, struct cfsbw_group *g)
{
	return cfsbw_host_group_destroy(ctx, g);
}

static const struct cfsbw_daemon_driver host_driver = {
	.watch_fd = drv_watch,
	.place = drv_place,
	.for_each_pid = drv_for_each_pid,
	.usage_ns = drv_usage_ns,
	.group_destroy = drv_group_destroy,
};

/*
 * The host's once-a-second callback: the state file follows processes.
 * Only with --state: without a file the tick would do nothing but cost a
 * wake-up, a CPU clock read per process and a re-arm of the running ones
 * each second (docs/host.md section 11).
 */
static void on_tick(void *ctx, struct cfsbw_host *h)
{
	(void)h;
	struct cfsbw_daemon **d = ctx;
	if (*d)
		cfsbw_daemon_tick(*d);
}

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
		return cli_bad_usage("daemon", "--policy '%s': v4 or upstream", o.policy);
	char sock_buf[4096];
	const char *sock = o.socket ? o.socket
				    : cfsbw_daemon_default_socket(
					      sock_buf, sizeof sock_buf);

	static struct cfsbw_daemon *d;
	struct cfsbw_host *h;
	struct cfsbw_host_config hc = {
		.policy = policy,
		.daemon = true,
		.stat_interval_ns = o.state ? CFSBW_NSEC_PER_SEC : 0,
		.on_stat = on_tick,
		.ctx = &d,
	};
	int err = cfsbw_host_create(&hc, &h);
	if (err) {
		fprintf(stderr, "cfsbw daemon: cannot start: %s\n",
			strerror(-err));
		return 1;
	}
	struct cfsbw_daemon_config dc = {
		.tree = cfsbw_host_tree(h),
		.driver = &host_driver,
		.driver_ctx = h,
		.state_path = o.state,
		.log = log_line,
	};
	err = cfsbw_daemon_create(&dc, &d);
	if (err) {
		fprintf(stderr, "cfsbw daemon: %s: %s\n", o.state,
			strerror(-err));
		cfsbw_host_destroy(h);
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
	fprintf(stderr, "cfsbw daemon: pid %d, socket %s%s%s\n", (int)getpid(),
		sock, o.mount ? ", mount " : "", o.mount ? o.mount : "");
	struct cfsbw_host_result res;
	err = cfsbw_host_run(h, &res);
	if (err)
		fprintf(stderr, "cfsbw daemon: %s\n", strerror(-err));
	else
		rc = 0;
out:
	/* Unmount and close before the driver releases the processes. */
	cfsbw_daemon_destroy(d);
	d = NULL;
	cfsbw_host_destroy(h);
	return rc;
}
