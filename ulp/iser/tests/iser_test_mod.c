// SPDX-License-Identifier: GPL-2.0
/* weft_iser_test: KUnit suites of the iSER initiator (ulp/iser/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_iser_wire;

static const struct weft_test_suite *const weft_iser_suites[] = {
	&weft_suite_weft_iser_wire,
};

WEFT_KUNIT_MODULE(weft_iser_suites, "Weft: KUnit suites of the iSER initiator");
