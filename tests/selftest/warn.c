// SPDX-License-Identifier: GPL-2.0
/*
 * weft_selftest_warn: WARNs at load, on purpose.  The harness self-test
 * loads it to prove that a kernel splat fails a test-host run
 * (tests/harness/selftest.sh).  Never loaded otherwise.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init weft_selftest_warn_init(void)
{
	WARN(1, "weft_selftest_warn: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit weft_selftest_warn_exit(void)
{
}

module_init(weft_selftest_warn_init);
module_exit(weft_selftest_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft harness self-test: WARN at load");
