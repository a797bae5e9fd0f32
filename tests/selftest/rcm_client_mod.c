// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_rcm_client: module glue of the RDMA CM test client (rcm_client.cpp). */
#include "rcm_mod.h"

static int __init weft_selftest_rcm_client_init(void)
{
	return weft_rcm_test_client_run(&p);
}

static void __exit weft_selftest_rcm_client_exit(void)
{
	weft_rcm_test_client_stop();
}

module_init(weft_selftest_rcm_client_init);
module_exit(weft_selftest_rcm_client_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: an RDMA CM client run at load (tests/integration/rdma_cm.sh)");
