/*
 * control.c - the control tree of SPEC section 8 on a core tree: groups
 * made and removed by path, their files read and written by name, and
 * processes moved between them, with the errnos of the kernel's cgroupfs.
 * The mount (mount.c) and the socket (socket.c) are two doors onto these
 * functions, so that both give the same answers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon_int.h"

/* The daemon's own files, after the core's cpu.* files of the policy. */
#define PROCS_FILE "cgroup.procs"
#define TASKS_FILE "tasks"
#define USAGE_FILE "cpuacct.usage"
static const char *const own_files[] = {PROCS_FILE, TASKS_FILE, USAGE_FILE};
#define NR_OWN_FILES (sizeof own_files / sizeof own_files[0])

static int64_t now_ns(void)
{
	/* The host driver's clock (cfsbw_host_now_ns is CLOCK_MONOTONIC). */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * CFSBW_NSEC_PER_SEC + ts.tv_nsec;
}

void cfsbw_daemon__logf(struct cfsbw_daemon *d, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (d->log)
		d->log(d->log_ctx, line);
	else
		fprintf(stderr, "cfsbw daemon: %s\n", line);
}

void cfsbw_daemon__buf_add(struct cfsbw_daemon__buf *b, const char *text,
			   size_t len)
{
	if (b->failed)
		return;
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + len + 1)
			cap *= 2;
		char *t = realloc(b->text, cap);
		if (!t) {
			b->failed = true;
			return;
		}
		b->text = t;
		b->cap = cap;
	}
	memcpy(b->text + b->len, text, len);
	b->len += len;
	b->text[b->len] = '\0';
}

void cfsbw_daemon__buf_printf(struct cfsbw_daemon__buf *b, const char *fmt,
			      ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		cfsbw_daemon__buf_add(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	cfsbw_daemon__buf_add(b, big, (size_t)n);
	free(big);
}

void cfsbw_daemon__buf_free(struct cfsbw_daemon__buf *b)
{
	free(b->text);
	memset(b, 0, sizeof *b);
}

long long cfsbw_daemon__node_id(struct cfsbw_daemon *d, struct cfsbw_group *g)
{
	for (size_t i = 0; i < d->nr_nodes; i++)
		if (d->nodes[i] == g)
			return (long long)i;
	if (d->nr_nodes == d->cap_nodes) {
		size_t cap = d->cap_nodes ? 2 * d->cap_nodes : 64;
		struct cfsbw_group **n = realloc(d->nodes, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		d->nodes = n;
		d->cap_nodes = cap;
	}
	d->nodes[d->nr_nodes] = g;
	return (long long)d->nr_nodes++;
}

struct cfsbw_group *cfsbw_daemon__node_group(const struct cfsbw_daemon *d,
					     uint64_t id)
{
	return id < d->nr_nodes ? d->nodes[id] : NULL;
}

static void node_forget(struct cfsbw_daemon *d, const struct cfsbw_group *g)
{
	for (size_t i = 0; i < d->nr_nodes; i++)
		if (d->nodes[i] == g)
			d->nodes[i] = NULL;
}

int cfsbw_daemon__join(char *buf, size_t size, const char *path,
		       const char *name)
{
	int n = snprintf(buf, size, "%s%s%s", path,
			 strcmp(path, "/") ? "/" : "", name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

struct cfsbw_group *cfsbw_daemon__child(struct cfsbw_daemon *d,
					struct cfsbw_group *parent,
					const char *name)
{
	char path[4096];
	if (cfsbw_daemon__join(path, sizeof path, cfsbw_group_path(parent),
			       name))
		return NULL;
	return cfsbw_group_find(d->tree, path);
}

const char *cfsbw_daemon_file_name(const struct cfsbw_daemon *d,
				   unsigned index)
{
	const char *name = cfsbw_file_name(d->tree, index);
	if (name)
		return name;
	unsigned nr_core = 0;
	while (cfsbw_file_name(d->tree, nr_core))
		nr_core++;
	index -= nr_core;
	return index < NR_OWN_FILES ? own_files[index] : NULL;
}

bool cfsbw_daemon__is_file(const struct cfsbw_daemon *d, const char *file)
{
	for (unsigned i = 0;; i++) {
		const char *name = cfsbw_daemon_file_name(d, i);
		if (!name)
			return false;
		if (!strcmp(name, file))
			return true;
	}
}

bool cfsbw_daemon_file_writable(const char *file)
{
	return strcmp(file, "cpu.stat") && strcmp(file, USAGE_FILE);
}

int cfsbw_daemon_create(const struct cfsbw_daemon_config *cfg,
			struct cfsbw_daemon **out)
{
	struct cfsbw_daemon *d = calloc(1, sizeof *d);
	if (!d)
		return -ENOMEM;
	d->tree = cfg->tree;
	d->drv = cfg->driver;
	d->drv_ctx = cfg->driver_ctx;
	d->log = cfg->log;
	d->log_ctx = cfg->log_ctx;
	d->listen_fd = -1;
	d->metrics_fd = -1;
	int err = -ENOMEM;
	if (cfg->state_path && !(d->state_path = strdup(cfg->state_path)))
		goto fail;
	if (cfsbw_daemon__node_id(d, cfsbw_tree_root(d->tree)) < 0)
		goto fail;
	if (d->state_path && (err = cfsbw_daemon__state_load(d)))
		goto fail;
	*out = d;
	return 0;
fail:
	free(d->state_path);
	free(d->nodes);
	free(d);
	return err;
}

void cfsbw_daemon_destroy(struct cfsbw_daemon *d)
{
	if (!d)
		return;
	cfsbw_daemon__metrics_close(d);
	cfsbw_daemon__socket_close(d);
	cfsbw_daemon__mount_free(d);
	cfsbw_daemon__buf_free(&d->pending_moves);
	cfsbw_daemon__buf_free(&d->saved);
	free(d->state_path);
	free(d->nodes);
	free(d);
}

int cfsbw_daemon_mkdir(struct cfsbw_daemon *d, const char *path)
{
	struct cfsbw_group *g;
	int err = cfsbw_group_create(d->tree, path, &g);
	if (err)
		return err;
	if (cfsbw_daemon__node_id(d, g) < 0) {
		cfsbw_group_destroy(g);
		return -ENOMEM;
	}
	cfsbw_daemon__state_save(d);
	return 0;
}

static int count_pid(void *ctx, pid_t pid)
{
	(void)pid;
	(*(unsigned *)ctx)++;
	return 0;
}

unsigned cfsbw_daemon__nr_procs(struct cfsbw_daemon *d, struct cfsbw_group *g)
{
	unsigned n = 0;
	if (d->drv && d->drv->for_each_pid)
		d->drv->for_each_pid(d->drv_ctx, g, false, count_pid, &n);
	return n;
}

int cfsbw_daemon_rmdir(struct cfsbw_daemon *d, const char *path)
{
	struct cfsbw_group *g = cfsbw_group_find(d->tree, path);
	if (!g)
		return -ENOENT;
	/* SPEC section 8: child groups or processes keep a group (and the
	 * root is never removed), as the kernel's rmdir. */
	if (!cfsbw_group_parent(g) || cfsbw_group_first_child(g) ||
	    cfsbw_daemon__nr_procs(d, g))
		return -EBUSY;
	int err = d->drv && d->drv->group_destroy
			  ? d->drv->group_destroy(d->drv_ctx, g)
			  : cfsbw_group_destroy(g);
	if (err)
		return err;
	node_forget(d, g);
	cfsbw_daemon__state_save(d);
	return 0;
}

static int parse_pid(const char *text, pid_t writer, pid_t *out)
{
	const char *p = text;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	long long v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > 0x7fffffff)
			return -ERANGE;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	/* As the kernel: 0 is the writer itself. */
	*out = v ? (pid_t)v : writer;
	return *out > 0 ? 0 : -ESRCH;
}

/* The process (thread group) of thread tid, from /proc; tid if unknown. */
static pid_t tgid_of(pid_t tid)
{
	char name[64], line[256];
	snprintf(name, sizeof name, "/proc/%d/status", (int)tid);
	FILE *f = fopen(name, "r");
	if (!f)
		return tid;
	pid_t tgid = tid;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return tgid > 0 ? tgid : tid;
}

int cfsbw_daemon_move(struct cfsbw_daemon *d, pid_t pid, const char *path,
		      const char **why)
{
	struct cfsbw_group *g = cfsbw_group_find(d->tree, path);
	if (!g)
		return -ENOENT;
	const char *reason = NULL;
	int err = -EPERM;
	if (d->drv && d->drv->place)
		err = d->drv->place(d->drv_ctx, pid, g, &reason);
	else
		reason = "this daemon governs no processes";
	if (err == -EPERM) {
		if (!reason)
			reason = "not allowed to trace it";
		if (why)
			*why = reason;
		cfsbw_daemon__logf(d, "move of %d to %s refused (EPERM): %s",
				   (int)pid, path, reason);
	} else if (err)
		cfsbw_daemon__logf(d, "move of %d to %s failed: %s", (int)pid,
				   path, strerror(-err));
	else
		cfsbw_daemon__state_save(d);
	return err;
}

int cfsbw_daemon_write(struct cfsbw_daemon *d, const char *path,
		       const char *file, const char *text, pid_t writer,
		       const char **rule)
{
	const char *unused;
	if (!rule)
		rule = &unused;
	*rule = NULL;
	struct cfsbw_group *g = cfsbw_group_find(d->tree, path);
	if (!g || !cfsbw_daemon__is_file(d, file))
		return -ENOENT;
	if (!strcmp(file, PROCS_FILE) || !strcmp(file, TASKS_FILE)) {
		pid_t pid;
		int err = parse_pid(text, writer, &pid);
		if (err) {
			*rule = "a process ID, one per write";
			return err;
		}
		/* v1's tasks moves one thread; cfsbw moves whole processes
		 * (one runqueue each), so a TID moves its process.  The
		 * writer's ID ("0") is its thread's too. */
		if (!strcmp(file, TASKS_FILE) || pid == writer)
			pid = tgid_of(pid);
		return cfsbw_daemon_move(d, pid, path, NULL);
	}
	if (!strcmp(file, USAGE_FILE)) {
		*rule = "cpuacct.usage is read-only";
		return -EINVAL;
	}
	int err = cfsbw_file_write(g, file, text, now_ns());
	if (err) {
		*rule = cfsbw_file_rule(file);
		return err;
	}
	cfsbw_daemon__state_save(d);
	return 0;
}

struct pid_list {
	pid_t *pids;
	size_t nr, cap;
	bool failed;
};

static int pid_list_add(void *ctx, pid_t pid)
{
	struct pid_list *l = ctx;
	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		pid_t *p = realloc(l->pids, cap * sizeof *p);
		if (!p) {
			l->failed = true;
			return -ENOMEM;
		}
		l->pids = p;
		l->cap = cap;
	}
	l->pids[l->nr++] = pid;
	return 0;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* cgroup.procs and tasks: one ID a line, ascending (SPEC section 8). */
static int read_pids(struct cfsbw_daemon *d, struct cfsbw_group *g,
		     bool threads, struct cfsbw_daemon__buf *b)
{
	struct pid_list l = {0};
	if (d->drv && d->drv->for_each_pid)
		d->drv->for_each_pid(d->drv_ctx, g, threads, pid_list_add, &l);
	if (l.failed) {
		free(l.pids);
		return -ENOMEM;
	}
	if (l.nr) /* qsort's array must not be NULL, even for 0 */
		qsort(l.pids, l.nr, sizeof *l.pids, pid_cmp);
	for (size_t i = 0; i < l.nr; i++)
		cfsbw_daemon__buf_printf(b, "%d\n", (int)l.pids[i]);
	free(l.pids);
	return 0;
}

long cfsbw_daemon_read(struct cfsbw_daemon *d, const char *path,
		       const char *file, char **out)
{
	*out = NULL;
	struct cfsbw_group *g = cfsbw_group_find(d->tree, path);
	if (!g || !cfsbw_daemon__is_file(d, file))
		return -ENOENT;
	struct cfsbw_daemon__buf b = {0};
	int err = 0;
	if (!strcmp(file, PROCS_FILE) || !strcmp(file, TASKS_FILE)) {
		err = read_pids(d, g, !strcmp(file, TASKS_FILE), &b);
	} else if (!strcmp(file, USAGE_FILE)) {
		uint64_t ns = d->drv && d->drv->usage_ns
				      ? d->drv->usage_ns(d->drv_ctx, g)
				      : 0;
		cfsbw_daemon__buf_printf(&b, "%" PRIu64 "\n", ns);
	} else {
		char text[1024];
		int n = cfsbw_file_read(g, file, text, sizeof text);
		if (n < 0)
			err = n;
		else
			cfsbw_daemon__buf_add(&b, text, (size_t)n);
	}
	/* An empty file still gets a buffer, so *out is never NULL on 0. */
	cfsbw_daemon__buf_add(&b, "", 0);
	if (!err && b.failed)
		err = -ENOMEM;
	if (err) {
		cfsbw_daemon__buf_free(&b);
		return err;
	}
	*out = b.text;
	return (long)b.len;
}
