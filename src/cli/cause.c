/*
 * cause.c - why cfsbw run could not take a process in, or could not start
 * its command, named (issue 16, item 5).
 *
 * ptrace says EPERM for a zombie, for cfsbw itself, for a kernel thread,
 * for a process already traced, for another user's process and where Yama
 * restricts tracing; exec says ENOENT both for a missing command and for a
 * script whose #! interpreter is missing.  The user needs to know which,
 * so after a failure the target is looked at in /proc (and a script's
 * first line read) to find the cause.  Only after a failure: nothing here
 * is on a path that runs while processes are governed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

#define PF_KTHREAD_FLAG 0x00200000u /* task->flags of a kernel thread */
#define CAP_SYS_PTRACE_BIT 19

static bool read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return true;
}

/* The number after "key:" in a /proc status text (first column), or -1. */
static long long status_field(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	return p ? strtoll(p + strlen(key), NULL, 0) : -1;
}

static bool has_cap_sys_ptrace(void)
{
	char status[4096];
	if (!read_file("/proc/self/status", status, sizeof status))
		return false;
	const char *p = strstr(status, "CapEff:");
	if (!p)
		return false;
	unsigned long long caps = strtoull(p + 7, NULL, 16);
	return caps >> CAP_SYS_PTRACE_BIT & 1;
}

void cli_pid_cause(pid_t pid, char *buf, size_t size)
{
	char path[64], stat[1024], status[4096];
	if (pid == getpid()) {
		snprintf(buf, size, "it is cfsbw itself");
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!read_file(path, stat, sizeof stat)) {
		snprintf(buf, size, "No such process");
		return;
	}
	/* After "(comm) ": state ppid pgrp session tty tpgid flags. */
	const char *p = strrchr(stat, ')');
	char state = '?';
	unsigned flags = 0;
	if (p && sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) < 1)
		state = '?';
	if (state == 'Z' || state == 'X') {
		snprintf(buf, size,
			 "it is a zombie: it has exited, and its parent has "
			 "not yet reaped it");
		return;
	}
	if (flags & PF_KTHREAD_FLAG) {
		snprintf(buf, size,
			 "it is a kernel thread, which cannot be traced");
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	status[0] = '\0';
	read_file(path, status, sizeof status);
	long long tracer = status_field(status, "TracerPid:");
	if (tracer > 0) {
		snprintf(buf, size,
			 "it is already traced by process %lld (a debugger, "
			 "strace, or another cfsbw run)", tracer);
		return;
	}
	long long uid = status_field(status, "Uid:");
	bool privileged = has_cap_sys_ptrace();
	if (uid >= 0 && (uid_t)uid != getuid() && !privileged) {
		snprintf(buf, size,
			 "it belongs to user %lld and cfsbw runs as user %u, "
			 "without CAP_SYS_PTRACE", uid, (unsigned)getuid());
		return;
	}
	char scope[16] = "";
	read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope);
	int yama = atoi(scope);
	if (yama == 3 || (yama >= 1 && !privileged)) {
		snprintf(buf, size,
			 "ptrace is restricted: kernel.yama.ptrace_scope is %d%s",
			 yama,
			 yama == 1 ? " (only descendants; 0 allows a process "
				     "of one's own)"
				   : "");
		return;
	}
	snprintf(buf, size,
		 "not allowed (a process that changed its credentials, such as "
		 "a set-user-ID program, needs CAP_SYS_PTRACE)");
}

/* The file execvp would run for name, into out; false if none. */
static bool find_command(const char *name, char *out, size_t size)
{
	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name);
		return access(out, F_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *dir = path; *dir;) {
		size_t len = strcspn(dir, ":");
		snprintf(out, size, "%.*s%s%s", (int)len, dir, len ? "/" : "",
			 name);
		if (access(out, F_OK) == 0)
			return true;
		dir += len + (dir[len] == ':');
	}
	return false;
}

bool cli_exec_cause(const char *name, char *buf, size_t size)
{
	char file[4096], line[256];
	if (!find_command(name, file, sizeof file))
		return false;
	FILE *f = fopen(file, "re");
	if (!f)
		return false;
	size_t n = fread(line, 1, sizeof line - 1, f);
	fclose(f);
	line[n] = '\0';
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return false;
	/* The interpreter: the first word after #!, as the kernel reads it. */
	char *interp = line + 2 + strspn(line + 2, " \t");
	size_t len = strcspn(interp, " \t\n");
	bool dos = len > 0 && interp[len - 1] == '\r';
	interp[len - dos] = '\0';
	struct stat st;
	if (*interp && stat(interp, &st) == 0 && !dos)
		return false;
	snprintf(buf, size,
		 "%s: bad interpreter '%s%s' on its #! line: %s", file, interp,
		 dos ? "\\r" : "",
		 dos ? "the line ends in a carriage return (a DOS line ending)"
		     : "No such file or directory");
	return true;
}
