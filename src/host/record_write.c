/*
 * record_write.c - `cfsbw record`'s trace, written at the end: the lines
 * sorted by start (thread before run before exit at the same time), in
 * the cfsbw trace format (man/cfsbw.1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cfsbw.h"
#include "host/record.h"
#include "host/record_int.h"

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->thread > y->thread) - (x->thread < y->thread);
}

int cfsbw_host__record_write(struct recorder *rec,
			     const struct cfsbw_host_record_config *c,
			     int64_t end_ns, struct cfsbw_host_record_result *r)
{
	FILE *f = c->out;
	char host[256] = "-";
	gethostname(host, sizeof host - 1);
	if (rec->nr_lines)
		qsort(rec->lines, rec->nr_lines, sizeof *rec->lines, cmp_line);
	fprintf(f, "cfsbw-trace 1\n# recorded by cfsbw %s on %s, %ld CPUs, "
		"%s: %s\n", CFSBW_VERSION, host,
		sysconf(_SC_NPROCESSORS_ONLN), c->pid ? "process" : "command",
		c->what ? c->what : "-");
	if (rec->polling)
		fprintf(f, "# CPU clocks read every 1 ms (no perf events): "
			"times within 1 ms\n");
	if (rec->perf.lost)
		fprintf(f, "# the kernel dropped %llu switch records: some "
			"runs are missing\n", (unsigned long long)rec->perf.lost);
	for (size_t i = 0; i < rec->nr_lines; i++) {
		const struct line *l = &rec->lines[i];
		const struct thread *th = &rec->threads[l->thread];
		switch ((enum line_kind)l->kind) {
		case L_THREAD: {
			char comm[16];
			snprintf(comm, sizeof comm, "%s", th->comm[0] ? th->comm : "-");
			for (char *p = comm; *p; p++)
				if (*p == ' ' || *p == '\t' || *p == '\n' ||
				    *p == '#')
					*p = '_';
			fprintf(f, "thread %d %d %s\n", (int)th->tid,
				(int)th->pid, comm);
			r->threads++;
			break;
		}
		case L_RUN:
			fprintf(f, "run %d %lld %lld%s\n", (int)th->tid,
				(long long)l->start_ns, (long long)l->end_ns,
				l->preempted ? " P" : "");
			r->runs++;
			r->recorded_cpu_ns += l->end_ns - l->start_ns;
			break;
		case L_EXIT:
			fprintf(f, "exit %d %lld\n", (int)th->tid,
				(long long)l->start_ns);
			break;
		}
	}
	/* for a reader weighing the replay: what the runs leave out */
	if (r->tree_cpu_ns > 0)
		fprintf(f, "# the kernel counted %lld ns of CPU for the "
			"command's processes (wait4); the runs hold %.1f%% (a "
			"process's exit goes on after its last record)\n",
			(long long)r->tree_cpu_ns,
			100.0 * (double)r->recorded_cpu_ns /
				(double)r->tree_cpu_ns);
	fprintf(f, "end %lld\n", (long long)end_ns);
	return fflush(f) || ferror(f) ? -1 : 0;
}

