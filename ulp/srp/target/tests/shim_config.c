// SPDX-License-Identifier: GPL-2.0
/* weft_srpt_test: shell commands for LIO's configfs (lio_config.h). */
#include <linux/umh.h>

#include "lio_config.h"

int weft_srpt_test_sh(const char *cmd)
{
	static char *envp[] = {"HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", NULL};
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};

	return call_usermodehelper(argv[0], argv, envp, UMH_WAIT_PROC);
}
