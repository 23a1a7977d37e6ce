/*
 * daemon_int.h - the daemon layer's private header: the daemon object and
 * what its files (control.c, mount.c, socket.c, state.c, metrics.c) share.
 * Everything here runs on the driver's one thread.
 */
#ifndef CFSBW_DAEMON_INT_H
#define CFSBW_DAEMON_INT_H

#include <stdarg.h>
#include <sys/socket.h>

#include "daemon/daemon.h"

struct cfsbw_daemon__mount;   /* mount.c */
/*
 * A connection the daemon accepted: the first member of a socket client
 * (socket.c) and of a metrics request (metrics.c), on one of the daemon's
 * lists of them.
 */
struct cfsbw_daemon__conn {
	struct cfsbw_daemon__conn *next;
	struct cfsbw_daemon *d;
	int fd;
};

/* A growable text buffer; len excludes the NUL kept after the text. */
struct cfsbw_daemon__buf {
	char *text;
	size_t len, cap;
	bool failed; /* an allocation failed: the text is incomplete */
};

struct cfsbw_daemon {
	struct cfsbw_tree *tree;
	const struct cfsbw_daemon_driver *drv;
	void *drv_ctx;
	char *state_path;
	void (*log)(void *ctx, const char *line);
	void *log_ctx;

	/*
	 * Group numbers for the mount's inodes: nodes[id] is the group with
	 * number id, NULL once removed.  Numbers are never reused, so a stale
	 * inode finds nothing rather than another group.  The root is 0.
	 */
	struct cfsbw_group **nodes;
	size_t nr_nodes, cap_nodes;

	struct cfsbw_daemon__mount *mount;

	int listen_fd;
	char *socket_path;
	struct cfsbw_daemon__conn *clients; /* socket.c */

	int metrics_fd;
	struct cfsbw_daemon__conn *metrics_conns; /* metrics.c */

	/* "take" lines of the state file, run once the driver runs. */
	struct cfsbw_daemon__buf pending_moves;
	/* The state file's text as last written (saves only changes). */
	struct cfsbw_daemon__buf saved;
	bool loading; /* replaying the state file: no saves */
};

/* control.c */
void cfsbw_daemon__logf(struct cfsbw_daemon *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The number of g (registered on first use), or -ENOMEM. */
long long cfsbw_daemon__node_id(struct cfsbw_daemon *d, struct cfsbw_group *g);
struct cfsbw_group *cfsbw_daemon__node_group(const struct cfsbw_daemon *d,
					     uint64_t id);
/* The group of parent's child name, or NULL. */
struct cfsbw_group *cfsbw_daemon__child(struct cfsbw_daemon *d,
					struct cfsbw_group *parent,
					const char *name);
/* path + "/" + name into buf; -ENAMETOOLONG when it does not fit. */
int cfsbw_daemon__join(char *buf, size_t size, const char *path,
		       const char *name);
bool cfsbw_daemon__is_file(const struct cfsbw_daemon *d, const char *file);
/* The processes in g itself, as the driver counts them (control.c). */
unsigned cfsbw_daemon__nr_procs(struct cfsbw_daemon *d, struct cfsbw_group *g);
/* The tree changed: write the state file (state.c). */
void cfsbw_daemon__state_save(struct cfsbw_daemon *d);
int cfsbw_daemon__state_load(struct cfsbw_daemon *d);
/* One request line of the socket protocol (socket.c), also the state file's. */
int cfsbw_daemon__request(struct cfsbw_daemon *d, const char *line,
			  struct cfsbw_daemon__buf *reply, pid_t peer);

/* buf.c-like helpers, in control.c */
void cfsbw_daemon__buf_add(struct cfsbw_daemon__buf *b, const char *text,
			   size_t len);
void cfsbw_daemon__buf_printf(struct cfsbw_daemon__buf *b, const char *fmt,
			      ...) __attribute__((format(printf, 2, 3)));
void cfsbw_daemon__buf_free(struct cfsbw_daemon__buf *b);

/*
 * socket.c: a listening stream socket bound to sa (made under umask 0177,
 * so a Unix socket's file is its owner's alone), watched by the driver
 * with on_readable: the descriptor, or -errno with nothing left behind.
 */
int cfsbw_daemon__listen_on(struct cfsbw_daemon *d, const struct sockaddr *sa,
			    socklen_t len, int backlog,
			    cfsbw_daemon_fd_fn *on_readable);
/*
 * Accepts a connection on the listening fd: a zeroed object of size bytes
 * whose first member is a struct cfsbw_daemon__conn, for it, on list, its
 * descriptor watched with on_readable(object).  NULL when there is none or
 * no memory (then the connection is closed).
 */
void *cfsbw_daemon__accept(struct cfsbw_daemon *d, int fd, size_t size,
			   cfsbw_daemon_fd_fn *on_readable,
			   struct cfsbw_daemon__conn **list);
/* Takes c off list, stops watching it, closes and frees it. */
void cfsbw_daemon__conn_close(struct cfsbw_daemon__conn **list,
			      struct cfsbw_daemon__conn *c);
/*
 * recv on a watched connection, into size bytes of buf: the bytes read;
 * 0 when none are there yet (EAGAIN, EINTR); -1 when the peer is gone, the
 * read failed, or size is 0 (it sent more than a request may hold): close.
 */
ssize_t cfsbw_daemon__recv(int fd, void *buf, size_t size);
/* Stops watching *fd and closes it; *fd becomes -1 (nothing if it was). */
void cfsbw_daemon__unlisten(struct cfsbw_daemon *d, int *fd);

void cfsbw_daemon__mount_free(struct cfsbw_daemon *d);
void cfsbw_daemon__socket_close(struct cfsbw_daemon *d);
void cfsbw_daemon__metrics_close(struct cfsbw_daemon *d);

#endif
