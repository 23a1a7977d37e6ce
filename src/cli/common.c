/*
 * common.c - what the cfsbw command's subcommands share, written once
 * (issue 13): the bad-usage message and its exit status, the help flag,
 * options looked up in a table, and reaching a running cfsbw daemon.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "daemon/daemon.h"

int cli_bad_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "cfsbw %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(cfsbw %s --help for the options)\n", cmd);
	return 2;
}

bool cli_is_help(const char *arg, const char *usage)
{
	if (strcmp(arg, "-h") && strcmp(arg, "--help"))
		return false;
	fputs(usage, stdout);
	return true;
}

bool cli_options_end(char **argv, int *i)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--")) {
		(*i)++;
		return true;
	}
	return a[0] != '-' || !a[1];
}

const char **cli_opt_value(const struct cli_opt *opts, const char *name)
{
	for (; opts->name; opts++)
		if (!strcmp(opts->name, name))
			return opts->value;
	return NULL;
}

int cli_connect_daemon(const char *cmd, const char *sock, char *buf,
		       size_t size, const char **used)
{
	if (!sock)
		sock = cfsbw_daemon_default_socket(buf, size);
	*used = sock;
	int fd = cfsbw_daemon_connect(sock);
	if (fd < 0) {
		fprintf(stderr, "cfsbw %s: no daemon at %s: %s\n", cmd, sock,
			strerror(-fd));
		return -1;
	}
	return fd;
}
