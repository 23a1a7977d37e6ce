/* main.c - the cfsbw command: dispatches to its subcommands. */
#include <stdio.h>
#include <string.h>

#include "cfsbw.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: cfsbw COMMAND [ARGS...]\n"
	"\n"
	"CFS bandwidth control (CPU hard limits) without root or cgroups.\n"
	"\n"
	"commands:\n"
	"  run     hold a command, or running processes, to a CPU quota per period\n"
	"  sim     simulate a scenario of groups and tasks on 1..4096 virtual CPUs\n"
	"  plan    the smallest CPU limit that keeps throttling under a target\n"
	"  record  write a command's or a process's run and sleep intervals\n"
	"  demo    the seeds' three examples, on real processes and in the simulator\n"
	"  daemon  a live tree of groups: a cgroupfs-like mount and a socket\n"
	"  ctl     the daemon's tree over its socket (mkdir, set, get, move...)\n"
	"  top     a live table of the daemon's groups\n"
	"\n"
	"  cfsbw COMMAND --help   the command's own options\n"
	"  cfsbw --version\n";

/* Each subcommand's name and its main (src/cli/cmd_NAME.c). */
static const struct {
	const char *name;
	int (*start)(int argc, char **argv);
} commands[] = {
	{"run", cli_run_main},	     {"sim", cli_sim_main},
	{"plan", cli_plan_main},     {"record", cli_record_main},
	{"demo", cli_demo_main},     {"daemon", cli_daemon_main},
	{"ctl", cli_ctl_main},	     {"top", cli_top_main},
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("cfsbw %s\n", CFSBW_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].start(argc - 1, argv + 1);
	fprintf(stderr, "cfsbw: unknown command '%s'\n\n%s", cmd, usage);
	return 2;
}
