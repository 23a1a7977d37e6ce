/*
 * trace_cfsbw.c - the cfsbw trace format, version 1, as `cfsbw record`
 * writes it (docs/sim.md, "Replaying real workloads"):
 *
 *     cfsbw-trace 1
 *     # comment
 *     thread TID PID COMM
 *     run TID START_NS END_NS [P]
 *     exit TID TIME_NS
 *     end TIME_NS
 *
 * Each thread becomes one task of the line (replay.h: a P run is
 * continued by the next, any other is followed by a sleep).  Anything the
 * format does not define is an error naming its line, never skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay.h"

#define LINE_MAX_CHARS 512

static bool ns_field(const char *s, int64_t *out)
{
	uint64_t v;
	if (!cfsbw_sim__replay_u64(s, &v) || v > (uint64_t)INT64_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

struct cfsbw_reader {
	struct replay r;
	unsigned line;
	int64_t end_ns; /* -1 until the end line */
};

static int thread_of(struct cfsbw_reader *cr, const char *tid_s, size_t *idx)
{
	uint64_t tid;
	if (!cfsbw_sim__replay_u64(tid_s, &tid) || tid > (uint64_t)INT64_MAX)
		return cfsbw_sim__replay_fail(
			&cr->r, cr->line,
			"'%s': a thread id is a decimal integer", tid_s);
	if (!cfsbw_sim__replay_find_thread(&cr->r, (int64_t)tid, idx))
		return cfsbw_sim__replay_fail(
			&cr->r, cr->line,
			"thread %s: no 'thread %s PID COMM' line "
			"before it",
			tid_s, tid_s);
	if (cfsbw_sim__replay_exited(&cr->r, *idx))
		return cfsbw_sim__replay_fail(
			&cr->r, cr->line, "thread %s: a record after its exit",
			tid_s);
	return 0;
}

static int rec_thread(struct cfsbw_reader *cr, char **tok, int nt)
{
	uint64_t tid, pid;
	size_t idx;
	if (nt != 4 || !cfsbw_sim__replay_u64(tok[1], &tid) ||
	    !cfsbw_sim__replay_u64(tok[2], &pid) || tid > (uint64_t)INT64_MAX)
		return cfsbw_sim__replay_fail(&cr->r, cr->line,
					      "expected 'thread TID PID COMM'");
	if (cfsbw_sim__replay_find_thread(&cr->r, (int64_t)tid, &idx) &&
	    !cfsbw_sim__replay_exited(&cr->r, idx))
		return cfsbw_sim__replay_fail(
			&cr->r, cr->line,
			"thread %s: appears twice without an exit", tok[1]);
	return cfsbw_sim__replay_new_thread(&cr->r, (int64_t)tid, tok[3],
					    cr->line, &idx);
}

static int rec_run(struct cfsbw_reader *cr, char **tok, int nt)
{
	int64_t start, end;
	size_t idx;
	if (nt < 4 || nt > 5 || (nt == 5 && strcmp(tok[4], "P")))
		return cfsbw_sim__replay_fail(
			&cr->r, cr->line,
			"expected 'run TID START_NS END_NS [P]'");
	if (!ns_field(tok[2], &start) || !ns_field(tok[3], &end))
		return cfsbw_sim__replay_fail(
			&cr->r, cr->line,
			"run %s %s: times are integers, ns since "
			"the trace's start",
			tok[2], tok[3]);
	int rc = thread_of(cr, tok[1], &idx);
	if (rc)
		return rc;
	return cfsbw_sim__replay_run(&cr->r, idx, start, end, -1, nt == 4,
				     cr->line);
}

static int record(struct cfsbw_reader *cr, char **tok, int nt)
{
	int64_t when;
	size_t idx;
	if (cr->end_ns >= 0)
		return cfsbw_sim__replay_fail(&cr->r, cr->line,
					      "'%s' after the trace's end line",
					      tok[0]);
	if (!strcmp(tok[0], "thread"))
		return rec_thread(cr, tok, nt);
	if (!strcmp(tok[0], "run"))
		return rec_run(cr, tok, nt);
	if (!strcmp(tok[0], "exit")) {
		if (nt != 3 || !ns_field(tok[2], &when))
			return cfsbw_sim__replay_fail(
				&cr->r, cr->line,
				"expected 'exit TID TIME_NS'");
		int rc = thread_of(cr, tok[1], &idx);
		if (rc)
			return rc;
		cfsbw_sim__replay_exit(&cr->r, idx);
		return 0;
	}
	if (!strcmp(tok[0], "end")) {
		if (nt != 2 || !ns_field(tok[1], &cr->end_ns))
			return cfsbw_sim__replay_fail(&cr->r, cr->line,
						      "expected 'end TIME_NS'");
		return 0;
	}
	return cfsbw_sim__replay_fail(
		&cr->r, cr->line,
		"unknown record '%s' (thread, run, exit, end)", tok[0]);
}

int cfsbw_sim_replay_parse_cfsbw(struct cfsbw_sim_task_spec *t,
				 const char *text, struct cfsbw_sim_error *err)
{
	struct cfsbw_reader cr = {.end_ns = -1};
	char buf[LINE_MAX_CHARS];
	const char *p = text;
	bool too_long;
	int rc = 0;
	cfsbw_sim__replay_init(&cr.r, t, err);
	if (!cfsbw_sim__replay_line(&p, buf, sizeof buf, &cr.line, &too_long) ||
	    strcmp(buf, "cfsbw-trace 1")) {
		rc = cfsbw_sim__replay_fail(
			&cr.r, 1,
			!strncmp(buf, "cfsbw-trace ", 12)
				? "'%s': this cfsbw reads version 1"
				: "'%s': expected 'cfsbw-trace 1'",
			buf);
		goto out;
	}
	while (cfsbw_sim__replay_line(&p, buf, sizeof buf, &cr.line,
				      &too_long)) {
		char *tok[6];
		if (too_long) {
			rc = cfsbw_sim__replay_fail(
				&cr.r, cr.line,
				"line longer than %d characters",
				LINE_MAX_CHARS - 1);
			goto out;
		}
		int nt = cfsbw_sim__replay_split(buf, tok, 6);
		if (nt == 0 || tok[0][0] == '#')
			continue;
		if (nt < 0) {
			rc = cfsbw_sim__replay_fail(&cr.r, cr.line,
						    "too many fields");
			goto out;
		}
		if ((rc = record(&cr, tok, nt)))
			goto out;
	}
	rc = cfsbw_sim__replay_finish(&cr.r, "cfsbw", false);
out:
	cfsbw_sim__replay_done(&cr.r, rc);
	return rc;
}
