/*
 * mount.c - the control tree as a cgroupfs-compatible FUSE file system
 * (libfuse 3's low-level API), served on the driver's one thread: the
 * session's /dev/fuse descriptor is watched by the driver's loop, and each
 * readable event receives and answers one request
 * (fuse_session_receive_buf, fuse_session_process_buf).  No libfuse thread.
 *
 * What makes it behave as cgroupfs for shells and scripts:
 *  - no caching: entries and attributes time out at once and every file is
 *    opened with direct_io, so `cat cpu.stat` always asks the daemon, and a
 *    group made or removed over the socket shows at the next lookup;
 *  - a read at offset 0 takes a fresh snapshot of the file, later offsets
 *    read from that snapshot, as the kernel's seq_file: a reader that reads
 *    in small pieces gets one consistent text;
 *  - `echo V > FILE` opens with O_TRUNC (a setattr of size 0, or an open
 *    flag), then writes: truncation is accepted and ignored, and each
 *    write(2) is one value, whatever its offset, as in kernfs;
 *  - the errno of a rejected write (R2's EINVAL or ERANGE, EPERM for a
 *    process that cannot be traced) is the writer's, so the shell prints
 *    "write error: Invalid argument" and nothing changed.
 *
 * Inode numbers: group number id (control.c) and slot k give
 * id * INO_STRIDE + 1 + k, k = 0 for the directory and 1 + the file's index
 * for a file, so that the root directory is FUSE_ROOT_ID (1).
 */
#define FUSE_USE_VERSION 35
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon_int.h"

#define INO_STRIDE 32u
#define MAX_WRITE_BYTES 4096u

/* One open file: the snapshot that reads at offsets > 0 come from. */
struct open_file {
	struct open_file *prev, *next; /* the mount's open files */
	char *text;
	size_t len;
	bool have;
};

struct cfsbw_daemon__mount {
	struct fuse_session *se;
	/*
	 * Files open now.  The kernel sends RELEASE after close(2) returns, so
	 * some may still be open when the daemon stops: freed at unmount.
	 */
	struct open_file open_files;
	struct fuse_buf buf;
	char *dir;
	int fd;
	struct timespec start;
};

static fuse_ino_t ino_make(uint64_t id, unsigned slot)
{
	return id * INO_STRIDE + 1 + slot;
}

static uint64_t ino_id(fuse_ino_t ino)
{
	return (ino - 1) / INO_STRIDE;
}

static unsigned ino_slot(fuse_ino_t ino)
{
	return (unsigned)((ino - 1) % INO_STRIDE);
}

static struct cfsbw_daemon *req_daemon(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* The group of a directory inode, or NULL (gone, or not a directory). */
static struct cfsbw_group *dir_group(struct cfsbw_daemon *d, fuse_ino_t ino)
{
	if (ino_slot(ino) != 0)
		return NULL;
	return cfsbw_daemon__node_group(d, ino_id(ino));
}

static void fill_stat(struct cfsbw_daemon *d, fuse_ino_t ino,
		      const char *file, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = ino;
	st->st_uid = geteuid();
	st->st_gid = getegid();
	st->st_atim = st->st_mtim = st->st_ctim = d->mount->start;
	if (!file) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		/* cgroupfs's sizes are 0; direct_io makes readers read on. */
		st->st_mode = S_IFREG |
			      (cfsbw_daemon_file_writable(file) ? 0644 : 0444);
		st->st_nlink = 1;
	}
}

/* The file of slot k (>= 1), or NULL. */
static const char *slot_file(struct cfsbw_daemon *d, unsigned slot)
{
	return slot ? cfsbw_daemon_file_name(d, slot - 1) : NULL;
}

static int ino_stat(struct cfsbw_daemon *d, fuse_ino_t ino, struct stat *st)
{
	struct cfsbw_group *g = cfsbw_daemon__node_group(d, ino_id(ino));
	unsigned slot = ino_slot(ino);
	const char *file = slot_file(d, slot);
	if (!g || (slot && !file))
		return -ENOENT;
	fill_stat(d, ino, file, st);
	return 0;
}

static void reply_entry(fuse_req_t req, struct cfsbw_daemon *d,
			fuse_ino_t ino)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof e);
	e.ino = ino;
	e.generation = 1;
	/* No caching of names or attributes (see the opening comment). */
	e.attr_timeout = 0;
	e.entry_timeout = 0;
	int err = ino_stat(d, ino, &e.attr);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cfsbw_daemon *d = req_daemon(req);
	struct cfsbw_group *pg = dir_group(d, parent);
	if (!pg) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	for (unsigned i = 0;; i++) {
		const char *file = cfsbw_daemon_file_name(d, i);
		if (!file)
			break;
		if (!strcmp(file, name)) {
			reply_entry(req, d, ino_make(ino_id(parent), i + 1));
			return;
		}
	}
	struct cfsbw_group *g = cfsbw_daemon__child(d, pg, name);
	long long id = g ? cfsbw_daemon__node_id(d, g) : -ENOENT;
	if (id < 0)
		fuse_reply_err(req, (int)-id);
	else
		reply_entry(req, d, ino_make((uint64_t)id, 0));
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)fi;
	struct stat st;
	int err = ino_stat(req_daemon(req), ino, &st);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, 0);
}

/* Truncation (echo's O_TRUNC) and times are accepted and change nothing;
 * modes and owners are fixed, as the daemon decides who may write. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	(void)attr;
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
		      FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	op_getattr(req, ino, fi);
}

/*
 * The path of the group name in directory parent into path: 0, -ENOENT
 * (no such directory), -ENAMETOOLONG, or is_file_err when name is one of
 * a group's files.
 */
static int group_path(struct cfsbw_daemon *d, fuse_ino_t parent,
		      const char *name, char *path, size_t size, int is_file_err)
{
	struct cfsbw_group *pg = dir_group(d, parent);
	if (!pg)
		return -ENOENT;
	int err = cfsbw_daemon__join(path, size, cfsbw_group_path(pg), name);
	if (!err && cfsbw_daemon__is_file(d, name))
		err = is_file_err;
	return err;
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	(void)mode;
	struct cfsbw_daemon *d = req_daemon(req);
	char path[4096];
	/* A file's name is taken: the kernel's mkdir says EEXIST. */
	int err = group_path(d, parent, name, path, sizeof path, -EEXIST);
	if (!err)
		err = cfsbw_daemon_mkdir(d, path);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	long long id = cfsbw_daemon__node_id(d, cfsbw_group_find(d->tree, path));
	if (id < 0)
		fuse_reply_err(req, (int)-id);
	else
		reply_entry(req, d, ino_make((uint64_t)id, 0));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cfsbw_daemon *d = req_daemon(req);
	char path[4096];
	int err = group_path(d, parent, name, path, sizeof path, -ENOTDIR);
	if (!err)
		err = cfsbw_daemon_rmdir(d, path);
	fuse_reply_err(req, -err);
}

/* Files are the daemon's: none is made, removed or renamed by hand. */
static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	fuse_reply_err(req, EPERM);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	fuse_reply_err(req, EPERM);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)fi;
	fuse_reply_err(req, EPERM);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cfsbw_daemon *d = req_daemon(req);
	struct stat st;
	int err = ino_stat(d, ino, &st);
	if (!err && ino_slot(ino) == 0)
		err = -EISDIR;
	struct open_file *of = err ? NULL : calloc(1, sizeof *of);
	if (!err && !of)
		err = -ENOMEM;
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)of;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (fuse_reply_open(req, fi) != 0) {
		free(of); /* the opener was interrupted: no release follows */
		return;
	}
	struct open_file *head = &d->mount->open_files;
	of->next = head->next;
	of->prev = head;
	head->next->prev = of;
	head->next = of;
}

static void open_file_free(struct open_file *of)
{
	of->prev->next = of->next;
	of->next->prev = of->prev;
	free(of->text);
	free(of);
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	if (of)
		open_file_free(of);
	fuse_reply_err(req, 0);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct cfsbw_daemon *d = req_daemon(req);
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	struct cfsbw_group *g = cfsbw_daemon__node_group(d, ino_id(ino));
	const char *file = slot_file(d, ino_slot(ino));
	if (!of || !g || !file) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (off == 0 || !of->have) {
		char *text;
		long n = cfsbw_daemon_read(d, cfsbw_group_path(g), file, &text);
		if (n < 0) {
			fuse_reply_err(req, (int)-n);
			return;
		}
		free(of->text);
		of->text = text;
		of->len = (size_t)n;
		of->have = true;
	}
	size_t start = (size_t)off < of->len ? (size_t)off : of->len;
	size_t n = of->len - start < size ? of->len - start : size;
	fuse_reply_buf(req, of->text + start, n);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)off;
	(void)fi;
	struct cfsbw_daemon *d = req_daemon(req);
	struct cfsbw_group *g = cfsbw_daemon__node_group(d, ino_id(ino));
	const char *file = slot_file(d, ino_slot(ino));
	if (!g || !file) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (size > MAX_WRITE_BYTES) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	char text[MAX_WRITE_BYTES + 1];
	memcpy(text, buf, size);
	text[size] = '\0';
	const char *rule;
	char path[4096];
	/* The group's path is copied: a write may remove nothing, but the
	 * log line below must not point into a changed tree. */
	snprintf(path, sizeof path, "%s", cfsbw_group_path(g));
	int err = cfsbw_daemon_write(d, path, file, text,
				     fuse_req_ctx(req)->pid, &rule);
	if (err) {
		text[strcspn(text, "\n")] = '\0';
		if (err == -EINVAL || err == -ERANGE)
			cfsbw_daemon__logf(d, "%s/%s: '%s' rejected: %s%s%s",
					   strcmp(path, "/") ? path : "", file,
					   text, strerror(-err),
					   rule ? "; " : "", rule ? rule : "");
		fuse_reply_err(req, -err);
		return;
	}
	fuse_reply_write(req, size);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	struct cfsbw_daemon *d = req_daemon(req);
	struct cfsbw_group *g = dir_group(d, ino);
	if (!g) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	char *out = malloc(size ? size : 1);
	if (!out) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t used = 0;
	off_t index = 0;
	struct stat st;
	memset(&st, 0, sizeof st);
	/* Entry index + 1 is the offset the next readdir resumes from. */
#define ADD(name, entry_ino, mode)                                             \
	do {                                                                   \
		if (index++ >= off) {                                          \
			st.st_ino = (entry_ino);                               \
			st.st_mode = (mode);                                   \
			size_t need = fuse_add_direntry(req, out + used,       \
							size - used, (name),   \
							&st, index);           \
			if (need > size - used)                                \
				goto full;                                     \
			used += need;                                          \
		}                                                              \
	} while (0)
	ADD(".", ino, S_IFDIR);
	ADD("..", ino, S_IFDIR);
	for (unsigned i = 0;; i++) {
		const char *file = cfsbw_daemon_file_name(d, i);
		if (!file)
			break;
		ADD(file, ino_make(ino_id(ino), i + 1), S_IFREG);
	}
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c)) {
		long long id = cfsbw_daemon__node_id(d, c);
		if (id < 0)
			break;
		const char *name = strrchr(cfsbw_group_path(c), '/') + 1;
		ADD(name, ino_make((uint64_t)id, 0), S_IFDIR);
	}
#undef ADD
full:
	fuse_reply_buf(req, out, used);
	free(out);
}

/*
 * The requests served, one list: each NAME is libfuse's member of
 * fuse_lowlevel_ops and op_NAME above its handler.  What is not here
 * (rename, link, symlink, ...) libfuse answers with ENOSYS.
 */
#define MOUNT_OPS(X)                                                           \
	X(lookup) X(getattr) X(setattr) X(mknod) X(mkdir) X(unlink) X(rmdir)   \
	X(open) X(read) X(write) X(release) X(readdir) X(create)

static const struct fuse_lowlevel_ops ops = {
#define MOUNT_OP(name) .name = op_##name,
	MOUNT_OPS(MOUNT_OP)
#undef MOUNT_OP
};

/* One request from the kernel, on the driver's thread. */
static void on_fuse_readable(void *ctx, int fd)
{
	struct cfsbw_daemon *d = ctx;
	struct cfsbw_daemon__mount *m = d->mount;
	int n = fuse_session_receive_buf(m->se, &m->buf);
	if (n == -EINTR || n == -EAGAIN)
		return;
	if (n <= 0 || fuse_session_exited(m->se)) {
		/* Unmounted from outside (umount, fusermount3 -u). */
		cfsbw_daemon__logf(d, "%s was unmounted; serving the socket only",
				   m->dir);
		d->drv->watch_fd(d->drv_ctx, fd, NULL, NULL);
		return;
	}
	fuse_session_process_buf(m->se, &m->buf);
}

/*
 * A daemon killed with SIGKILL leaves its mount answering ENOTCONN
 * ("Transport endpoint is not connected") until it is unmounted: a new
 * daemon on the same directory detaches the dead mount first.
 */
static void detach_dead_mount(struct cfsbw_daemon *d, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) == 0 || errno != ENOTCONN)
		return;
	if (umount2(dir, MNT_DETACH) == 0)
		cfsbw_daemon__logf(d, "%s: detached the mount of a daemon that "
				      "died", dir);
	else
		cfsbw_daemon__logf(d, "%s: a dead mount is there (%s); run "
				      "fusermount3 -uz %s", dir,
				   strerror(errno), dir);
}

int cfsbw_daemon_mount(struct cfsbw_daemon *d, const char *dir)
{
	if (d->mount)
		return -EBUSY;
	detach_dead_mount(d, dir);
	struct cfsbw_daemon__mount *m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	clock_gettime(CLOCK_REALTIME, &m->start);
	m->fd = -1;
	m->open_files.next = m->open_files.prev = &m->open_files;
	/*
	 * default_permissions: the kernel checks the modes above (0444 for
	 * cpu.stat, the daemon's user as owner).  allow_other, as root only
	 * (others need user_allow_other in /etc/fuse.conf): every user sees
	 * the tree, as everyone sees /sys/fs/cgroup.
	 */
	char *argv[] = {(char *)(uintptr_t) "cfsbw", (char *)(uintptr_t) "-o",
			(char *)(uintptr_t)(geteuid() == 0
				? "fsname=cfsbw,subtype=cfsbw,default_permissions,allow_other"
				: "fsname=cfsbw,subtype=cfsbw,default_permissions"),
			NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	int err = -ENOMEM;
	m->dir = strdup(dir);
	if (!m->dir)
		goto fail;
	d->mount = m;
	m->se = fuse_session_new(&args, &ops, sizeof ops, d);
	fuse_opt_free_args(&args);
	err = -EIO;
	if (!m->se)
		goto fail;
	err = -ENODEV;
	if (fuse_session_mount(m->se, dir) != 0)
		goto fail_session;
	m->fd = fuse_session_fd(m->se);
	fcntl(m->fd, F_SETFL, fcntl(m->fd, F_GETFL) | O_NONBLOCK);
	err = d->drv->watch_fd(d->drv_ctx, m->fd, on_fuse_readable, d);
	if (err)
		goto fail_mount;
	return 0;
fail_mount:
	fuse_session_unmount(m->se);
fail_session:
	fuse_session_destroy(m->se);
	m->se = NULL;
fail:
	d->mount = NULL;
	free(m->dir);
	free(m);
	return err;
}

void cfsbw_daemon__mount_free(struct cfsbw_daemon *d)
{
	struct cfsbw_daemon__mount *m = d->mount;
	if (!m)
		return;
	d->drv->watch_fd(d->drv_ctx, m->fd, NULL, NULL);
	fuse_session_unmount(m->se);
	fuse_session_destroy(m->se);
	while (m->open_files.next != &m->open_files)
		open_file_free(m->open_files.next);
	free(m->buf.mem);
	free(m->dir);
	free(m);
	d->mount = NULL;
}
