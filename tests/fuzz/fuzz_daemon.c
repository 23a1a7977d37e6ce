/*
 * fuzz_daemon.c - the daemon's socket protocol (src/daemon/socket.c): any
 * request lines, served by cfsbw_daemon__request over a tree of its own,
 * as a client of `cfsbw daemon` could send them.
 *
 * The input is the lines, '\n'-separated (at most 64 per input).  The
 * daemon sits on a driver with no processes: a move finds no such process
 * (-ESRCH), cgroup.procs reads empty.  Checks, after every line: the
 * status is 0 or one of the errnos daemon.h lists; an error comes with a
 * message; a rejected `set` (-EINVAL, -ERANGE) changed no file of any
 * group; nothing leaks (LeakSanitizer).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cfsbw.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "fuzz.h"

#define FZ_MAX_LINES 64

static int drv_watch(void *ctx, int fd, cfsbw_daemon_fd_fn *fn, void *fn_ctx)
{
	(void)ctx, (void)fd, (void)fn, (void)fn_ctx;
	return 0;
}

static int drv_place(void *ctx, pid_t pid, struct cfsbw_group *g,
		     const char **why)
{
	(void)ctx, (void)pid, (void)g, (void)why;
	return -ESRCH;
}

static int drv_destroy(void *ctx, struct cfsbw_group *g)
{
	(void)ctx;
	return cfsbw_group_destroy(g);
}

static const struct cfsbw_daemon_driver fz_driver = {
	.watch_fd = drv_watch,
	.place = drv_place,
	.group_destroy = drv_destroy,
};

static void fz_log(void *ctx, const char *line)
{
	(void)ctx, (void)line;
}

/* Every file of every group, as text, into b (for "nothing changed"). */
static void fz_snap(struct cfsbw_tree *tree, struct cfsbw_group *g,
		    struct cfsbw_daemon__buf *b)
{
	const char *name;
	char text[512];
	cfsbw_daemon__buf_printf(b, "[%s]\n", cfsbw_group_path(g));
	for (unsigned k = 0; (name = cfsbw_file_name(tree, k)); k++)
		if (cfsbw_file_read(g, name, text, sizeof text) >= 0)
			cfsbw_daemon__buf_printf(b, "%s=%s", name, text);
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c))
		fz_snap(tree, c, b);
}

static bool fz_known_errno(int err)
{
	switch (-err) {
	case 0:
	case EINVAL:
	case ERANGE:
	case ENOENT:
	case EEXIST:
	case EBUSY:
	case ESRCH:
	case EPERM:
	case ENOMEM:
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	struct fz_input in = {data, size};
	enum cfsbw_policy policy =
		fz_u8(&in) % 2 ? CFSBW_POLICY_UPSTREAM : CFSBW_POLICY_V4;
	struct cfsbw_tree_config tc = {.nr_rq = 2, .policy = policy};
	struct cfsbw_tree *tree;
	FZ_CHECK(cfsbw_tree_create(&tc, &tree) == 0, "tree");
	struct cfsbw_daemon_config cfg = {
		.tree = tree, .driver = &fz_driver, .log = fz_log,
	};
	struct cfsbw_daemon *d;
	FZ_CHECK(cfsbw_daemon_create(&cfg, &d) == 0, "daemon");

	char *text = malloc(in.n + 1);
	FZ_CHECK(text, "out of memory");
	memcpy(text, in.p, in.n);
	text[in.n] = '\0';
	char *line = text;
	for (unsigned i = 0; i < FZ_MAX_LINES && line; i++) {
		char *nl = memchr(line, '\n', strlen(line));
		if (nl)
			*nl = '\0';
		struct cfsbw_daemon__buf before = {0}, after = {0}, reply = {0};
		fz_snap(tree, cfsbw_tree_root(tree), &before);
		int err = cfsbw_daemon__request(d, line, &reply, 1);
		FZ_CHECK(fz_known_errno(err), "'%s': %d", line, err);
		FZ_CHECK(!err || (reply.len && reply.text),
			 "'%s': error %d without a message", line, err);
		if (err == -EINVAL || err == -ERANGE) {
			fz_snap(tree, cfsbw_tree_root(tree), &after);
			FZ_CHECK(before.len == after.len &&
					 !memcmp(before.text, after.text,
						 before.len),
				 "rejected '%s' (%d) changed the tree:\n%s\n"
				 "----\n%s", line, err, before.text,
				 after.text);
		}
		cfsbw_daemon__buf_free(&before);
		cfsbw_daemon__buf_free(&after);
		cfsbw_daemon__buf_free(&reply);
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	cfsbw_daemon_destroy(d);
	cfsbw_tree_free(tree);
	return 0;
}
