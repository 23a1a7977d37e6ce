/*
 * procfs.c - what the driver reads in /proc: whether a thread is asleep
 * (its stat line's state), a process's parent, thread group and children,
 * and why the kernel would refuse to let cfsbw trace a process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/host_int.h"

/*
 * Sleepers.  A throttle used to interrupt every thread of the process, and
 * a thread asleep (in a futex, a poll, a nanosleep) is woken by the
 * interrupt, reports its stop, and is resumed at the refresh, to go back
 * to sleep: measured, a process with 2 busy threads and 30 asleep at 0.5
 * CPU cost cfsbw 62 ms of CPU in 5 s instead of 17 ms with the 2 alone
 * (about 30 us per sleeping thread and throttle, mostly the interrupts
 * between virtual CPUs of a wake-up and a resume).  The kernel does not
 * touch a sleeping task either: it is on no runqueue, and is held only if
 * it wakes while its group is throttled.  So a thread that its
 * /proc/PID/task/TID/stat shows asleep ('S' or 'D') is left alone.  Once
 * the interrupted threads have stopped, the process's CPU-time timer is
 * armed to fire when it runs again (cputimer.c): only a
 * sleeper can; then every thread is interrupted, with no more looks.  What
 * it ran by then is charged as a debt (R13).
 *
 * A look costs a pread of a kept file (2.2 us here; open, read and close
 * 6.4 us).  A thread found running at two looks in a row is interrupted
 * without a look at its next HOST_LOOK_EVERY - 1 throttles: a busy thread
 * stays busy, and 32 busy threads would otherwise cost 70 us of looks each
 * period.  Two looks, not one: a thread of a pool caught on its way to
 * sleep (just made, or between two requests) would otherwise be woken and
 * stopped at 7 throttles for nothing.  Processes with one thread are not
 * looked at: that thread is what the CPU-time timer saw running, most of
 * the time.
 */
#define HOST_LOOK_EVERY 8

/* The state field of a /proc stat line, "pid (comm) S ppid ...", or NULL. */
static const char *stat_state(const char *buf)
{
	const char *end = strrchr(buf, ')'); /* comm may hold ')' itself */
	return end && end[1] == ' ' ? end + 2 : NULL;
}

bool cfsbw_host__thread_asleep(struct host_proc *p, struct host_thread *t)
{
	if (t->running_looks >= 2 && t->unlooked < HOST_LOOK_EVERY - 1) {
		t->unlooked++;
		return false;
	}
	t->unlooked = 0;
	bool asleep = cfsbw_host__thread_reads_asleep(p, t);
	if (asleep)
		t->running_looks = 0;
	else if (t->running_looks < 2)
		t->running_looks++;
	return asleep;
}

bool cfsbw_host__thread_reads_asleep(struct host_proc *p, struct host_thread *t)
{
	if (t->stat_fd < 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat",
			 (int)p->pid, (int)t->tid);
		t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	char buf[512];
	ssize_t n = t->stat_fd < 0 ? -1
				   : pread(t->stat_fd, buf, sizeof buf - 1, 0);
	const char *state = NULL;
	if (n > 0) {
		buf[n] = '\0';
		state = stat_state(buf);
	}
	return state && (*state == 'S' || *state == 'D');
}

/* Is tid a thread of process pid (rather than a process of its own)? */
bool cfsbw_host__tid_in_process(pid_t pid, pid_t tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/* The parent of process pid, from /proc; 0 if it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_file_head(path, buf, sizeof buf) <= 0)
		return 0;
	const char *state = stat_state(buf);
	long ppid = 0;
	if (!state || sscanf(state, "%*c %ld", &ppid) != 1 || ppid < 0)
		return 0;
	return (pid_t)ppid;
}

bool cfsbw_host_is_ancestor(pid_t pid)
{
	pid_t p = getppid();
	/* A bounded walk: /proc may change under it. */
	for (int depth = 0; p > 0 && depth < 1024; depth++) {
		if (p == pid)
			return true;
		p = parent_of(p);
	}
	return false;
}

/* Seize every thread of pid, repeating until none appears that we lack. */
/* A pid as text (a /proc directory name, a list's item): > 0, or -1. */
pid_t cfsbw_host__pid_of_text(const char *text)
{
	uint64_t v;
	if (parse_u64(text, &v) < 0 || v == 0 || v > INT32_MAX)
		return -1;
	return (pid_t)v;
}

/* The number after "key:" in a /proc/PID/status text, or -1. */
static int64_t status_field(const char *text, const char *key)
{
	size_t len = strlen(key);
	for (const char *l = text; l; l = strchr(l, '\n')) {
		l += *l == '\n';
		if (strncmp(l, key, len) || l[len] != ':')
			continue;
		char value[32];
		size_t n = strcspn(l + len + 1, "\n");
		if (n >= sizeof value)
			return -1;
		memcpy(value, l + len + 1, n);
		value[n] = '\0';
		uint64_t v;
		if (parse_u64(value, &v) < 0 || v > INT64_MAX)
			return -1;
		return (int64_t)v;
	}
	return -1;
}

pid_t cfsbw_host__trace_tgid(pid_t tid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (read_file_head(path, buf, sizeof buf) < 0)
		return -1;
	return (pid_t)status_field(buf, "Tgid");
}

/*
 * A process that changed its credentials is not dumpable until it execs,
 * and only CAP_SYS_PTRACE may trace it; the files of its /proc directory
 * then belong to root, whatever its uid.
 */
static bool not_dumpable(pid_t pid)
{
	char path[64], text[2048];
	struct stat st;
	unsigned ru;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	const char *uid = read_file_head(path, text, sizeof text) > 0
				  ? strstr(text, "\nUid:")
				  : NULL;
	return uid && sscanf(uid, "\nUid: %u", &ru) == 1 &&
	       stat(path, &st) == 0 && st.st_uid != ru;
}

void cfsbw_host__trace_why_not(pid_t pid, char *buf, size_t size)
{
	char path[64], text[2048];
	if (pid == getpid()) {
		snprintf(buf, size, "cfsbw itself");
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_file_head(path, text, sizeof text) < 0) {
		snprintf(buf, size, "%s", strerror(EPERM));
		return;
	}
	const char *state = strstr(text, "\nState:");
	int64_t tracer = status_field(text, "TracerPid");
	/* Real, effective, saved uid: all must be ours (or we are root). */
	const char *uid = strstr(text, "\nUid:");
	bool other_user = false;
	unsigned ru, eu, su;
	if (uid && geteuid() != 0 &&
	    sscanf(uid, "\nUid: %u %u %u", &ru, &eu, &su) == 3)
		other_user = ru != getuid() || eu != getuid() || su != getuid();
	char stat[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	bool kthread = false;
	if (read_file_head(path, stat, sizeof stat) > 0) {
		/* Field 9, flags: PF_KTHREAD (0x00200000). */
		const char *s = stat_state(stat);
		unsigned long flags = 0;
		if (s && sscanf(s, "%*c %*d %*d %*d %*d %*d %lu", &flags) == 1)
			kthread = flags & 0x00200000ul;
	}
	uint64_t scope = 0;
	char scope_text[16];
	if (read_file_head("/proc/sys/kernel/yama/ptrace_scope", scope_text,
			   sizeof scope_text) <= 0 ||
	    parse_u64(scope_text, &scope) < 0)
		scope = 0; /* no Yama: the classic rules */
	if (state && strncmp(state + 7, "\tZ", 2) == 0)
		snprintf(buf, size, "a zombie");
	else if (kthread)
		snprintf(buf, size, "a kernel thread");
	else if (tracer > 0)
		snprintf(buf, size, "already traced by pid %lld",
			 (long long)tracer);
	else if (other_user)
		snprintf(buf, size, "another user's process");
	else if (scope > 0)
		snprintf(buf, size, "ptrace_scope %llu forbids it",
			 (unsigned long long)scope);
	else if (not_dumpable(pid))
		snprintf(buf, size,
			 "it changed its credentials (as a set-user-ID "
			 "program's child that dropped them): not dumpable");
	else
		snprintf(buf, size, "%s", strerror(EPERM));
}

void cfsbw_host__trace_children(pid_t pid, pid_t tid,
				void (*fn)(void *ctx, pid_t child), void *ctx)
{
	char path[96], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid,
		 (int)tid);
	/* A list longer than the buffer is cut at its last whole pid. */
	ssize_t n = read_file_head(path, buf, sizeof buf);
	if (n <= 0)
		return;
	if ((size_t)n == sizeof buf - 1) {
		char *last = strrchr(buf, ' ');
		*(last ? last : buf) = '\0';
	}
	char *save = NULL;
	for (char *item = strtok_r(buf, " \n", &save); item;
	     item = strtok_r(NULL, " \n", &save)) {
		pid_t child = cfsbw_host__pid_of_text(item);
		if (child < 0)
			break;
		fn(ctx, child);
	}
}

