/*
 * test_daemon_user.c - `cfsbw daemon --mount DIR` run by a user without
 * privilege (issue 15: "without root"): the mount goes through the
 * set-user-ID fusermount3 (libfuse does that when mount(2) is refused);
 * mkdir, echo and cat work on it for that user, a rejected write fails in
 * the writer's shell with "Invalid argument" (EINVAL, R2), and the
 * daemon's exit on SIGTERM unmounts.
 *
 * As root the daemon, a copy of the binary in its own directory under
 * /tmp, runs as nobody (65534), and so do the shell and the system calls
 * on the mount: a mount without allow_other serves its own user alone,
 * root included.  Run by another user, the test is that user's.  Skipped,
 * with the reason, only where /dev/fuse or fusermount3 is missing.
 */
#include "harness.h"
#include "test_daemon.h"

/* Why an unprivileged mount cannot be tried here, or NULL. */
static const char *no_user_mount(void)
{
	if (dmn_no_fuse())
		return dmn_no_fuse();
	static const char *const dirs[] = {"/usr/bin", "/bin", "/usr/local/bin",
					   "/sbin", "/usr/sbin"};
	for (unsigned i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		char p[64];
		snprintf(p, sizeof p, "%s/fusermount3", dirs[i]);
		if (!access(p, X_OK))
			return NULL;
	}
	return "fusermount3 is missing (Debian's fuse3 package)";
}

/* src copied to dst, mode 0755: 0 or -1. */
static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[65536];
	ssize_t n = 0;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	int rc = in >= 0 && out >= 0 && n == 0 ? 0 : -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* The line of /proc/self/mountinfo that mounts dir, into buf; or false. */
static bool mount_line(const char *dir, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	bool found = false;
	char want[200];
	snprintf(want, sizeof want, " %s ", dir);
	while (f && !found && fgets(buf, (int)size, f))
		found = strstr(buf, want) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * What the user does on the mount, in a child of that user: the number of
 * the first step that went wrong (1..8), or 0.  out: bash's stderr.
 */
static int user_session(const struct dmn *m, const char *out)
{
	if (dmn_drop_to_nobody())
		return 1;
	if (mkdir(dmn_path(m, "/web", NULL), 0755))
		return 2;
	if (dmn_write(m, "/web", "cpu.cfs_quota_us", "50000\n"))
		return 3;
	char buf[64];
	if (dmn_read(m, "/web", "cpu.cfs_quota_us", buf, sizeof buf) < 0 ||
	    strcmp(buf, "50000\n"))
		return 4;
	/* 500 us is below the kernel's 1 ms (R2): EINVAL, nothing changed. */
	if (dmn_write(m, "/web", "cpu.cfs_quota_us", "500\n") != EINVAL)
		return 5;
	if (dmn_read(m, "/web", "cpu.cfs_quota_us", buf, sizeof buf) < 0 ||
	    strcmp(buf, "50000\n"))
		return 6;
	/* The shell's own words (bash; dash says "I/O error" for any error). */
	if (access("/bin/bash", X_OK))
		return 0;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "exec 2> %s; echo 500 > %s", out,
		 dmn_path(m, "/web", "cpu.cfs_quota_us"));
	pid_t sh = fork();
	if (sh == 0) {
		execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
		_exit(126);
	}
	int status;
	while (waitpid(sh, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
		return 7;
	if (rmdir(dmn_path(m, "/web", NULL)))
		return 8;
	return 0;
}

TEST(mount_without_root, "SPEC 8, R2")
{
	const char *why = no_user_mount();
	if (why) {
		printf("    skip: %s\n", why);
		return;
	}
	struct dmn m;
	dmn_paths(&m);
	char bin[200], out[200];
	snprintf(bin, sizeof bin, "%s/cfsbw", m.dir);
	snprintf(out, sizeof out, "%s/bash.err", m.dir);
	ASSERT_INT(copy_file(host_bin(), bin), ==, 0);
	if (geteuid() == 0) {
		ASSERT_INT(chown(m.dir, DMN_NOBODY, DMN_NOBODY), ==, 0);
		ASSERT_INT(chown(m.mnt, DMN_NOBODY, DMN_NOBODY), ==, 0);
	}
	dmn_start_as_nobody(&m, bin, m.mnt);
	char line[1024];
	bool mounted = false;
	for (int i = 0; i < 500 && !mounted; i++) {
		mounted = mount_line(m.mnt, line, sizeof line);
		if (!mounted)
			usleep(10000);
	}
	int step = -1;
	if (mounted) {
		pid_t u = fork();
		if (u == 0)
			_exit(user_session(&m, out));
		int status;
		while (waitpid(u, &status, 0) < 0 && errno == EINTR)
			;
		step = WIFEXITED(status) ? WEXITSTATUS(status) : 100;
	}
	char said[512] = "";
	slurp(out, said, sizeof said);
	int rc = dmn_stop(&m);
	char after[1024];
	bool still = mount_line(m.mnt, after, sizeof after);
	char log[8192];
	slurp(m.log, log, sizeof log);
	unlink(bin);
	unlink(out);
	dmn_clean(&m);
	if (!mounted)
		printf("    daemon's log:\n%s", log);
	ASSERT_TRUE(mounted);
	/* The kernel's record of who mounted it: the user, through fuse. */
	char uid[32];
	snprintf(uid, sizeof uid, "user_id=%d", geteuid() ? (int)geteuid()
							  : DMN_NOBODY);
	ASSERT_TRUE(strstr(line, uid) != NULL);
	printf("    mounted as %s; first failed step %d (0: none); bash said: %s",
	       uid, step, said);
	ASSERT_INT(step, ==, 0);
	if (!access("/bin/bash", X_OK))
		ASSERT_TRUE(strstr(said, "Invalid argument") != NULL);
	ASSERT_INT(rc, ==, 0);
	ASSERT_TRUE(!still);
}

TEST_MAIN(TEST_ENTRY(mount_without_root))
