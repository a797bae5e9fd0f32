// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_rcm_server: module glue of the RDMA CM test server (rcm_server.cpp). */
#include "rcm_mod.h"

static int __init weft_selftest_rcm_server_init(void)
{
	return weft_rcm_test_server_start(&p);
}

static void __exit weft_selftest_rcm_server_exit(void)
{
	weft_rcm_test_server_stop();
}

module_init(weft_selftest_rcm_server_init);
module_exit(weft_selftest_rcm_server_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: an RDMA CM echo server (tests/integration/rdma_cm.sh)");
