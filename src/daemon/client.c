/*
 * client.c - the client side of the daemon's socket protocol (daemon.h),
 * for cfsbw ctl, cfsbw top and cfsbw run --group.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/daemon.h"

const char *cfsbw_daemon_default_socket(char *buf, size_t size)
{
	const char *env = getenv("CFSBW_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (env && *env)
		snprintf(buf, size, "%s", env);
	else if (geteuid() == 0)
		snprintf(buf, size, "/run/cfsbw.sock");
	else if (xdg && *xdg)
		snprintf(buf, size, "%s/cfsbw.sock", xdg);
	else
		snprintf(buf, size, "/tmp/cfsbw-%u.sock", (unsigned)geteuid());
	return buf;
}

int cfsbw_daemon_connect(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int recv_all(int fd, char *buf, size_t len)
{
	while (len) {
		ssize_t n = recv(fd, buf, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int cfsbw_daemon_call(int fd, const char *request, char **reply)
{
	*reply = NULL;
	size_t len = strlen(request);
	if (len >= CFSBW_DAEMON_MAX_LINE || memchr(request, '\n', len))
		return -EINVAL;
	char line[CFSBW_DAEMON_MAX_LINE + 1];
	memcpy(line, request, len);
	line[len++] = '\n';
	for (size_t off = 0; off < len;) {
		ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		off += (size_t)n;
	}
	/* The header: "STATUS LENGTH\n", read a byte at a time (it is short). */
	char head[64];
	size_t h = 0;
	for (;;) {
		if (h == sizeof head - 1)
			return -EPROTO;
		int err = recv_all(fd, head + h, 1);
		if (err)
			return err;
		if (head[h++] == '\n')
			break;
	}
	head[h] = '\0';
	int status;
	size_t body;
	if (sscanf(head, "%d %zu", &status, &body) != 2 || status < 0 ||
	    body > (64u << 20))
		return -EPROTO;
	char *text = malloc(body + 1);
	if (!text)
		return -ENOMEM;
	int err = recv_all(fd, text, body);
	if (err) {
		free(text);
		return err;
	}
	text[body] = '\0';
	*reply = text;
	return status;
}
