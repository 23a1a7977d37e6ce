/*
 * socket.c - the control tree over a Unix socket (cfsbw ctl, cfsbw top,
 * cfsbw run --group), for machines without /dev/fuse.  The same requests
 * are the lines of the state file (state.c).
 *
 * A request is one line of words; the reply is "STATUS LENGTH\n" and LENGTH
 * bytes (daemon.h).  The errors are those of the mount, from the same
 * functions (control.c).  The socket is made with mode 0600: whoever may
 * connect may ask the daemon to trace a process, so only its own user (and
 * root) may.  Clients are served on the driver's thread; a client that
 * does not read its replies (the socket buffer full) is dropped rather
 * than let it stall the loop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/daemon_int.h"

struct cfsbw_daemon__client {
	struct cfsbw_daemon__conn conn; /* first: on d->clients */
	pid_t pid; /* SO_PEERCRED: "move 0 PATH" moves the client itself */
	size_t len;
	char line[CFSBW_DAEMON_MAX_LINE];
};

static void put_error(struct cfsbw_daemon__buf *reply, const char *what,
		      int err)
{
	cfsbw_daemon__buf_printf(reply, "%s: %s\n", what, strerror(-err));
}

/* "/web" + "cpu.stat" as a message names it: "/web/cpu.stat". */
static void file_path(char *buf, size_t size, const char *path,
		      const char *file)
{
	snprintf(buf, size, "%s/%s", strcmp(path, "/") ? path : "", file);
}

static void list_tree(struct cfsbw_group *g, struct cfsbw_daemon__buf *reply)
{
	cfsbw_daemon__buf_printf(reply, "%s\n", cfsbw_group_path(g));
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c))
		list_tree(c, reply);
}


/*
 * "stat": one line per group, for cfsbw top and the metrics, with a header
 * naming the columns.  Times in ns, the quota and period in us (-1: none).
 */
static void stat_tree(struct cfsbw_daemon *d, struct cfsbw_group *g,
		      struct cfsbw_daemon__buf *reply)
{
	struct cfsbw_stats s;
	cfsbw_group_stats(g, &s);
	int64_t quota = cfsbw_group_quota_ns(g);
	uint64_t usage = d->drv && d->drv->usage_ns
				 ? d->drv->usage_ns(d->drv_ctx, g)
				 : 0;
	cfsbw_daemon__buf_printf(
		reply,
		"%s %" PRId64 " %" PRId64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		" %" PRIu64 " %u\n",
		cfsbw_group_path(g),
		quota == CFSBW_RUNTIME_INF ? -1 : quota / CFSBW_NSEC_PER_USEC,
		cfsbw_group_period_ns(g) / CFSBW_NSEC_PER_USEC, s.nr_periods,
		s.nr_throttled, s.throttled_time, usage,
		cfsbw_daemon__nr_procs(d, g));
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c))
		stat_tree(d, c, reply);
}

/* Split off the next word of *p (NUL-terminating it), or NULL. */
static char *next_word(char **p)
{
	char *s = *p + strspn(*p, " \t");
	if (!*s)
		return NULL;
	char *e = s + strcspn(s, " \t");
	if (*e)
		*e++ = '\0';
	*p = e;
	return s;
}

/* One request being served: its words after the verb, split as needed. */
struct request {
	struct cfsbw_daemon *d;
	const char *verb;
	char *path; /* the first word after the verb, or NULL */
	char *rest; /* what follows it */
	pid_t peer;
	struct cfsbw_daemon__buf *reply;
};

static int serve_list(struct request *rq)
{
	struct cfsbw_group *g = cfsbw_group_find(rq->d->tree,
						 rq->path ? rq->path : "/");
	if (!g) {
		put_error(rq->reply, rq->path, -ENOENT);
		return -ENOENT;
	}
	if (rq->verb[0] == 'l') {
		list_tree(g, rq->reply);
	} else {
		cfsbw_daemon__buf_printf(rq->reply,
					 "# path quota_us period_us nr_periods "
					 "nr_throttled throttled_time_ns "
					 "usage_ns nr_procs\n");
		stat_tree(rq->d, g, rq->reply);
	}
	return rq->reply->failed ? -ENOMEM : 0;
}

static int serve_mkdir_rmdir(struct request *rq)
{
	int err = rq->verb[0] == 'm' ? cfsbw_daemon_mkdir(rq->d, rq->path)
				     : cfsbw_daemon_rmdir(rq->d, rq->path);
	if (err) {
		char what[4200];
		snprintf(what, sizeof what, "%s %s", rq->verb, rq->path);
		put_error(rq->reply, what, err);
	}
	return err;
}

static int serve_get(struct request *rq)
{
	char *file = next_word(&rq->rest);
	char *text;
	long n = file ? cfsbw_daemon_read(rq->d, rq->path, file, &text)
		      : -EINVAL;
	if (n < 0) {
		char what[4200];
		file_path(what, sizeof what, rq->path, file ? file : "");
		put_error(rq->reply, what, (int)n);
		return (int)n;
	}
	cfsbw_daemon__buf_add(rq->reply, text, (size_t)n);
	free(text);
	return rq->reply->failed ? -ENOMEM : 0;
}

static int serve_set(struct request *rq)
{
	char *file = next_word(&rq->rest);
	const char *value = rq->rest + strspn(rq->rest, " \t");
	const char *rule = NULL;
	int err = file ? cfsbw_daemon_write(rq->d, rq->path, file, value,
					    rq->peer, &rule)
		       : -EINVAL;
	if (!err)
		return 0;
	char what[4200];
	file_path(what, sizeof what, rq->path, file ? file : "");
	if (err == -EINVAL || err == -ERANGE)
		cfsbw_daemon__buf_printf(rq->reply, "%s: '%s' rejected: %s%s%s\n",
					 what, value, strerror(-err),
					 rule ? "; " : "", rule ? rule : "");
	else
		put_error(rq->reply, what, err);
	return err;
}

/* "move PID PATH": the PID is the first word; 0 is the client itself. */
static int serve_move(struct request *rq)
{
	char *to = next_word(&rq->rest);
	char *end;
	long pid = strtol(rq->path, &end, 10);
	if (!to || *end || pid < 0 || pid > 0x7fffffff) {
		cfsbw_daemon__buf_printf(rq->reply,
					 "move: expected 'move PID PATH'\n");
		return -EINVAL;
	}
	if (pid == 0)
		pid = rq->peer;
	const char *why = NULL;
	int err = cfsbw_daemon_move(rq->d, (pid_t)pid, to, &why);
	if (err) {
		char what[4200];
		snprintf(what, sizeof what, "move %ld to %s", pid, to);
		put_error(rq->reply, what, err);
		if (why)
			cfsbw_daemon__buf_printf(rq->reply, "%s\n", why);
	}
	return err;
}

/* The requests: what the socket serves and what `cfsbw ctl --help` says. */
static const struct request_kind {
	const char *verb, *args, *what;
	bool path_optional;
	int (*serve)(struct request *rq);
} requests[] = {
	{"mkdir", "PATH", "create a group (/web, /tenant/web)", false,
	 serve_mkdir_rmdir},
	{"rmdir", "PATH", "remove an empty group", false, serve_mkdir_rmdir},
	{"ls", "[PATH]", "the groups under PATH (default /)", true,
	 serve_list},
	{"get", "PATH FILE", "a file's contents (cpu.stat, cgroup.procs...)",
	 false, serve_get},
	{"set", "PATH FILE VALUE...",
	 "write a file (\"50000 100000\" to cpu.max)", false, serve_set},
	{"move", "PID PATH", "move a process, all its threads, to PATH", false,
	 serve_move},
	{"stat", "[PATH]", "one line of figures per group", true, serve_list},
};

void cfsbw_daemon_print_requests(FILE *out)
{
	for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
		char head[64];
		snprintf(head, sizeof head, "%s %s", requests[i].verb,
			 requests[i].args);
		fprintf(out, "  %-24s %s\n", head, requests[i].what);
	}
}

int cfsbw_daemon__request(struct cfsbw_daemon *d, const char *request,
			  struct cfsbw_daemon__buf *reply, pid_t peer)
{
	char line[CFSBW_DAEMON_MAX_LINE];
	snprintf(line, sizeof line, "%s", request);
	line[strcspn(line, "\r\n")] = '\0';
	struct request rq = {.d = d, .rest = line, .peer = peer,
			     .reply = reply};
	char *verb = next_word(&rq.rest);
	if (!verb) {
		cfsbw_daemon__buf_printf(reply, "empty request\n");
		return -EINVAL;
	}
	rq.verb = verb;
	rq.path = next_word(&rq.rest);
	for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
		if (strcmp(verb, requests[i].verb))
			continue;
		if (!rq.path && !requests[i].path_optional) {
			cfsbw_daemon__buf_printf(reply, "%s: a path is "
							"missing\n", verb);
			return -EINVAL;
		}
		return requests[i].serve(&rq);
	}
	cfsbw_daemon__buf_printf(reply, "unknown request '%s'\n", verb);
	return -EINVAL;
}

static void client_close(struct cfsbw_daemon__client *c)
{
	cfsbw_daemon__conn_close(&c->conn.d->clients, &c->conn);
}

/* Write all of buf or fail: the client is dropped when it does not read. */
static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int client_serve_line(struct cfsbw_daemon__client *c, const char *line)
{
	struct cfsbw_daemon__buf reply = {0};
	int err = cfsbw_daemon__request(c->conn.d, line, &reply, c->pid);
	if (reply.failed && !err)
		err = -ENOMEM;
	char head[64];
	int n = snprintf(head, sizeof head, "%d %zu\n", -err, reply.len);
	int rc = send_all(c->conn.fd, head, (size_t)n) ||
		 send_all(c->conn.fd, reply.text ? reply.text : "", reply.len);
	cfsbw_daemon__buf_free(&reply);
	return rc;
}

static void on_client_readable(void *ctx, int fd)
{
	struct cfsbw_daemon__client *c = ctx;
	ssize_t n = cfsbw_daemon__recv(fd, c->line + c->len,
				       sizeof c->line - c->len);
	if (n < 0)
		client_close(c);
	if (n <= 0)
		return;
	c->len += (size_t)n;
	for (;;) {
		char *nl = memchr(c->line, '\n', c->len);
		if (!nl) {
			if (c->len == sizeof c->line) {
				cfsbw_daemon__logf(c->conn.d, "a socket client sent "
						      "a line over %d bytes; "
						      "dropped",
						   CFSBW_DAEMON_MAX_LINE);
				client_close(c);
			}
			return;
		}
		*nl = '\0';
		if (client_serve_line(c, c->line)) {
			client_close(c);
			return;
		}
		size_t used = (size_t)(nl + 1 - c->line);
		memmove(c->line, nl + 1, c->len - used);
		c->len -= used;
	}
}

static void on_listen_readable(void *ctx, int fd)
{
	struct cfsbw_daemon *d = ctx;
	struct cfsbw_daemon__client *c = cfsbw_daemon__accept(
		d, fd, sizeof *c, on_client_readable, &d->clients);
	if (!c)
		return;
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(c->conn.fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		client_close(c);
	else
		c->pid = cred.pid;
}

void *cfsbw_daemon__accept(struct cfsbw_daemon *d, int fd, size_t size,
			   cfsbw_daemon_fd_fn *on_readable,
			   struct cfsbw_daemon__conn **list)
{
	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return NULL;
	struct cfsbw_daemon__conn *c = calloc(1, size);
	if (!c || d->drv->watch_fd(d->drv_ctx, cfd, on_readable, c)) {
		free(c);
		close(cfd);
		return NULL;
	}
	c->d = d;
	c->fd = cfd;
	c->next = *list;
	*list = c;
	return c;
}

void cfsbw_daemon__conn_close(struct cfsbw_daemon__conn **list,
			      struct cfsbw_daemon__conn *c)
{
	for (struct cfsbw_daemon__conn **pp = list; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->d->drv->watch_fd(c->d->drv_ctx, c->fd, NULL, NULL);
	close(c->fd);
	free(c);
}

static int sockaddr_of(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa->sun_path)
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int cfsbw_daemon_listen(struct cfsbw_daemon *d, const char *path)
{
	struct sockaddr_un sa;
	int err = sockaddr_of(path, &sa);
	if (err)
		return err;
	if (d->listen_fd >= 0)
		return -EBUSY;
	/* A socket file nobody answers on is a dead daemon's: replace it. */
	int probe = cfsbw_daemon_connect(path);
	if (probe >= 0) {
		close(probe);
		return -EADDRINUSE;
	}
	if (probe == -ECONNREFUSED)
		unlink(path);
	d->socket_path = strdup(path);
	if (!d->socket_path)
		return -ENOMEM;
	int fd = cfsbw_daemon__listen_on(d, (const struct sockaddr *)&sa,
					 sizeof sa, 64, on_listen_readable);
	if (fd < 0) {
		free(d->socket_path);
		d->socket_path = NULL;
		return fd;
	}
	d->listen_fd = fd;
	return 0;
}

int cfsbw_daemon__listen_on(struct cfsbw_daemon *d, const struct sockaddr *sa,
			    socklen_t len, int backlog,
			    cfsbw_daemon_fd_fn *on_readable)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);
	if (fd < 0)
		return -errno;
	if (sa->sa_family != AF_UNIX) {
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	}
	mode_t old = umask(0177);
	int rc = bind(fd, sa, len);
	umask(old);
	int err = rc || listen(fd, backlog) ? -errno : 0;
	if (!err)
		err = d->drv->watch_fd(d->drv_ctx, fd, on_readable, d);
	if (err) {
		/* The socket's file, if bind made one, goes with it. */
		if (!rc && sa->sa_family == AF_UNIX)
			unlink(((const struct sockaddr_un *)(const void *)sa)
				       ->sun_path);
		close(fd);
		return err;
	}
	return fd;
}

ssize_t cfsbw_daemon__recv(int fd, void *buf, size_t size)
{
	if (!size)
		return -1; /* more than a request may hold */
	ssize_t n = recv(fd, buf, size, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return n > 0 ? n : -1;
}

void cfsbw_daemon__unlisten(struct cfsbw_daemon *d, int *fd)
{
	if (*fd < 0)
		return;
	d->drv->watch_fd(d->drv_ctx, *fd, NULL, NULL);
	close(*fd);
	*fd = -1;
}

void cfsbw_daemon__socket_close(struct cfsbw_daemon *d)
{
	while (d->clients)
		cfsbw_daemon__conn_close(&d->clients, d->clients);
	cfsbw_daemon__unlisten(d, &d->listen_fd);
	if (d->socket_path)
		unlink(d->socket_path);
	free(d->socket_path);
	d->socket_path = NULL;
}
