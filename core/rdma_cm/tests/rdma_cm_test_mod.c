// SPDX-License-Identifier: GPL-2.0
/* weft_rdma_cm_test: KUnit suites of the RDMA CM (core/rdma_cm/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_rdma_cm_bind;
extern const struct weft_test_suite weft_suite_weft_rdma_cm_removal;
extern const struct weft_test_suite weft_suite_weft_rdma_cm_sidr;

static const struct weft_test_suite *const weft_rdma_cm_suites[] = {
	&weft_suite_weft_rdma_cm_bind,
	&weft_suite_weft_rdma_cm_removal,
	&weft_suite_weft_rdma_cm_sidr,
};

WEFT_KUNIT_MODULE(weft_rdma_cm_suites, "Weft: KUnit suites of the RDMA CM");
