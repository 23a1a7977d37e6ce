/* run.c - cfsbw run.  Owned by the run work in progress; replaced when it lands. */
#include <stdio.h>

#include "cli/cli.h"

int cli_run_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("cfsbw run: not built yet in this version\n", stderr);
	return 2;
}
