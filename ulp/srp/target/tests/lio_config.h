/* SPDX-License-Identifier: GPL-2.0 */
/*
 * weft_srpt_test: LIO's configuration is configfs, which only a process
 * writes; shim_config.c runs the shell commands an administrator would.
 */
#ifndef WEFT_SRPT_TEST_LIO_CONFIG_H
#define WEFT_SRPT_TEST_LIO_CONFIG_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* Run @cmd with /bin/sh -c and wait: its exit status (0: success), or a negative errno. */
int weft_srpt_test_sh(const char *cmd);

WEFT_C_END

#endif
