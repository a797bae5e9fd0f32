// SPDX-License-Identifier: GPL-2.0
/* weft_ucma_test: KUnit suites of the user-space RDMA CM (userspace/ucma/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_ucma_translate;

static const struct weft_test_suite *const weft_ucma_suites[] = {
	&weft_suite_weft_ucma_translate,
};

WEFT_KUNIT_MODULE(weft_ucma_suites, "Weft: KUnit suites of the user-space RDMA CM");
