// SPDX-License-Identifier: GPL-2.0
/* weft_isert_test: KUnit suites of the iSER target (ulp/iser/target/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_isert_parse;

static const struct weft_test_suite *const weft_isert_suites[] = {
	&weft_suite_weft_isert_parse,
};

WEFT_KUNIT_MODULE(weft_isert_suites, "Weft: KUnit suites of the iSER target");
