/*
 * watchdog.c - a stopped cfsbw does not hold its processes stopped for
 * long (issue 16, item 6).
 *
 * A throttled process waits in a ptrace stop that only its tracer, cfsbw,
 * ends.  If cfsbw itself is stopped (SIGSTOP, a debugger holding it), the
 * processes it held stay stopped and the others run unlimited for as long
 * as it is.  A thread of cfsbw cannot help: a stop holds every thread of a
 * process.  Nor can another process resume a tracee, which only its tracer
 * may do; but when the tracer dies, the kernel detaches every tracee and
 * ends its ptrace stop (what makes `kill -9` of cfsbw leave nothing
 * stopped, docs/host.md section 5).
 *
 * So cfsbw starts a small process, the watchdog, before it takes any
 * process in.  It looks at cfsbw's state every WATCHDOG_LOOK_MS; once it
 * has seen cfsbw stopped (state T or t) at WATCHDOG_STOPPED_LOOKS looks in
 * a row, about a second, it says so and kills cfsbw, and every process
 * cfsbw held runs again, unlimited.  It ends when cfsbw ends (a pidfd
 * becomes readable).  It is in cfsbw's process group, so a Ctrl-Z, which
 * stops the whole job, stops it too and nothing is killed: the job stays
 * stopped as a whole until it is continued.  It ignores the signals a
 * terminal sends to end a job, which cfsbw handles.
 *
 * It is not cfsbw's child (a double fork, the middle process reaped at
 * once), so cfsbw's wait calls for its tracees never see it.  Cost: 4
 * wake-ups a second, each a poll and a pread of /proc/PID/stat.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

#define WATCHDOG_LOOK_MS 250
#define WATCHDOG_STOPPED_LOOKS 5 /* 5 looks in a row: 1 to 1.25 s */

/* The state letter of /proc/PID/stat, read through statfd ('?' if none). */
static char watched_state(int statfd)
{
	char buf[512];
	ssize_t n = pread(statfd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static _Noreturn void watch(int pidfd, int statfd)
{
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT,
				      SIGPIPE};
	for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		signal(ignored[i], SIG_IGN);
	unsigned stopped = 0;
	for (;;) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		int n = poll(&p, 1, WATCHDOG_LOOK_MS);
		if (n > 0 || (n < 0 && errno != EINTR))
			_exit(0); /* cfsbw has ended */
		char s = watched_state(statfd);
		stopped = s == 'T' || s == 't' ? stopped + 1 : 0;
		if (stopped < WATCHDOG_STOPPED_LOOKS)
			continue;
		dprintf(2, "cfsbw: stopped for more than %d ms: ended by its "
			   "watchdog; the processes it held run again, "
			   "unlimited\n",
			WATCHDOG_LOOK_MS * (WATCHDOG_STOPPED_LOOKS - 1));
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		_exit(0);
	}
}

/* Closes fds first..last (last -1: all above first), where there are any. */
static void close_fds(int first, int last)
{
	if (last != -1 && last < first)
		return;
	syscall(SYS_close_range, (unsigned)first,
		last == -1 ? ~0u : (unsigned)last, 0u);
}

int cli_watchdog_start(void)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)getpid());
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		return -errno;
	int statfd = open(path, O_RDONLY | O_CLOEXEC);
	if (statfd < 0) {
		int err = -errno;
		close(pidfd);
		return err;
	}
	fflush(NULL);
	pid_t mid = fork();
	if (mid == 0) {
		if (fork() != 0)
			_exit(0);
		/* Only stderr, the pidfd and the stat file stay open. */
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		int lo = pidfd < statfd ? pidfd : statfd;
		int hi = pidfd < statfd ? statfd : pidfd;
		close_fds(3, lo - 1);
		close_fds(lo + 1, hi - 1);
		close_fds(hi + 1, -1);
		watch(pidfd, statfd);
	}
	int err = mid < 0 ? -errno : 0;
	int status;
	while (mid > 0 && waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	close(pidfd);
	close(statfd);
	return err;
}
