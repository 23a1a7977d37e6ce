/* demo.c - cfsbw demo.  Owned by the demo work in progress; replaced when it lands. */
#include <stdio.h>

#include "cli/cli.h"

int cli_demo_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("cfsbw demo: not built yet in this version\n", stderr);
	return 2;
}
