/*
 * state.c - the daemon's state file (--state FILE): the tree's groups, their
 * settings and their processes, so that a restarted daemon serves the same
 * tree and takes back the same processes (issue 15's "fail-safe and
 * restart").
 *
 * The file is a list of the socket protocol's requests (socket.c), one a
 * line, parents before children, so that reading it back is replaying it:
 *   mkdir /web
 *   set /web cpu.cfs_period_us 100000
 *   set /web cpu.cfs_quota_us 50000
 *   take 1234 8812345 /web      (PID, its start time in clock ticks, group)
 * "take" is a move that first checks that the PID still names the process
 * it named (its start time, field 22 of /proc/PID/stat), so that a PID
 * reused since is left alone.  The file is written whole to FILE.tmp and
 * renamed over FILE, so a crash leaves the old file or the new one, never a
 * part.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/helpers.h"
#include "daemon/daemon_int.h"

/* The settings a group's state holds, in the order they can be written
 * back: the period before the quota, the quota before the burst (R2). */
static const char *const saved_files[] = {
	"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.cfs_burst_us",
	"cpu.shares"};

/* Field 22 of /proc/PID/stat, the start time, or 0 when gone. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_file_head(path, buf, sizeof buf) < 0)
		return 0;
	const char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ')' come fields 3 (state) to 52; field 22 is the 20th. */
	p++;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

struct take_ctx {
	struct cfsbw_daemon__buf *out;
	const char *path;
};

static int add_take(void *ctx, pid_t pid)
{
	struct take_ctx *t = ctx;
	cfsbw_daemon__buf_printf(t->out, "take %d %llu %s\n", (int)pid,
				 start_time(pid), t->path);
	return 0;
}

static void save_group(struct cfsbw_daemon *d, struct cfsbw_group *g,
		       struct cfsbw_daemon__buf *out)
{
	const char *path = cfsbw_group_path(g);
	if (cfsbw_group_parent(g)) {
		cfsbw_daemon__buf_printf(out, "mkdir %s\n", path);
		for (size_t i = 0; i < sizeof saved_files / sizeof *saved_files;
		     i++) {
			char text[256];
			if (!cfsbw_daemon__is_file(d, saved_files[i]) ||
			    cfsbw_file_read(g, saved_files[i], text,
					    sizeof text) < 0)
				continue;
			text[strcspn(text, "\n")] = '\0';
			cfsbw_daemon__buf_printf(out, "set %s %s %s\n", path,
						 saved_files[i], text);
		}
	}
	if (d->drv && d->drv->for_each_pid) {
		struct take_ctx t = {out, path};
		d->drv->for_each_pid(d->drv_ctx, g, false, add_take, &t);
	}
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c))
		save_group(d, c, out);
}

void cfsbw_daemon__state_save(struct cfsbw_daemon *d)
{
	if (!d->state_path || d->loading)
		return;
	struct cfsbw_daemon__buf out = {0};
	cfsbw_daemon__buf_printf(&out, "# cfsbw daemon state: requests of "
				       "the socket protocol, replayed at start\n");
	save_group(d, cfsbw_tree_root(d->tree), &out);
	if (out.failed) {
		cfsbw_daemon__logf(d, "%s: not written: out of memory",
				   d->state_path);
		goto out;
	}
	if (d->saved.text && d->saved.len == out.len &&
	    !memcmp(d->saved.text, out.text, out.len))
		goto out; /* unchanged */
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp", d->state_path);
	FILE *f = fopen(tmp, "w");
	int ok = f && fwrite(out.text, 1, out.len, f) == out.len &&
		 fflush(f) == 0 && fsync(fileno(f)) == 0;
	if (f && fclose(f))
		ok = 0;
	if (!ok || rename(tmp, d->state_path)) {
		cfsbw_daemon__logf(d, "%s: not written: %s", d->state_path,
				   strerror(errno));
		unlink(tmp);
		goto out;
	}
	cfsbw_daemon__buf_free(&d->saved);
	d->saved = out;
	return;
out:
	cfsbw_daemon__buf_free(&out);
}

int cfsbw_daemon__state_load(struct cfsbw_daemon *d)
{
	FILE *f = fopen(d->state_path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	char line[CFSBW_DAEMON_MAX_LINE];
	unsigned lineno = 0;
	d->loading = true;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (!strncmp(line, "take ", 5)) {
			cfsbw_daemon__buf_printf(&d->pending_moves, "%s\n", line);
			continue;
		}
		struct cfsbw_daemon__buf reply = {0};
		int err = cfsbw_daemon__request(d, line, &reply, 0);
		if (err)
			cfsbw_daemon__logf(d, "%s:%u: %s", d->state_path, lineno,
					   reply.text ? reply.text : line);
		cfsbw_daemon__buf_free(&reply);
	}
	d->loading = false;
	fclose(f);
	return 0;
}

void cfsbw_daemon_restore_procs(struct cfsbw_daemon *d)
{
	char *p = d->pending_moves.text;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		int pid;
		unsigned long long start;
		char path[4096];
		if (sscanf(p, "take %d %llu %4095s", &pid, &start, path) == 3) {
			if (start_time(pid) != start)
				cfsbw_daemon__logf(d, "process %d of %s is gone "
						      "(not taken back)",
						   pid, path);
			else if (cfsbw_daemon_move(d, pid, path, NULL) == 0)
				cfsbw_daemon__logf(d, "took back process %d "
						      "into %s", pid, path);
		}
		p = nl ? nl + 1 : NULL;
	}
	cfsbw_daemon__buf_free(&d->pending_moves);
	cfsbw_daemon__state_save(d);
}

void cfsbw_daemon_tick(struct cfsbw_daemon *d)
{
	/* Processes come and go without a request (forks, exits): the state
	 * file follows them once a second, when the text changed. */
	cfsbw_daemon__state_save(d);
}
