// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_stream: module glue of the checked RC stream (stream.cpp). */
#include <linux/module.h>

int weft_selftest_stream_run(unsigned int messages);

static unsigned int messages = 100000;
module_param(messages, uint, 0444);
MODULE_PARM_DESC(messages, "messages to send from weft0 to weft1 at load");

static int __init weft_selftest_stream_init(void)
{
	return weft_selftest_stream_run(messages);
}

static void __exit weft_selftest_stream_exit(void)
{
}

module_init(weft_selftest_stream_init);
module_exit(weft_selftest_stream_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: a checked RC stream from weft0 to weft1 at load");
