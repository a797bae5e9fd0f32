// SPDX-License-Identifier: GPL-2.0
/* weft_srp_test: KUnit suites of SRP (ulp/srp/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_srp_options;

static const struct weft_test_suite *const weft_srp_suites[] = {
	&weft_suite_weft_srp_options,
};

WEFT_KUNIT_MODULE(weft_srp_suites, "Weft: KUnit suites of SRP");
