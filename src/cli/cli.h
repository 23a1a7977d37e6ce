/*
 * cli.h - the cfsbw command's subcommands.  Each takes the arguments after
 * its own name (argv[0] is the subcommand) and returns the process's exit
 * status: 0 success, 2 bad usage or input, otherwise as documented.
 */
#ifndef CFSBW_CLI_H
#define CFSBW_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

int cli_run_main(int argc, char **argv);  /* cfsbw run: src/cli/cmd_run.c */
int cli_sim_main(int argc, char **argv);  /* cfsbw sim: src/cli/cmd_sim.c */
int cli_plan_main(int argc, char **argv); /* cfsbw plan: src/cli/cmd_plan.c */
int cli_record_main(int argc, char **argv); /* src/cli/cmd_record.c */
int cli_demo_main(int argc, char **argv); /* cfsbw demo: src/cli/cmd_demo.c */
int cli_daemon_main(int argc, char **argv); /* src/cli/cmd_daemon.c */
int cli_ctl_main(int argc, char **argv);    /* src/cli/cmd_ctl.c */
int cli_top_main(int argc, char **argv);    /* src/cli/cmd_top.c */
/* cfsbw run --group: src/cli/cmd_run_group.c */
int cli_run_group(const char *group, const char *socket, char **argv);

/* ---- what the commands share: src/cli/common.c ------------------------- */

/*
 * "cfsbw CMD: MESSAGE" and the hint "(cfsbw CMD --help for the options)"
 * on stderr; returns 2, the exit status of bad usage.
 */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
int cli_bad_usage(const char *cmd, const char *fmt, ...);

/* true, after usage on stdout, when arg is -h or --help. */
bool cli_is_help(const char *arg, const char *usage);

/*
 * For a command whose options come before CMD [ARG...]: true when argv[*i]
 * ends the options, being "--" (then *i moves past it) or a word that is
 * not an option ("-" alone is a word).
 */
bool cli_options_end(char **argv, int *i);

/* An option that takes a value: its name and where the value is kept. */
struct cli_opt {
	const char *name;
	const char **value;
};

/* Where the value of option name goes, from opts (ended by a NULL name). */
const char **cli_opt_value(const struct cli_opt *opts, const char *name);

/*
 * Connects to cfsbw daemon at sock, or at its default socket when sock is
 * NULL (the path kept in buf).  The descriptor, with the path used in
 * *used; or -1 after "cfsbw CMD: no daemon at PATH: REASON" on stderr.
 */
int cli_connect_daemon(const char *cmd, const char *sock, char *buf,
		       size_t size, const char **used);

/*
 * Starts the watchdog that kills cfsbw once it has been stopped for about
 * a second (src/cli/watchdog.c); 0, or -errno if it could not.
 */
int cli_watchdog_start(void);

/*
 * After exec of name failed with ENOENT: true, with the reason in buf, if
 * name is a script whose #! interpreter is missing.
 */
bool cli_exec_cause(const char *name, char *buf, size_t size);

#endif
