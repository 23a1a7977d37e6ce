/*
 * trace_perf.c - `perf sched timehist` text output (perf sched record,
 * then perf sched timehist [--state] > FILE), as a trace to replay:
 *
 *            time    cpu  task name                       wait time  sch delay   run time  state
 *                         [tid/pid]                          (msec)     (msec)     (msec)
 *     --------------- ------  ------------------------------  ---------  ---------  ---------  -----
 *       741.835990 [0000]  sh[28621]                           0.180      0.025      0.571      R
 *
 * Each line is one run of a thread, ending at `time` after `run time`.
 * Before it, the thread was off the CPU for `wait time`, the last `sch
 * delay` of it runnable (woken, waiting for a CPU): the rest was sleep.
 * With --state, R at the end of a run means it was preempted (its next
 * run continues the burst, replay.h), X or Z that it exited; without it,
 * a gap whose wait equals its delay continues the burst too.  `<idle>` is
 * not a thread.  A run of a thread perf could not name (`:-1[-1/PID]`,
 * one that exited before perf saw its name) becomes a thread of its own,
 * that one run: its CPU is kept, its ties to other runs are not known.  The summary that -s or -S adds after a blank line is not
 * read; wake-up and migration lines (-w, -M) are an error.
 */
#include <string.h>

#include "sim/replay.h"

#define LINE_MAX_CHARS 1024
#define MAX_WORDS 32

/*
 * A decimal "741.834822" in units of 10^-digits seconds, as ns:
 * scale_ns is what 1 of the integer part is worth (1e9 for seconds, 1e6
 * for milliseconds).
 */
static bool decimal_ns(const char *s, int64_t scale_ns, int64_t *out)
{
	int64_t whole = 0, frac = 0, div = 1;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > INT64_MAX / 10 / scale_ns)
			return false;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (div < scale_ns) {
				frac = frac * 10 + (*p - '0');
				div *= 10;
			}
	}
	if (*p)
		return false;
	*out = whole * scale_ns + frac * (scale_ns / div);
	return true;
}

/* "comm[tid]" or "comm[tid/pid]": the tid, and the comm cut at '['. */
static bool task_word(char *w, int64_t *tid)
{
	size_t n = strlen(w);
	char *open = strrchr(w, '[');
	if (!n || w[n - 1] != ']' || !open)
		return false;
	w[n - 1] = '\0';
	char *slash = strchr(open + 1, '/');
	if (slash)
		*slash = '\0';
	uint64_t v;
	if (!strcmp(open + 1, "-1")) {
		v = 0; /* perf could not name the thread: -1 */
		*tid = -1;
	} else if (!cfsbw_sim__replay_u64(open + 1, &v) ||
		   v > (uint64_t)INT64_MAX) {
		return false;
	} else {
		*tid = (int64_t)v;
	}
	*open = '\0';
	return true;
}

struct perf_line {
	int64_t time_ns, wait_ns, delay_ns, run_ns;
	int64_t tid;
	const char *comm;
	char state; /* 0: no state column */
};

static int parse_line(struct replay *r, unsigned line, char *buf,
		      struct perf_line *pl)
{
	char *tok[MAX_WORDS];
	int nt = cfsbw_sim__replay_split(buf, tok, MAX_WORDS);
	for (int i = 0; i < nt; i++)
		if (!strcmp(tok[i], "awakened:") || !strcmp(tok[i], "migrated:"))
			return cfsbw_sim__replay_fail(
				r, line,
				"a wake-up or migration line: run "
				"perf sched timehist without -w "
				"and -M");
	if (nt >= 3 && !strcmp(tok[2], "<idle>")) {
		pl->comm = NULL; /* not a thread */
		return 0;
	}
	/* time [cpu] comm words... [tid] wait delay run [state] */
	int name_end = -1;
	for (int i = 2; nt > 0 && i < nt; i++) {
		size_t n = strlen(tok[i]);
		if (n && tok[i][n - 1] == ']' && strchr(tok[i], '[')) {
			name_end = i;
			break;
		}
	}
	int rest = name_end < 0 ? 0 : nt - name_end - 1;
	if (nt < 6 || tok[1][0] != '[' || name_end < 0 || rest < 3 ||
	    rest > 4)
		return cfsbw_sim__replay_fail(
			r, line,
			"expected 'TIME [CPU] COMM[TID] WAIT "
			"DELAY RUN [STATE]'");
	char **num = &tok[name_end + 1];
	if (!decimal_ns(tok[0], 1000000000, &pl->time_ns) ||
	    !decimal_ns(num[0], 1000000, &pl->wait_ns) ||
	    !decimal_ns(num[1], 1000000, &pl->delay_ns) ||
	    !decimal_ns(num[2], 1000000, &pl->run_ns))
		return cfsbw_sim__replay_fail(
			r, line,
			"'%s ... %s %s %s': times are decimals "
			"(seconds, then milliseconds)",
			tok[0], num[0], num[1], num[2]);
	pl->state = rest == 4 ? num[3][0] : 0;
	/* the comm may have blanks: join its words back */
	for (int i = 3; i <= name_end; i++)
		tok[i][-1] = ' ';
	if (!task_word(tok[2], &pl->tid))
		return cfsbw_sim__replay_fail(
			r, line, "'%s': expected COMM[TID]", tok[2]);
	pl->comm = tok[2];
	return 0;
}

int cfsbw_sim_replay_parse_perf(struct cfsbw_sim_task_spec *t, const char *text,
				struct cfsbw_sim_error *err)
{
	struct replay r;
	char buf[LINE_MAX_CHARS];
	const char *p = text;
	unsigned line = 0;
	int64_t unnamed = 0;
	bool too_long, header = false;
	int rc = 0;
	cfsbw_sim__replay_init(&r, t, err);
	while (cfsbw_sim__replay_line(&p, buf, sizeof buf, &line, &too_long)) {
		if (too_long) {
			rc = cfsbw_sim__replay_fail(&r, line,
						    "line longer than %d "
						    "characters",
						    LINE_MAX_CHARS - 1);
			goto out;
		}
		const char *s = buf + strspn(buf, " \t");
		if (!header) {
			/* the column titles end at a line of dashes */
			header = !strncmp(s, "-----", 5);
			continue;
		}
		if (!*s)
			break; /* what follows is a summary */
		struct perf_line pl = {0};
		if ((rc = parse_line(&r, line, buf, &pl)))
			goto out;
		if (!pl.comm)
			continue;
		size_t idx;
		if (pl.tid < 0) /* unnamed: a thread of its own, ids below 0 */
			pl.tid = --unnamed;
		bool known = cfsbw_sim__replay_find_thread(&r, pl.tid, &idx);
		if ((!known || cfsbw_sim__replay_exited(&r, idx)) &&
		    (rc = cfsbw_sim__replay_new_thread(&r, pl.tid, pl.comm,
						       line, &idx)))
			goto out;
		int64_t start = pl.time_ns - pl.run_ns;
		int64_t ready = start - pl.delay_ns;
		bool blocked = pl.state != 'R';
		rc = cfsbw_sim__replay_run(&r, idx, start, pl.time_ns,
					   ready < 0 ? 0 : ready, blocked,
					   line);
		if (rc)
			goto out;
		if (pl.state == 'X' || pl.state == 'Z' || pl.tid < 0)
			cfsbw_sim__replay_exit(&r, idx);
	}
	if (!header) {
		rc = cfsbw_sim__replay_fail(
			&r, line,
			"no header: expected perf sched timehist's "
			"column titles and a line of dashes");
		goto out;
	}
	rc = cfsbw_sim__replay_finish(&r, "perf", true);
out:
	cfsbw_sim__replay_done(&r, rc);
	return rc;
}
