/*
 * cmd_record.c - `cfsbw record`: write each thread's run and sleep
 * intervals of a command or a running process as a cfsbw trace
 * (src/host/record.c; the format in man/cfsbw.1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfsbw.h"
#include "cli/cli.h"
#include "host/record.h"

static const char usage[] =
	"usage: cfsbw record [-o FILE] [--duration D] [--poll] -- CMD [ARG...]\n"
	"       cfsbw record [-o FILE] [--duration D] [--poll] --pid PID\n"
	"\n"
	"Write each thread's run and sleep intervals (nanoseconds, from the\n"
	"kernel's context-switch records) of CMD and everything it starts, or\n"
	"of a running process and the threads and processes it starts, until\n"
	"it exits or for D, as a cfsbw trace that `cfsbw sim` replays.  No root\n"
	"needed: /proc/sys/kernel/perf_event_paranoid at 2 or lower and a\n"
	"process of your own (else it reads CPU clocks every 1 ms).\n"
	"\n"
	"Exit status: CMD's (128 + N if it died of signal N); 2 for bad\n"
	"usage; 1 if recording failed.\n"
	"\n"
	"  -o FILE         the trace (default: standard output)\n"
	"  --duration D    stop recording after D (10s, 500ms); CMD goes on\n"
	"  --pid PID       record this process instead of starting one\n"
	"  --poll          read the threads' CPU clocks every 1 ms instead of\n"
	"                  the kernel's switch records (what cfsbw record does\n"
	"                  when the kernel refuses perf events)\n"
	"\n"
	"example:\n"
	"  cfsbw record -o make.trace -- make -j2\n";

int cli_record_main(int argc, char **argv)
{
	const char *out_path = NULL;
	int64_t duration_ns = 0;
	long pid = 0;
	bool poll = false;
	int i = 1;
	while (i < argc) {
		const char *a = argv[i];
		if (cli_is_help(a, usage))
			return 0;
		if (cli_options_end(argv, &i))
			break;
		if (!strcmp(a, "--poll")) {
			poll = true;
			i++;
			continue;
		}
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (!v)
				return cli_bad_usage("record", "%s needs a file", a);
			out_path = v;
		} else if (!strcmp(a, "--duration")) {
			if (!v)
				return cli_bad_usage("record", "%s needs a duration", a);
			int e = cfsbw_parse_duration(v, CFSBW_NSEC_PER_SEC,
						     &duration_ns);
			if (e || duration_ns <= 0) {
				fprintf(stderr, "cfsbw record: --duration %s: "
					"%s: a positive duration (10s, 500ms; "
					"a bare number is seconds)\n", v,
					strerror(e ? -e : EINVAL));
				return 2;
			}
		} else if (!strcmp(a, "--pid")) {
			if (!v)
				return cli_bad_usage("record", "%s needs a process id", a);
			char *end;
			errno = 0;
			pid = strtol(v, &end, 10);
			if (errno || *end || pid <= 0 || pid > INT32_MAX) {
				fprintf(stderr, "cfsbw record: --pid %s: "
					"Invalid argument: a process id\n", v);
				return 2;
			}
		} else {
			return cli_bad_usage("record", "unknown option '%s'", a);
		}
		i += 2; /* the option and its value */
	}
	char *const *cmd = argv + i;
	if (pid && i < argc)
		return cli_bad_usage("record", "--pid takes no command (got '%s')", argv[i]);
	if (!pid && i >= argc)
		return cli_bad_usage("record", "%s",
				     "no command: cfsbw record [OPTIONS] -- CMD, "
				     "or --pid PID");

	/* the command line, for the trace's header */
	char what[256] = "";
	size_t len = 0;
	if (pid)
		snprintf(what, sizeof what, "%ld", pid);
	for (int k = i; !pid && k < argc && len + 1 < sizeof what; k++) {
		int n = snprintf(what + len, sizeof what - len, "%s%s",
				 k > i ? " " : "", argv[k]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	for (char *p = what; *p; p++)
		if (*p == '\n')
			*p = ' ';

	FILE *out = stdout;
	if (out_path && !(out = fopen(out_path, "w"))) {
		fprintf(stderr, "cfsbw record: -o %s: %s\n", out_path,
			strerror(errno));
		return 2;
	}
	struct cfsbw_host_record_config c = {
		.pid = (pid_t)pid,
		.argv = pid ? NULL : cmd,
		.duration_ns = duration_ns,
		.out = out,
		.what = what,
		.poll = poll,
	};
	struct cfsbw_host_record_result r;
	char err[512];
	int rc = cfsbw_host_record(&c, &r, err, sizeof err);
	if (out != stdout && fclose(out) && !rc) {
		snprintf(err, sizeof err, "-o %s: %s", out_path,
			 strerror(errno));
		rc = -1;
	}
	if (rc) {
		fprintf(stderr, "cfsbw record: %s\n", err);
		return r.exit_status ? r.exit_status : 1;
	}
	if (r.polled && r.note[0])
		fprintf(stderr, "cfsbw record: %s; read CPU clocks every 1 ms "
			"instead\n", r.note);
	if (r.lost)
		fprintf(stderr, "cfsbw record: the kernel dropped %" PRIu64
			" switch records (its buffer was full): the trace "
			"misses some runs\n", r.lost);
	fprintf(stderr, "cfsbw record: %" PRIu64 " thread%s, %" PRIu64
		" run%s, %.3f s of CPU in %.3f s",
		r.threads, r.threads == 1 ? "" : "s", r.runs,
		r.runs == 1 ? "" : "s", (double)r.recorded_cpu_ns / 1e9,
		(double)r.length_ns / 1e9);
	/* what the trace holds of what the kernel counted: a process's
	 * exit goes on after its last record, unrecorded */
	if (r.tree_cpu_ns > 0)
		fprintf(stderr, " (%.1f%% of the %.3f s the kernel counted)",
			100.0 * (double)r.recorded_cpu_ns /
				(double)r.tree_cpu_ns,
			(double)r.tree_cpu_ns / 1e9);
	fprintf(stderr, "; own CPU %.3f s (%.2f%%)\n",
		(double)r.own_cpu_ns / 1e9,
		r.recorded_cpu_ns
			? 100.0 * (double)r.own_cpu_ns /
				  (double)r.recorded_cpu_ns
			: 0.0);
	return pid ? 0 : r.exit_status;
}
