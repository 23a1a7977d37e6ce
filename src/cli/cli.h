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
