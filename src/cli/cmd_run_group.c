/*
 * cmd_run_group.c - cfsbw run --group PATH -- CMD: start CMD inside a group
 * of a running cfsbw daemon.
 *
 * cfsbw run is here a client, not a tracer: it forks; the child names the
 * daemon as a process allowed to trace it (prctl PR_SET_PTRACER, for Yama's
 * ptrace_scope 1, under which only ancestors may trace: the daemon is not
 * CMD's ancestor), asks the daemon over its socket to take it into PATH,
 * waits for the answer, and only then executes CMD, so CMD's first
 * instruction already runs in the group.  This process stays CMD's parent:
 * CMD has its stdin, stdout, stderr and terminal, as with plain cfsbw run;
 * a signal sent to cfsbw run is passed on to CMD (one the terminal sent to
 * the whole process group already reached CMD and is not sent twice), and
 * the exit status is CMD's: its code, or 128 + N when it died of signal N.
 * Status 125: the daemon could not be reached or refused the move (named
 * on stderr); 126/127: CMD could not be executed / found.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "daemon/daemon.h"

#define STATUS_DAEMON 125

static volatile sig_atomic_t child_pid;

/* Pass on what another process sent us; the terminal's SIGINT (si_code
 * SI_KERNEL) went to CMD's process group already. */
static void forward(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (child_pid > 0 && info->si_code != SI_KERNEL)
		kill((pid_t)child_pid, sig);
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
				SIGUSR2};

int cli_run_group(const char *group, const char *socket, char **argv)
{
	char sock_buf[4096];
	if (!socket)
		socket = cfsbw_daemon_default_socket(sock_buf, sizeof sock_buf);
	int fd = cfsbw_daemon_connect(socket);
	if (fd < 0) {
		fprintf(stderr, "cfsbw run: --group %s: no daemon at %s: %s\n",
			group, socket, strerror(-fd));
		return STATUS_DAEMON;
	}
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		fprintf(stderr, "cfsbw run: %s: %s\n", socket, strerror(errno));
		close(fd);
		return STATUS_DAEMON;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	struct sigaction old[sizeof forwarded / sizeof *forwarded];
	for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
		sigaction(forwarded[i], &sa, &old[i]);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "cfsbw run: fork: %s\n", strerror(errno));
		close(fd);
		return STATUS_DAEMON;
	}
	if (pid == 0) {
		for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
			sigaction(forwarded[i], &old[i], NULL);
		/* EINVAL without Yama: nothing to allow then. */
		prctl(PR_SET_PTRACER, (unsigned long)cred.pid, 0, 0, 0);
		char request[CFSBW_DAEMON_MAX_LINE];
		snprintf(request, sizeof request, "move %d %s", (int)getpid(),
			 group);
		char *reply = NULL;
		int status = cfsbw_daemon_call(fd, request, &reply);
		close(fd);
		if (status) {
			fprintf(stderr, "cfsbw run: --group %s: %s",
				group, status < 0 ? strerror(-status) : reply);
			if (status < 0)
				fputc('\n', stderr);
			_exit(STATUS_DAEMON);
		}
		free(reply);
		execvp(argv[0], argv);
		int err = errno;
		fprintf(stderr, "cfsbw run: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	close(fd);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "cfsbw run: waitpid: %s\n",
				strerror(errno));
			return STATUS_DAEMON;
		}
	return WIFEXITED(status) ? WEXITSTATUS(status)
				 : 128 + WTERMSIG(status);
}
