/*
 * test_host_api.c - the host driver as a library (include/cfsbw_host.h):
 * the errors a program linking libcfsbw can reach, and the --stats report
 * that cannot be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfsbw_host.h"
#include "harness.h"
#include "test_host.h"

static struct cfsbw_host *host_new(bool daemon, int *err)
{
	struct cfsbw_host_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.daemon = daemon;
	struct cfsbw_host *h = NULL;
	*err = cfsbw_host_create(&cfg, &h);
	return *err < 0 ? NULL : h;
}

/* Process-wide state (cfsbw_host.h): one driver per process. */
TEST(second_driver_in_a_process_is_refused, "host-api")
{
	int err;
	struct cfsbw_host *a = host_new(false, &err);
	ASSERT_INT(err, ==, 0);
	struct cfsbw_host *b = host_new(true, &err);
	ASSERT_TRUE(b == NULL);
	ASSERT_INT(err, ==, -EBUSY);
	cfsbw_host_destroy(a);
	b = host_new(true, &err);
	ASSERT_INT(err, ==, 0);
	cfsbw_host_destroy(b);
}

/*
 * Tracing forbidden: every ptrace call fails with EPERM, as under a
 * seccomp profile that denies it (docker's default one does for old
 * kernels).  Returns 0 when the filter is in place.
 */
static int forbid_ptrace(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 (unsigned)offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)SYS_ptrace, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		(unsigned short)(sizeof filter / sizeof filter[0]), filter};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/*
 * Issue 13: a PTRACE_SEIZE that failed in cfsbw_host_spawn left the
 * command's pid recorded, and cfsbw_host_run then waited forever for a
 * process that was gone.  Now the spawn fails with -EPERM, leaves nothing
 * behind, and run says there is nothing to run (-EINVAL) at once.  Done
 * in a child (the filter cannot be taken off), under a 10 s alarm.
 */
TEST(failed_seize_leaves_no_command, "host-api")
{
	fflush(NULL);
	pid_t pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		alarm(10);
		if (forbid_ptrace() < 0)
			_exit(10);
		int err;
		struct cfsbw_host *h = host_new(false, &err);
		if (!h)
			_exit(11);
		char true_name[] = "true";
		char *argv[] = {true_name, NULL};
		if (cfsbw_host_spawn(h, argv) != -EPERM)
			_exit(12);
		if (cfsbw_host_nr_live(h) != 0)
			_exit(13);
		struct cfsbw_host_result res;
		if (cfsbw_host_run(h, &res) != -EINVAL)
			_exit(14);
		/* Nothing of the first attempt is left in the way. */
		if (cfsbw_host_spawn(h, argv) != -EPERM)
			_exit(15);
		cfsbw_host_destroy(h);
		_exit(0);
	}
	int status;
	ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
	ASSERT_FALSE(WIFSIGNALED(status)); /* SIGALRM: it hung */
	ASSERT_INT(WEXITSTATUS(status), ==, 0);
}

/* Run cfsbw with stdout on out_path; its exit code, its stderr in err. */
static int run_cli(const char *const args[], const char *out_path, char *err,
		   size_t err_size)
{
	char err_path[64];
	snprintf(err_path, sizeof err_path, "/tmp/cfsbw-api-%d.err",
		 (int)getpid());
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int o = open(out_path, O_WRONLY);
		if (e < 0 || o < 0)
			_exit(125);
		dup2(e, 2);
		dup2(o, 1);
		const char *argv[16];
		int n = 0;
		argv[n++] = host_bin();
		for (int i = 0; args[i] && n < 15; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		/* execv's argv is char *const[]; the strings are not written. */
		char *cargv[16];
		memcpy(cargv, argv, sizeof cargv);
		execv(cargv[0], cargv);
		_exit(126);
	}
	int status;
	waitpid(pid, &status, 0);
	slurp(err_path, err, err_size);
	unlink(err_path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Issue 16 item 4: a --stats report that cannot be written is a failure. */
TEST(stats_report_lost_exits_1, "cli")
{
	char err[4096];
	const char *to_file[] = {"run", "--stats", "/dev/full", "--", "true",
				 NULL};
	ASSERT_INT(run_cli(to_file, "/dev/null", err, sizeof err), ==, 1);
	ASSERT_TRUE(strstr(err, "/dev/full") != NULL);
	ASSERT_TRUE(strstr(err, strerror(ENOSPC)) != NULL);
	ASSERT_TRUE(strstr(err, "status 0") != NULL);

	const char *to_stdout[] = {"run", "--stats", "-", "--", "true", NULL};
	ASSERT_INT(run_cli(to_stdout, "/dev/full", err, sizeof err), ==, 1);
	ASSERT_TRUE(strstr(err, strerror(ENOSPC)) != NULL);
	/* Written: the command's status, as before. */
	const char *ok[] = {"run", "--stats", "-", "--", "sh", "-c", "exit 3",
			    NULL};
	ASSERT_INT(run_cli(ok, "/dev/null", err, sizeof err), ==, 3);
}

/* The loop's watched descriptors: each once, never the driver's own. */
static void ignore_fd(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
}

TEST(watch_fd_errors, "host-api")
{
	int err;
	struct cfsbw_host *h = host_new(true, &err);
	ASSERT_INT(err, ==, 0);
	int p[2];
	ASSERT_INT(pipe(p), ==, 0);
	ASSERT_INT(cfsbw_host_watch_fd(h, -1, ignore_fd, NULL), ==, -EBADF);
	ASSERT_INT(cfsbw_host_watch_fd(h, p[0], ignore_fd, NULL), ==, 0);
	ASSERT_INT(cfsbw_host_watch_fd(h, p[0], ignore_fd, NULL), ==, -EEXIST);
	ASSERT_INT(cfsbw_host_unwatch_fd(h, p[0]), ==, 0);
	ASSERT_INT(cfsbw_host_unwatch_fd(h, p[0]), ==, -ENOENT);
	close(p[0]);
	close(p[1]);
	cfsbw_host_destroy(h);
}

/* The group's process is gone: stop the loop. */
static void stop_when_empty(void *ctx, int fd)
{
	struct cfsbw_host *h = ctx;
	uint64_t n;
	if (read(fd, &n, sizeof n) != (ssize_t)sizeof n)
		return;
	if (cfsbw_host_nr_live(h) == 0)
		cfsbw_host_stop(h);
}

/*
 * cpuacct.usage (HOST-API.md): a group's usage keeps the CPU time of a
 * process that has exited, and every ancestor's includes it (R5).
 */
TEST(group_usage_outlives_its_processes, "R5 section-8")
{
	int err;
	struct cfsbw_host *h = host_new(true, &err);
	ASSERT_INT(err, ==, 0);
	struct cfsbw_tree *t = cfsbw_host_tree(h);
	struct cfsbw_group *a, *b;
	ASSERT_INT(cfsbw_group_create(t, "/a", &a), ==, 0);
	ASSERT_INT(cfsbw_group_create(t, "/a/b", &b), ==, 0);
	const char *spin[] = {"spin", "0.3", NULL};
	pid_t pid = host_fork_workload(spin);
	ASSERT_INT(cfsbw_host_place(h, pid, b), ==, 0);
	ASSERT_INT(cfsbw_host_group_nr_procs(h, b), ==, 1);
	ASSERT_INT(cfsbw_host_group_nr_procs(h, a), ==, 0);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its = {{0, 20000000}, {0, 20000000}};
	timerfd_settime(tfd, 0, &its, NULL);
	ASSERT_INT(cfsbw_host_watch_fd(h, tfd, stop_when_empty, h), ==, 0);
	struct cfsbw_host_result res;
	ASSERT_INT(cfsbw_host_run(h, &res), ==, 0);
	close(tfd);
	uint64_t ub = cfsbw_host_group_usage_ns(h, b);
	uint64_t ua = cfsbw_host_group_usage_ns(h, a);
	uint64_t ur = cfsbw_host_group_usage_ns(h, cfsbw_tree_root(t));
	printf("    /a/b %.1f ms, /a %.1f ms, / %.1f ms, run %.1f ms\n",
	       (double)ub / 1e6, (double)ua / 1e6, (double)ur / 1e6,
	       (double)res.usage_ns / 1e6);
	ASSERT_INT(cfsbw_host_group_nr_procs(h, b), ==, 0);
	ASSERT_UINT(ub, >, 0);
	ASSERT_UINT(ua, ==, ub);
	ASSERT_UINT(ur, ==, ub);
	ASSERT_UINT(res.usage_ns, ==, ub);
	/* Its exit was read by the driver (it reaps what it traces). */
	ASSERT_INT(waitpid(pid, NULL, WNOHANG), <=, 0);
	cfsbw_host_destroy(h);
}

TEST_MAIN(TEST_ENTRY(second_driver_in_a_process_is_refused)
	  TEST_ENTRY(watch_fd_errors)
	  TEST_ENTRY(group_usage_outlives_its_processes)
	  TEST_ENTRY(failed_seize_leaves_no_command)
	  TEST_ENTRY(stats_report_lost_exits_1))
