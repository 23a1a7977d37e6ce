/*
 * sim_sweep.c - `cfsbw sim --sweep [GROUP:]FILE=FROM:TO:STEP`: one run
 * per value of one group file, spread over the machine's CPUs in forked
 * workers, printed in value order (each run is deterministic, so the
 * output does not depend on which worker ran what).  Per value: the
 * group's use, its throttled periods, its throttled time, and per line
 * with latencies the p50, p99 and p99.9 added against the same scenario
 * with the group unlimited (or, for a replay, when it finished).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/sim_sweep.h"

#define MAX_VALUES 1000

const char *cli_fmt_ms(char *buf, size_t size, int64_t ns, bool sign)
{
	const char *s = ns < 0 ? "-" : sign ? "+" : "";
	uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	uint64_t us = (a + 500) / 1000;
	snprintf(buf, size, "%s%" PRIu64 ".%03" PRIu64, s, us / 1000, us % 1000);
	return buf;
}

/* Write all of buf to fd. */
static bool write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* What a job wrote to standard error, at most this much of it. */
#define JOB_MSG 1024

struct job_result {
	uint32_t index;
	int32_t status;
	struct cfsbw_sim_point point;
	char msg[JOB_MSG];
};

/*
 * A worker's standard error goes to a file of its own, read back after
 * each job and sent with the result: the parent prints a message once and
 * in order, where the workers, each meeting the same bad value or file,
 * would print it once each in whatever order they got there.  The parent
 * makes the file and keeps it open, so that what a worker wrote before it
 * died (a sanitizer's report, say) is still there to print.  Returns the
 * file's descriptor (-1: no file, the worker writes to standard error).
 */
static int catch_file(void)
{
	FILE *f = tmpfile();
	if (!f)
		return -1;
	int fd = dup(fileno(f));
	fclose(f);
	return fd;
}

/* What the job wrote since the last call, into msg; the file emptied. */
static void take_caught(int fd, char *msg, size_t size)
{
	fflush(stderr);
	ssize_t got = pread(fd, msg, size - 1, 0);
	msg[got > 0 ? (size_t)got : 0] = '\0';
	if (ftruncate(fd, 0) == 0)
		(void)lseek(fd, 0, SEEK_SET);
}

/* All the file holds, to standard error. */
static void print_caught(int fd)
{
	char buf[4096];
	ssize_t got;
	for (off_t at = 0; (got = pread(fd, buf, sizeof buf, at)) > 0;
	     at += got)
		fwrite(buf, 1, (size_t)got, stderr);
}

/* One worker's pipe, as the parent reads it: a result may arrive in
 * pieces, between which other workers' come in. */
struct worker_pipe {
	int fd; /* -1: closed */
	int caught; /* its standard error (catch_file); -1: none */
	size_t next; /* the next run it will report */
	bool stopped;
	int wait_status; /* as waitpid() gave it */
	size_t got;
	struct job_result r;
};

/* "cfsbw LABEL: 3 of 21 done" on a terminal's standard error, at most ten times a
 * second, so that a long sweep or plan shows it is getting on; erased
 * once all are in.  Nothing when standard error is a file or a pipe. */
static void progress(const char *label, size_t done, size_t n,
		     int64_t *last_ns)
{
	if (!label || !isatty(STDERR_FILENO))
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (done == n) {
		if (*last_ns)
			fputs("\r\033[K", stderr);
		*last_ns = 0;
		return;
	}
	if (*last_ns && now - *last_ns < 100000000)
		return;
	*last_ns = now;
	fprintf(stderr, "\rcfsbw %s: %zu of %zu done\033[K", label, done, n);
}

size_t cli_parallel_workers(size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t workers = cpus < 1 ? 1 : (size_t)cpus;
	if (workers > n)
		workers = n;
	return workers > 64 ? 64 : workers;
}

int cli_parallel(size_t n, cli_job_fn *job, void *ctx,
		 struct cfsbw_sim_point *out, const char *label)
{
	size_t workers = cli_parallel_workers(n);
	struct worker_pipe *wp = calloc(workers ? workers : 1, sizeof(*wp));
	struct pollfd *pfd = calloc(workers ? workers : 1, sizeof(*pfd));
	bool *seen = calloc(n ? n : 1, sizeof(*seen));
	char(*msgs)[JOB_MSG] = calloc(n ? n : 1, sizeof(*msgs));
	pid_t pids[64];
	int status = 0;
	if (!wp || !pfd || !seen || !msgs) {
		free(wp);
		free(pfd);
		free(seen);
		free(msgs);
		fprintf(stderr, "cfsbw: out of memory\n");
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	for (size_t w = 0; w < workers; w++) {
		int p[2] = {-1, -1};
		wp[w].caught = catch_file();
		if (pipe(p) || (pids[w] = fork()) < 0) {
			fprintf(stderr, "cfsbw: cannot start a worker: %s\n",
				strerror(errno));
			for (int e = 0; e < 2; e++)
				if (p[e] >= 0)
					close(p[e]);
			if (wp[w].caught >= 0)
				close(wp[w].caught);
			workers = w;
			status = 1;
			break;
		}
		if (pids[w] == 0) { /* the worker: values w, w + workers, ... */
			close(p[0]);
			int caught = wp[w].caught;
			if (caught >= 0 && dup2(caught, STDERR_FILENO) < 0)
				caught = -1;
			struct job_result *r = malloc(sizeof *r);
			if (!r)
				_exit(1);
			for (size_t i = w; i < n; i += workers) {
				memset(r, 0, sizeof *r);
				r->index = (uint32_t)i;
				r->status = job(i, ctx, &r->point);
				if (caught >= 0)
					take_caught(caught, r->msg,
						    sizeof r->msg);
				if (!write_all(p[1], r, sizeof *r) || r->status)
					_exit(r->status ? r->status : 1);
			}
			_exit(0);
		}
		close(p[1]);
		wp[w].fd = p[0];
		wp[w].next = w;
	}
	/* results as they come, from whichever worker has one */
	int first_bad = -1;
	size_t open = workers, done = 0;
	int64_t shown = 0;
	while (open > 0) {
		size_t np = 0;
		for (size_t w = 0; w < workers; w++)
			if (wp[w].fd >= 0)
				pfd[np++] = (struct pollfd){wp[w].fd, POLLIN, 0};
		if (poll(pfd, np, -1) < 0) {
			if (errno == EINTR)
				continue;
			status = 1;
			break;
		}
		for (size_t w = 0, k = 0; w < workers; w++) {
			if (wp[w].fd < 0)
				continue;
			if (!(pfd[k++].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct worker_pipe *x = &wp[w];
			ssize_t got = read(x->fd, (char *)&x->r + x->got,
					   sizeof x->r - x->got);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(x->fd);
				x->fd = -1;
				open--;
				continue;
			}
			x->got += (size_t)got;
			if (x->got < sizeof x->r)
				continue;
			x->got = 0;
			struct job_result *r = &x->r;
			if (r->index >= n)
				continue;
			if (r->status &&
			    (first_bad < 0 || (int)r->index < first_bad)) {
				first_bad = (int)r->index;
				status = r->status;
			}
			x->next = r->index + workers;
			/* a failed run fails the whole: a worker whose runs
			 * left all come after the first failure is stopped,
			 * the others go on to it, so that the failure shown
			 * is always the first run's that fails */
			for (size_t v = 0; first_bad >= 0 && v < workers; v++)
				if (wp[v].fd >= 0 && !wp[v].stopped &&
				    wp[v].next > (size_t)first_bad) {
					kill(pids[v], SIGKILL);
					wp[v].stopped = true;
				}
			memcpy(msgs[r->index], r->msg, sizeof r->msg);
			out[r->index] = r->point;
			done += !seen[r->index];
			seen[r->index] = true;
			progress(label, done, n, &shown);
		}
	}
	for (size_t w = 0; w < workers; w++)
		if (wp[w].fd >= 0)
			close(wp[w].fd);
	progress(label, n, n, &shown);
	free(pfd);
	for (size_t w = 0; w < workers; w++) {
		int st = 0;
		while (waitpid(pids[w], &st, 0) < 0 && errno == EINTR)
			;
		wp[w].wait_status = st;
	}
	/* what a worker wrote in a job it did not finish, unless it was
	 * stopped: the last words of one that died */
	for (size_t w = 0; w < workers; w++) {
		if (wp[w].caught < 0)
			continue;
		if (!wp[w].stopped)
			print_caught(wp[w].caught);
		close(wp[w].caught);
	}
	/* what the runs said: a failure's message alone, else each
	 * message once, in the order of the runs */
	if (first_bad >= 0) {
		fputs(msgs[first_bad], stderr);
	} else {
		for (size_t i = 0; i < n; i++) {
			bool said = false;
			for (size_t j = 0; j < i && !said && msgs[i][0]; j++)
				said = !strcmp(msgs[j], msgs[i]);
			if (!said)
				fputs(msgs[i], stderr);
		}
	}
	free(msgs);
	for (size_t i = 0; !status && i < n; i++)
		if (!seen[i]) {
			int st = wp[i % workers].wait_status;
			fprintf(stderr, "cfsbw %s: the worker of run %zu died "
					"before it (%s %d)\n",
				label ? label : "sim", i,
				WIFSIGNALED(st) ? "signal" : "exit status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			status = 1;
		}
	free(wp);
	free(seen);
	return status;
}

/* FROM:TO:STEP (durations for *_us files, else integers) or V1,V2,... */
/* The values of s (a range or a list) into values[*n]; on error, what
 * is wrong in why. */
static int expand(const struct cli_set *s, char (*values)[64], size_t *n,
		  char *why, size_t why_size)
{
	char text[64], *colon = strchr(s->value, ':');
	*n = 0;
	if (!colon) {
		snprintf(text, sizeof text, "%s", s->value);
		for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
			if (*n == MAX_VALUES) {
				snprintf(why, why_size,
					 "more than %d values", MAX_VALUES);
				return -1;
			}
			if (!cli_set_value(s->file, tok, values[*n], 64)) {
				snprintf(why, why_size, "'%s' is not a value", tok);
				return -1;
			}
			(*n)++;
		}
		snprintf(why, why_size, "no value");
		return *n ? 0 : -1;
	}
	char from[64], to[64], step[64];
	snprintf(text, sizeof text, "%s", s->value);
	char *a = strtok(text, ":"), *b = strtok(NULL, ":"),
	     *c = strtok(NULL, ":");
	if (!a || !b || !c || strtok(NULL, ":")) {
		snprintf(why, why_size, "a range has three parts");
		return -1;
	}
	const char *parts[3] = {a, b, c};
	char *out[3] = {from, to, step};
	for (int i = 0; i < 3; i++)
		if (!cli_set_value(s->file, parts[i], out[i], 64)) {
			snprintf(why, why_size, "'%s' is not a value", parts[i]);
			return -1;
		}
	char *e1, *e2, *e3;
	long long f = strtoll(from, &e1, 10), t = strtoll(to, &e2, 10),
		  st = strtoll(step, &e3, 10);
	if (*e1 || *e2 || *e3) {
		snprintf(why, why_size, "a range is of whole numbers");
		return -1;
	}
	if (st <= 0 || t < f) {
		snprintf(why, why_size, st <= 0 ? "STEP is not above 0"
						: "FROM is above TO");
		return -1;
	}
	if ((t - f) / st >= MAX_VALUES) {
		snprintf(why, why_size, "%lld values, at most %d",
			 (t - f) / st + 1, MAX_VALUES);
		return -1;
	}
	for (long long v = f; v <= t; v += st)
		snprintf(values[(*n)++], 64, "%lld", v);
	return 0;
}

struct sweep {
	const struct cli_sim_opts *o;
	struct cli_set target;       /* group resolved, value per run */
	char (*values)[64];
	size_t n;
};

/* Run 0: the group unlimited; run i: the i-th value. */
static int sweep_job(size_t i, void *ctx, struct cfsbw_sim_point *out)
{
	struct sweep *sw = ctx;
	struct cli_set set = sw->target;
	if (i == 0) {
		snprintf(set.file, sizeof set.file, "cpu.cfs_quota_us");
		snprintf(set.value, sizeof set.value, "-1");
	} else {
		snprintf(set.value, sizeof set.value, "%s", sw->values[i - 1]);
	}
	struct cfsbw_sim_scenario sc;
	int rc = cli_sim_prepare(sw->o, &set, 1, &sc);
	if (!rc) {
		struct cli_run how = {.group = sw->target.group};
		rc = cli_sim_run(sw->o, &sc, &how, out);
	}
	cfsbw_sim_scenario_free(&sc);
	return rc;
}

/* A line's latency columns: under "line N: +p50 ms", its label's width,
 * and room for ten thousand seconds late ("+10842.026") in the others. */
#define P99_WIDTH 11
#define P999_WIDTH 11
static size_t p50_width(unsigned line)
{
	char label[48];
	int n = snprintf(label, sizeof label, "line %u: +p50 ms", line);
	return n > 0 ? (size_t)n : 0;
}

size_t cli_shown_lines(const struct cfsbw_sim_point *p)
{
	return p->nr_lines < CLI_TABLE_LINES ? p->nr_lines : CLI_TABLE_LINES;
}

/* Under a table that could not show every line: how many it shows, and
 * how many --json does. */
static void print_lines_note(const struct sweep *sw,
			     const struct cfsbw_sim_point *base)
{
	printf("(the first %u of the %zu task lines with latencies under %s: "
	       "the table shows at most %u, ",
	       CLI_TABLE_LINES, base->nr_lines_all, sw->target.group,
	       CLI_TABLE_LINES);
	if (base->nr_lines_all > base->nr_lines)
		printf("--json the first %u)\n", CFSBW_SIM_POINT_MAX_LINES);
	else
		printf("--json all of them)\n");
}

static void print_header(const struct sweep *sw,
			 const struct cfsbw_sim_point *base)
{
	printf("%-18s %10s %12s %12s", sw->target.file, "cores",
	       "throttled %", "throttled s");
	for (size_t l = 0; l < cli_shown_lines(base); l++) {
		const struct cfsbw_sim_point_line *bl = &base->lines[l];
		if (bl->count)
			printf("  line %u: +p50 ms %*s %*s", bl->line,
			       P99_WIDTH, "+p99 ms", P999_WIDTH, "+p99.9 ms");
		else
			printf("  line %u: done s (+ s)", bl->line);
	}
	putchar('\n');
}

static void print_row(const char *value, const struct cfsbw_sim_point *p,
		      const struct cfsbw_sim_point *base)
{
	char a[32], b[32], c[32];
	int64_t micro = cfsbw_sim_cores_micro(p->usage_ns, p->span_ns);
	int64_t bp = cfsbw_sim_point_throttled_bp(p);
	printf("%-18s %3" PRId64 ".%06" PRId64 " %9" PRId64 ".%02" PRId64
	       " %12s",
	       value, micro / 1000000, micro % 1000000, bp / 100, bp % 100,
	       cli_fmt_ms(a, sizeof a, p->throttled_time_ns / 1000, false));
	for (size_t l = 0; l < p->nr_lines && l < cli_shown_lines(base); l++) {
		const struct cfsbw_sim_point_line *pl = &p->lines[l],
						  *bl = &base->lines[l];
		if (bl->count)
			printf("  %*s %*s %*s",
			       (int)p50_width(bl->line),
			       cli_fmt_ms(a, sizeof a, pl->p50_ns - bl->p50_ns, true),
			       P99_WIDTH,
			       cli_fmt_ms(b, sizeof b, pl->p99_ns - bl->p99_ns, true),
			       P999_WIDTH,
			       cli_fmt_ms(c, sizeof c, pl->p999_ns - bl->p999_ns,
					  true));
		else
			printf("  %12s (%s)",
			       cli_fmt_ms(a, sizeof a, pl->last_exit_ns / 1000,
					  false),
			       cli_fmt_ms(b, sizeof b,
					  (pl->last_exit_ns - bl->last_exit_ns) /
						  1000,
					  true));
	}
	putchar('\n');
}

/* One point as a JSON object: the group's figures, then its lines with
 * what the limit added against the unlimited run. */
void cli_json_point(const char *value, const struct cfsbw_sim_point *p,
		    const struct cfsbw_sim_point *base)
{
	int64_t micro = cfsbw_sim_cores_micro(p->usage_ns, p->span_ns);
	int64_t bp = cfsbw_sim_point_throttled_bp(p);
	printf("  {\"value\": \"%s\", \"usage\": %" PRId64 ".%06" PRId64
	       ", \"span_ns\": %" PRId64 ", \"nr_periods\": %" PRIu64
	       ", \"nr_throttled\": %" PRIu64 ", \"throttled_pct\": %" PRId64
	       ".%02" PRId64 ", \"throttled_time_ns\": %" PRId64
	       ", \"lines\": [",
	       value, micro / 1000000, micro % 1000000, p->span_ns,
	       p->nr_periods, p->nr_throttled, bp / 100, bp % 100,
	       p->throttled_time_ns);
	for (size_t l = 0; l < p->nr_lines && l < base->nr_lines; l++) {
		const struct cfsbw_sim_point_line *a = &p->lines[l],
						  *b = &base->lines[l];
		printf("%s{\"line\": %u, \"count\": %" PRIu64
		       ", \"p50_ns\": %" PRId64 ", \"p99_ns\": %" PRId64
		       ", \"p999_ns\": %" PRId64 ", \"added_p50_ns\": %" PRId64
		       ", \"added_p99_ns\": %" PRId64
		       ", \"added_p999_ns\": %" PRId64 ", \"exited\": %" PRIu64
		       ", \"last_exit_ns\": %" PRId64
		       ", \"added_last_exit_ns\": %" PRId64 "}",
		       l ? ", " : "", a->line, a->count, a->p50_ns, a->p99_ns,
		       a->p999_ns, a->p50_ns - b->p50_ns, a->p99_ns - b->p99_ns,
		       a->p999_ns - b->p999_ns, a->exited, a->last_exit_ns,
		       a->last_exit_ns - b->last_exit_ns);
	}
	printf("]}");
}

/* --sweep --json: one object, the unlimited run and one per value. */
static void print_json(const struct sweep *sw,
		       const struct cfsbw_sim_scenario *sc,
		       const struct cfsbw_sim_point *pts)
{
	char fp[16];
	printf("{\"group\": \"%s\", \"file\": \"%s\", \"scheduler\": "
	       "\"%s\", \"balance_load\": \"%s\", \"wake_scan\": \"%s\", "
	       "\"first_period\": \"%s\", \"unlimited\":\n",
	       sw->target.group, sw->target.file,
	       cfsbw_sim_scheduler_name(sc->scheduler),
	       cfsbw_sim_balance_load_name(sc->balance_load),
	       cfsbw_sim_wake_scan_name(sc->wake_scan),
	       cfsbw_sim_first_period_text(sc->first_period, fp, sizeof fp));
	cli_json_point("-1", &pts[0], &pts[0]);
	printf(",\n \"lines_not_shown\": %zu",
	       pts[0].nr_lines_all - pts[0].nr_lines);
	printf(",\n \"values\": [\n");
	for (size_t i = 0; i < sw->n; i++) {
		cli_json_point(sw->values[i], &pts[i + 1], &pts[0]);
		printf("%s\n", i + 1 < sw->n ? "," : "");
	}
	printf("]}\n");
}

static double added_ms(const struct cfsbw_sim_point_line *pl,
		       const struct cfsbw_sim_point_line *bl)
{
	if (bl->count)
		return (double)(pl->p99_ns - bl->p99_ns) / 1e6;
	return (double)(pl->last_exit_ns - bl->last_exit_ns) / 1e6;
}

/*
 * The sweep as curves: throttled periods, then per task line (the first
 * CLI_TABLE_LINES, as the table) the added p99 latency, the lines with
 * latencies in one panel, and replays' added time to finish in another.
 */
static int draw(const struct sweep *sw, const struct cfsbw_sim_scenario *sc,
		const struct cfsbw_sim_point *pts, const char *path)
{
	const struct cfsbw_sim_point *base = &pts[0];
	size_t nl = cli_shown_lines(base);
	double *x = calloc(sw->n, sizeof(*x)),
	       *y = calloc(sw->n * (nl + 1), sizeof(*y));
	struct cli_svg_series series[CLI_TABLE_LINES + 1];
	char titles[CLI_TABLE_LINES][128];
	int rc = 1;
	if (!x || !y)
		goto out;
	for (size_t i = 0; i < sw->n; i++) {
		x[i] = strtod(sw->values[i], NULL);
		y[i] = (double)cfsbw_sim_point_throttled_bp(&pts[i + 1]) / 100;
	}
	series[0] = (struct cli_svg_series){"throttled periods",
					     "throttled periods", "%", y};
	size_t k = 1;
	for (int timed = 1; timed >= 0; timed--) /* latencies, then ends */
		for (size_t l = 0; l < nl; l++) {
			if ((base->lines[l].count > 0) != timed)
				continue;
			const char *axis = timed ? "added p99 latency"
						 : "added time to finish";
			double *yl = y + k * sw->n;
			for (size_t i = 0; i < sw->n; i++)
				yl[i] = l < pts[i + 1].nr_lines
						? added_ms(&pts[i + 1].lines[l],
							   &base->lines[l])
						: NAN;
			char *t = titles[k - 1];
			const char *what = "?";
			for (size_t ti = 0; ti < sc->nr_tasks; ti++)
				if (sc->tasks[ti].line == base->lines[l].line)
					what = sc->tasks[ti].text;
			snprintf(t, sizeof titles[0], "%s, line %u (%.60s)",
				 axis, base->lines[l].line, what);
			series[k] = (struct cli_svg_series){t, axis, "ms", yl};
			k++;
		}
	char title[512];
	snprintf(title, sizeof title, "%s %s", sw->target.group,
		 sw->target.file);
	rc = cli_svg_sweep_write(path, title, sw->target.file, x, sw->n,
				 series, k);
out:
	free(x);
	free(y);
	return rc;
}

int cli_sweep_main(const struct cli_sim_opts *o, const char *arg,
		   const char *svg, bool json)
{
	struct sweep sw = {.o = o};
	struct cfsbw_sim_scenario sc;
	if (cli_set_parse("sim", "--sweep", arg, &sw.target))
		return 2;
	sw.values = calloc(MAX_VALUES, sizeof(*sw.values));
	if (!sw.values)
		return 1;
	int status = 2;
	char why[128];
	if (expand(&sw.target, sw.values, &sw.n, why, sizeof why)) {
		fprintf(stderr,
			"cfsbw sim: --sweep '%s': %s: expected FILE=FROM:TO:STEP "
			"(FROM <= TO, STEP > 0, at most %d values; durations for "
			"*_us files) or FILE=V1,V2,...\n",
			arg, why, MAX_VALUES);
		goto out;
	}
	/* check the scenario once, and name the group for the workers */
	if ((status = cli_sim_prepare(o, NULL, 0, &sc)))
		goto out_sc;
	const char *g = cli_set_group(&sw.target, &sc);
	if (!g) {
		char groups[256];
		cli_groups_text(&sc, groups, sizeof groups);
		fprintf(stderr,
			"cfsbw sim: --sweep %s: name the group (GROUP:FILE=...): "
			"the scenario has %s\n",
			arg, groups);
		status = 2;
		goto out_sc;
	}
	if (g != sw.target.group)
		snprintf(sw.target.group, sizeof sw.target.group, "%s", g);
	struct cfsbw_sim_point *pts = calloc(sw.n + 1, sizeof(*pts));
	if (!pts) {
		status = 1;
		goto out_sc;
	}
	status = cli_parallel(sw.n + 1, sweep_job, &sw, pts, "sim --sweep");
	size_t workers = cli_parallel_workers(sw.n + 1);
	/* the model, where it is not the default */
	char model[96];
	if (!status && !json)
		printf("sweep of %s %s: %zu value%s, %zu worker%s%s; "
		       "latency added against the same runs with %s "
		       "unlimited\n",
		       sw.target.group, sw.target.file, sw.n,
		       sw.n == 1 ? "" : "s", workers, workers == 1 ? "" : "s",
		       cfsbw_sim_model_text(&sc, true, model, sizeof model),
		       sw.target.group);
	if (!status) {
		if (json) {
			print_json(&sw, &sc, pts);
		} else {
			print_header(&sw, &pts[0]);
			print_row("unlimited", &pts[0], &pts[0]);
			for (size_t i = 0; i < sw.n; i++)
				print_row(sw.values[i], &pts[i + 1], &pts[0]);
			if (pts[0].nr_lines_all > CLI_TABLE_LINES)
				print_lines_note(&sw, &pts[0]);
		}
		if (svg && draw(&sw, &sc, pts, svg))
			status = 1;
	}
	free(pts);
out_sc:
	cfsbw_sim_scenario_free(&sc);
out:
	free(sw.values);
	return status;
}
