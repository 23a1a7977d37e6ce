/*
 * cmd_ctl.c - cfsbw ctl: the daemon's control tree over its Unix socket,
 * for machines without /dev/fuse.  The same operations, the same errors as
 * the mount (src/daemon/control.c answers both).
 *
 * Exit status: 0 done; 1 the operation failed (the errno is named: EEXIST,
 * ENOENT, EBUSY, EPERM, ESRCH), or no daemon answers; 2 bad usage, or a
 * rejected value (EINVAL, ERANGE: the message names the file, the value
 * and the rule).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "daemon/daemon.h"

/* The requests' lines come from the daemon's own table (socket.c). */
static void ctl_usage(FILE *out)
{
	fputs("usage: cfsbw ctl [--socket PATH] REQUEST\n\nrequests:\n", out);
	cfsbw_daemon_print_requests(out);
	fputs("\nExit status: 0 done, 1 failed (the error is named), 2 bad "
	      "usage or a\nrejected value.  The socket: --socket, else as "
	      "cfsbw daemon's default.\n", out);
}

int cli_ctl_main(int argc, char **argv)
{
	const char *sock = NULL;
	int i = 1;
	if (i < argc && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
		ctl_usage(stdout);
		return 0;
	}
	if (i + 1 < argc && !strcmp(argv[i], "--socket")) {
		sock = argv[i + 1];
		i += 2;
	}
	if (i >= argc) {
		ctl_usage(stderr);
		return 2;
	}
	char request[CFSBW_DAEMON_MAX_LINE];
	size_t len = 0;
	for (; i < argc; i++) {
		int n = snprintf(request + len, sizeof request - len, "%s%s",
				 len ? " " : "", argv[i]);
		if (n < 0 || (size_t)n >= sizeof request - len ||
		    strchr(argv[i], '\n')) {
			fprintf(stderr, "cfsbw ctl: the request is too long "
					"or holds a newline\n");
			return 2;
		}
		len += (size_t)n;
	}
	char sock_buf[4096];
	int fd = cli_connect_daemon("ctl", sock, sock_buf, sizeof sock_buf,
				    &sock);
	if (fd < 0)
		return 1;
	char *reply = NULL;
	int status = cfsbw_daemon_call(fd, request, &reply);
	close(fd);
	if (status < 0) {
		fprintf(stderr, "cfsbw ctl: %s: %s\n", sock, strerror(-status));
		return 1;
	}
	if (status == 0) {
		fputs(reply, stdout);
		free(reply);
		return 0;
	}
	fprintf(stderr, "cfsbw ctl: %s", reply);
	free(reply);
	return status == EINVAL || status == ERANGE ? 2 : 1;
}
