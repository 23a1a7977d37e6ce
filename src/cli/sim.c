/* sim.c - cfsbw sim.  Owned by the sim work in progress; replaced when it lands. */
#include <stdio.h>

#include "cli/cli.h"

int cli_sim_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("cfsbw sim: not built yet in this version\n", stderr);
	return 2;
}
