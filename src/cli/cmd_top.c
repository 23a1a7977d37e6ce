/*
 * cmd_top.c - cfsbw top: a live table of the daemon's groups over its
 * socket (no FUSE needed): the CPU each group uses, in cores, against its
 * limit, the share of its periods that were throttled, its throttled time
 * and its processes.  Refreshes every second; q quits.  With -n COUNT (or
 * when stdout is not a terminal) it prints COUNT tables one after the
 * other, for scripts and logs.
 *
 * Rates are differences between two "stat" replies divided by the time
 * between them; the first table, with nothing to compare, shows the
 * figures since each group's start.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "daemon/daemon.h"

static const char top_usage[] =
	"usage: cfsbw top [--socket PATH] [-n COUNT] [-d SECONDS]\n"
	"\n"
	"A live table of cfsbw daemon's groups: CPU used (cores) against the\n"
	"limit, throttled periods (%), throttled time, processes.  q quits.\n"
	"  -n COUNT    print COUNT tables, then exit (default: until q)\n"
	"  -d SECONDS  between tables (default 1)\n";

#define MAX_GROUPS 4096

struct row {
	char path[256];
	long long quota_us, period_us, nr_periods, nr_throttled, throttled_ns,
		usage_ns;
	unsigned nr_procs;
};

struct snapshot {
	struct row *rows;
	unsigned nr;
	double t;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int take(int fd, struct snapshot *s)
{
	char *reply = NULL;
	int st = cfsbw_daemon_call(fd, "stat", &reply);
	if (st) {
		free(reply);
		return st < 0 ? st : -st;
	}
	s->t = now_s();
	s->nr = 0;
	for (char *line = reply; line && *line && s->nr < MAX_GROUPS;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		struct row *r = &s->rows[s->nr];
		if (line[0] != '#' &&
		    sscanf(line, "%255s %lld %lld %lld %lld %lld %lld %u", r->path,
			   &r->quota_us, &r->period_us, &r->nr_periods,
			   &r->nr_throttled, &r->throttled_ns, &r->usage_ns,
			   &r->nr_procs) == 8)
			s->nr++;
		line = nl ? nl + 1 : NULL;
	}
	free(reply);
	return 0;
}

static const struct row *find(const struct snapshot *s, const char *path)
{
	for (unsigned i = 0; i < s->nr; i++)
		if (!strcmp(s->rows[i].path, path))
			return &s->rows[i];
	return NULL;
}

static void print_table(const struct snapshot *cur, const struct snapshot *prev,
			bool tty)
{
	if (tty)
		fputs("\033[H\033[2J", stdout);
	printf("cfsbw top: %u groups%s\n\n", cur->nr,
	       tty ? "   (q quits)" : "");
	printf("%-32s %8s %8s %7s %11s %6s\n", "GROUP", "CPU", "LIMIT",
	       "THR%", "THROTTLED", "PROCS");
	for (unsigned i = 0; i < cur->nr; i++) {
		const struct row *r = &cur->rows[i];
		const struct row *p = prev ? find(prev, r->path) : NULL;
		double dt = p ? cur->t - prev->t : 0;
		long long du = p ? r->usage_ns - p->usage_ns : r->usage_ns;
		long long dp = p ? r->nr_periods - p->nr_periods : r->nr_periods;
		long long dthr = p ? r->nr_throttled - p->nr_throttled
				   : r->nr_throttled;
		char limit[16], cpu[16], thr[16];
		if (r->quota_us < 0)
			snprintf(limit, sizeof limit, "max");
		else
			snprintf(limit, sizeof limit, "%.2f",
				 (double)r->quota_us / (double)r->period_us);
		if (dt > 0)
			snprintf(cpu, sizeof cpu, "%.2f", (double)du / 1e9 / dt);
		else
			snprintf(cpu, sizeof cpu, "-");
		if (dp > 0)
			snprintf(thr, sizeof thr, "%.0f%%",
				 100.0 * (double)dthr / (double)dp);
		else
			snprintf(thr, sizeof thr, "-");
		printf("%-32s %8s %8s %7s %10.1fs %6u\n", r->path, cpu, limit,
		       thr, (double)r->throttled_ns / 1e9, r->nr_procs);
	}
	fflush(stdout);
}

int cli_top_main(int argc, char **argv)
{
	const char *sock = NULL;
	long count = -1;
	double delay = 1;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i], top_usage))
			return 0;
		char *end = NULL;
		if (i + 1 < argc && !strcmp(argv[i], "--socket"))
			sock = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "-n"))
			count = strtol(argv[++i], &end, 10);
		else if (i + 1 < argc && !strcmp(argv[i], "-d"))
			delay = strtod(argv[++i], &end);
		else {
			fprintf(stderr, "cfsbw top: unknown option '%s'\n%s",
				argv[i], top_usage);
			return 2;
		}
		if (end && (*end || count == 0 || delay < 0.1 || delay > 3600)) {
			fprintf(stderr, "cfsbw top: %s '%s': -n takes a count "
					"of 1 or more, -d 0.1 to 3600 seconds\n",
				argv[i - 1], argv[i]);
			return 2;
		}
	}
	char sock_buf[4096];
	int fd = cli_connect_daemon("top", sock, sock_buf, sizeof sock_buf,
				    &sock);
	if (fd < 0)
		return 1;
	bool tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && count < 0;
	struct termios saved;
	if (tty && tcgetattr(STDIN_FILENO, &saved) == 0) {
		struct termios raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	} else {
		tty = false;
	}
	static struct row rows[2][MAX_GROUPS];
	struct snapshot snaps[2] = {{rows[0], 0, 0}, {rows[1], 0, 0}};
	int rc = 0;
	for (long n = 0; count < 0 || n < count; n++) {
		struct snapshot *cur = &snaps[n % 2], *prev = &snaps[(n + 1) % 2];
		int err = take(fd, cur);
		if (err) {
			fprintf(stderr, "cfsbw top: %s: %s\n", sock,
				strerror(-err));
			rc = 1;
			break;
		}
		print_table(cur, n ? prev : NULL, tty);
		if (!tty && count >= 0 && n + 1 == count)
			break;
		if (!tty)
			putchar('\n');
		/* Wait for the next table, or q. */
		struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
		int ms = (int)(delay * 1000);
		if (tty && poll(&pfd, 1, ms) > 0) {
			char c = 0;
			if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
				break;
		} else if (!tty) {
			usleep((useconds_t)ms * 1000);
		}
	}
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
		putchar('\n');
	}
	close(fd);
	return rc;
}
