/*
 * daemon.h - the daemon layer: a live control tree (SPEC section 8) served
 * as a cgroupfs-compatible FUSE mount and over a Unix socket.
 *
 * The daemon sits above a driver that governs processes (the host driver)
 * and owns no loop of its own: it asks the driver to watch its file
 * descriptors (the FUSE channel, the socket and its clients, the metrics
 * listener) and is called back on the driver's one thread, between the
 * driver's own calls into the core.  Every call into the core therefore
 * happens on one thread, as the core's serialization rules ask.
 *
 * The control tree is the one place the mount and the socket meet: a path
 * ("/", "/web", "/tenant/web") names a group, a file name one of its files.
 * Every operation returns 0 (or a length) or the negative errno the kernel's
 * cgroupfs returns for the same operation (SPEC section 8):
 *  - mkdir: -EEXIST (exists), -ENOENT (no parent), -EINVAL (a bad name);
 *  - rmdir: -EBUSY (child groups or processes; the root), -ENOENT;
 *  - write: -EINVAL / -ERANGE (R2, nothing changed), -EINVAL for the
 *    read-only cpu.stat and cpuacct.usage, -ESRCH (no such process) or
 *    -EPERM (it cannot be traced; the reason is logged) for cgroup.procs;
 *  - any path that does not exist: -ENOENT.
 */
#ifndef CFSBW_DAEMON_H
#define CFSBW_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cfsbw.h"

struct cfsbw_daemon;

typedef void cfsbw_daemon_fd_fn(void *ctx, int fd);
typedef int cfsbw_daemon_pid_fn(void *ctx, pid_t pid);

/*
 * What the daemon asks of the driver below it: five calls, as few as the
 * control tree needs, so that a test or fuzzer stands in for the host
 * with a few lines.  watch_fd is required; the process calls may be NULL
 * (a tree with no processes: cgroup.procs reads empty and a write to it
 * fails with EPERM).  ctx is the driver.
 */
struct cfsbw_daemon_driver {
	/* Call fn(fn_ctx, fd) on the driver's thread whenever fd is
	 * readable; fn NULL: stop watching fd. */
	int (*watch_fd)(void *ctx, int fd, cfsbw_daemon_fd_fn *fn,
			void *fn_ctx);
	/* SPEC section 8's move: 0, -ESRCH, or -EPERM with *why set to the
	 * reason (the driver's text, valid until its next call). */
	int (*place)(void *ctx, pid_t pid, struct cfsbw_group *g,
		     const char **why);
	/* The processes (threads false: cgroup.procs) or the threads (tasks)
	 * in g itself; stops when fn returns != 0. */
	int (*for_each_pid)(void *ctx, struct cfsbw_group *g, bool threads,
			    cfsbw_daemon_pid_fn *fn, void *fn_ctx);
	/* cpuacct.usage: CPU time used in g and its descendants, ns. */
	uint64_t (*usage_ns)(void *ctx, const struct cfsbw_group *g);
	/* Remove an empty group (the driver cancels its timers first). */
	int (*group_destroy)(void *ctx, struct cfsbw_group *g);
};

struct cfsbw_daemon_config {
	struct cfsbw_tree *tree; /* the driver's tree; the daemon owns nothing of it */
	const struct cfsbw_daemon_driver *driver;
	void *driver_ctx;
	/* NULL: no state file; otherwise written after every change (rename). */
	const char *state_path;
	/* Log lines ("why a move failed"); NULL: stderr. */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
};

/*
 * Create the daemon over cfg->tree.  With a state_path that exists, its
 * groups and settings are restored first (processes named in it are taken
 * back by cfsbw_daemon_restore_procs, once the driver runs).  Returns 0,
 * -ENOMEM, or the error of a state file that cannot be read (logged, with
 * its line).
 */
int cfsbw_daemon_create(const struct cfsbw_daemon_config *cfg,
			struct cfsbw_daemon **out);
/* Unmount, close every socket, free the daemon.  The tree stays. */
void cfsbw_daemon_destroy(struct cfsbw_daemon *d);
/* Take back the processes the state file names, where the kernel lets us. */
void cfsbw_daemon_restore_procs(struct cfsbw_daemon *d);
/* Once a second, from the driver's periodic callback: the state file
 * follows processes that came and went. */
void cfsbw_daemon_tick(struct cfsbw_daemon *d);

/* The control tree (control.c).  The mount and the socket call these. */
int cfsbw_daemon_mkdir(struct cfsbw_daemon *d, const char *path);
int cfsbw_daemon_rmdir(struct cfsbw_daemon *d, const char *path);
/*
 * Write text to a group's file as write(2) would.  On -EINVAL / -ERANGE
 * *rule (when not NULL) names what a valid value looks like.
 */
int cfsbw_daemon_write(struct cfsbw_daemon *d, const char *path,
		       const char *file, const char *text, pid_t writer,
		       const char **rule);
/*
 * The file's contents, as the kernel prints them, into a buffer the caller
 * frees.  Returns the length or -ENOENT / -ENOMEM.
 */
long cfsbw_daemon_read(struct cfsbw_daemon *d, const char *path,
		       const char *file, char **out);
/*
 * Move pid (all its threads) into the group at path: 0, -ENOENT, -ESRCH,
 * or -EPERM with *why (when not NULL) set to the reason, which is logged
 * too.
 */
int cfsbw_daemon_move(struct cfsbw_daemon *d, pid_t pid, const char *path,
		      const char **why);
/* The names of a group's files, in order; NULL past the end. */
const char *cfsbw_daemon_file_name(const struct cfsbw_daemon *d,
				   unsigned index);
/* Whether a write to the file can succeed at all (its mode 0644 or 0444). */
bool cfsbw_daemon_file_writable(const char *file);

/* Serve the tree at dir with FUSE (mount.c).  Returns 0 or -errno. */
int cfsbw_daemon_mount(struct cfsbw_daemon *d, const char *dir);
/* Serve the socket protocol at path (socket.c).  Returns 0 or -errno. */
int cfsbw_daemon_listen(struct cfsbw_daemon *d, const char *path);
/* Serve /metrics on addr "HOST:PORT" (metrics.c).  Returns 0 or -errno. */
int cfsbw_daemon_metrics_listen(struct cfsbw_daemon *d, const char *addr);

/*
 * The socket protocol (socket.c, client.c).  A request is one line:
 *   mkdir PATH | rmdir PATH | ls [PATH] | get PATH FILE |
 *   set PATH FILE VALUE... | move PID PATH | stat
 * The reply is a header line "STATUS LENGTH\n" (STATUS 0 or a positive
 * errno) and LENGTH bytes: the data, or on error a message that names the
 * file, the value and the rule.
 */
#define CFSBW_DAEMON_MAX_LINE 4096

/* The default socket path: $CFSBW_SOCKET, /run/cfsbw.sock for root,
 * $XDG_RUNTIME_DIR/cfsbw.sock, or /tmp/cfsbw-UID.sock. */
const char *cfsbw_daemon_default_socket(char *buf, size_t size);
/* Connect to the daemon's socket: an fd or -errno. */
int cfsbw_daemon_connect(const char *path);
/*
 * Send one request line (no newline) and read the reply into a buffer the
 * caller frees.  Returns the reply's status (0 or a positive errno), or a
 * negative errno when the daemon could not be reached.
 */
int cfsbw_daemon_call(int fd, const char *request, char **reply);
/* The requests, a line each ("  mkdir PATH    create a group ..."), for
 * a client's help. */
void cfsbw_daemon_print_requests(FILE *out);

#endif
