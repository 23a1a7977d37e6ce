/*
 * test_daemon.h - running `cfsbw daemon` from the tests: a daemon in a
 * directory of its own (its mount, socket, state file and log), `cfsbw ctl`
 * against it, and the files of its mount read and written with plain
 * system calls, as a shell would.  Header-only so that each test program
 * stays one file.
 */
#ifndef CFSBW_TEST_DAEMON_H
#define CFSBW_TEST_DAEMON_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "test_host.h"

struct dmn {
	pid_t pid;
	bool mounted;           /* false: /dev/fuse is missing */
	char dir[128];          /* holds everything below */
	char mnt[160], sock[160], state[160], log[160];
};

/*
 * Daemons a test started and has not cleaned up yet (it failed and returned
 * early): stopped, and their directories removed, when the program exits.
 */
static struct dmn dmn_left[64];
static void dmn_clean(struct dmn *m);
static int dmn_stop(struct dmn *m);

static void dmn_clean_left(void)
{
	for (unsigned i = 0; i < sizeof dmn_left / sizeof *dmn_left; i++)
		if (dmn_left[i].dir[0]) {
			if (dmn_left[i].pid > 0)
				dmn_stop(&dmn_left[i]);
			dmn_clean(&dmn_left[i]);
		}
}

static struct dmn *dmn_left_slot(const char *dir)
{
	for (unsigned i = 0; i < sizeof dmn_left / sizeof *dmn_left; i++)
		if (!strcmp(dmn_left[i].dir, dir))
			return &dmn_left[i];
	return NULL;
}

/* Why mount tests cannot run here, or NULL when they can. */
static inline const char *dmn_no_fuse(void)
{
	return access("/dev/fuse", R_OK | W_OK) ? "/dev/fuse is missing" : NULL;
}

static inline void dmn_paths(struct dmn *m)
{
	static unsigned seq;
	snprintf(m->dir, sizeof m->dir, "/tmp/cfsbw-dtest-%d-%u", (int)getpid(),
		 seq++);
	snprintf(m->mnt, sizeof m->mnt, "%s/mnt", m->dir);
	snprintf(m->sock, sizeof m->sock, "%s/sock", m->dir);
	snprintf(m->state, sizeof m->state, "%s/state", m->dir);
	snprintf(m->log, sizeof m->log, "%s/log", m->dir);
	mkdir(m->dir, 0755);
	mkdir(m->mnt, 0755);
	static bool registered;
	if (!registered)
		registered = !atexit(dmn_clean_left);
	struct dmn *slot = dmn_left_slot("");
	if (slot) {
		*slot = *m;
		slot->pid = 0;
	}
}

/*
 * Fork and exec argv (NULL-terminated), stdout to out_path and stderr to
 * err_path (appended; NULL: inherited).  Returns the child's pid.
 */
static inline pid_t dmn_spawn(const char *const argv[], const char *out_path,
			      const char *err_path)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* A test that fails or dies leaves no daemon or busy loop behind. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (out_path)
		dup2(open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
	if (err_path)
		dup2(open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0644), 2);
	/* execv's argv is char *const[]; the strings are not written. */
	char *cargv[64];
	int n = 0;
	for (; argv[n] && n < 63; n++)
		cargv[n] = (char *)(uintptr_t)argv[n];
	cargv[n] = NULL;
	execv(cargv[0], cargv);
	_exit(126);
}

/*
 * Start `cfsbw daemon` with extra (NULL-terminated) arguments and wait until
 * its socket answers and its mount serves files (5 s at most).  Returns 0.
 */
static inline int dmn_start(struct dmn *m, const char *const extra[])
{
	const char *argv[32];
	int n = 0;
	argv[n++] = host_bin();
	argv[n++] = "daemon";
	argv[n++] = "--socket";
	argv[n++] = m->sock;
	m->mounted = !dmn_no_fuse();
	if (m->mounted) {
		argv[n++] = "--mount";
		argv[n++] = m->mnt;
	}
	for (int i = 0; extra && extra[i] && n < 30; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	m->pid = dmn_spawn(argv, NULL, m->log);
	struct dmn *slot = dmn_left_slot(m->dir);
	if (slot)
		slot->pid = m->pid;
	char probe[200];
	snprintf(probe, sizeof probe, "%s/cpu.stat", m->mnt);
	for (int i = 0; i < 500; i++) {
		struct stat st;
		bool sock_ok = stat(m->sock, &st) == 0;
		bool mnt_ok = !m->mounted || stat(probe, &st) == 0;
		if (sock_ok && mnt_ok)
			return 0;
		if (waitpid(m->pid, NULL, WNOHANG) == m->pid)
			return -1;
		usleep(10000);
	}
	return -1;
}

/* SIGTERM, then the daemon's exit status (shell convention). */
static int dmn_stop(struct dmn *m)
{
	int status = 0;
	kill(m->pid, SIGTERM);
	while (waitpid(m->pid, &status, 0) < 0 && errno == EINTR)
		;
	struct dmn *slot = dmn_left_slot(m->dir);
	if (slot)
		slot->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status)
				 : 128 + WTERMSIG(status);
}

/* Remove the daemon's directory (after dmn_stop). */
static void dmn_clean(struct dmn *m)
{
	char tmp[200];
	snprintf(tmp, sizeof tmp, "%s.tmp", m->state);
	unlink(tmp);
	/* A daemon that failed (a sanitizer report, say): show its log. */
	const char *show = getenv("CFSBW_DAEMON_LOG");
	if (show && *show) {
		char log[16384];
		slurp(m->log, log, sizeof log);
		fprintf(stderr, "--- %s\n%s---\n", m->log, log);
	}
	unlink(m->sock);
	unlink(m->state);
	unlink(m->log);
	rmdir(m->mnt);
	rmdir(m->dir);
	struct dmn *slot = dmn_left_slot(m->dir);
	if (slot && slot != m)
		slot->dir[0] = '\0';
	else if (slot)
		m->dir[0] = '\0';
}

/* A file of the mount: "/web" + "cpu.stat" -> MNT/web/cpu.stat. */
static inline const char *dmn_path(const struct dmn *m, const char *group,
				   const char *file)
{
	static char buf[4][512];
	static unsigned k;
	char *b = buf[k++ % 4];
	snprintf(b, 512, "%s%s%s%s", m->mnt, strcmp(group, "/") ? group : "",
		 file ? "/" : "", file ? file : "");
	return b;
}

/* write(2) of text as `echo -n text > path` does: 0 or the errno. */
static inline int dmn_write(const struct dmn *m, const char *group,
			    const char *file, const char *text)
{
	int fd = open(dmn_path(m, group, file), O_WRONLY | O_TRUNC);
	if (fd < 0)
		return errno;
	ssize_t n = write(fd, text, strlen(text));
	int err = n < 0 ? errno : 0;
	close(fd);
	return err;
}

/* The whole file into buf: its length, or -errno. */
static inline int dmn_read(const struct dmn *m, const char *group,
			   const char *file, char *buf, size_t size)
{
	int fd = open(dmn_path(m, group, file), O_RDONLY);
	if (fd < 0)
		return -errno;
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			int err = errno;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

struct ctl_result {
	int exit_code;
	char out[8192], err[4096];
};

/* Run `cfsbw ctl --socket SOCK args...` (NULL-terminated). */
static inline void dmn_ctl(const struct dmn *m, struct ctl_result *r,
			   const char *const args[])
{
	char op[200], ep[200];
	snprintf(op, sizeof op, "%s/ctl.out", m->dir);
	snprintf(ep, sizeof ep, "%s/ctl.err", m->dir);
	const char *argv[32];
	int n = 0;
	argv[n++] = host_bin();
	argv[n++] = "ctl";
	argv[n++] = "--socket";
	argv[n++] = m->sock;
	for (int i = 0; args[i] && n < 30; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	unlink(ep);
	pid_t pid = dmn_spawn(argv, op, ep);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
					 : 128 + WTERMSIG(status);
	slurp(op, r->out, sizeof r->out);
	slurp(ep, r->err, sizeof r->err);
	unlink(op);
	unlink(ep);
}

#define DMN_NOBODY 65534

/* Become nobody (65534), without supplementary groups, when root: 0 or -1. */
static inline int dmn_drop_to_nobody(void)
{
	if (geteuid() != 0)
		return 0;
	if (setgroups(0, NULL) || setgid(DMN_NOBODY) || setuid(DMN_NOBODY))
		return -1;
	return 0;
}

/*
 * Start `BIN daemon --socket SOCK [--mount MNT]` (mnt NULL: no mount) as
 * nobody when the test runs as root, else as its user, stderr appended to
 * the log.  Does not wait for it: the caller waits for what it needs.
 */
static inline void dmn_start_as_nobody(struct dmn *m, const char *bin,
				       const char *mnt)
{
	fflush(stdout);
	fflush(stderr);
	m->pid = fork();
	if (m->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(open(m->log, O_WRONLY | O_CREAT | O_APPEND, 0666), 2);
		if (dmn_drop_to_nobody())
			_exit(125);
		execl(bin, bin, "daemon", "--socket", m->sock,
		      mnt ? "--mount" : (char *)NULL, mnt, (char *)NULL);
		_exit(126);
	}
	struct dmn *slot = dmn_left_slot(m->dir);
	if (slot)
		slot->pid = m->pid;
}

/* In a test: skip it, saying why, where /dev/fuse is missing. */
#define SKIP_WITHOUT_FUSE()                                                    \
	do {                                                                   \
		const char *why_ = dmn_no_fuse();                              \
		if (why_) {                                                    \
			printf("    skip: %s\n", why_);                        \
			return;                                                \
		}                                                              \
	} while (0)

/* In a test: start a daemon with extra arguments, or fail. */
#define START(m, ...)                                                          \
	do {                                                                   \
		static const char *const extra_[] = {__VA_ARGS__};             \
		dmn_paths(m);                                                  \
		if (dmn_start(m, extra_)) {                                    \
			TEST_FAIL_AT("cfsbw daemon did not start");            \
			return;                                                \
		}                                                              \
	} while (0)

#endif
