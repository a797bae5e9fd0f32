// SPDX-License-Identifier: GPL-2.0
/* weft_ipoib_test: KUnit suites of IPoIB (ulp/ipoib/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_ipoib_addr, weft_suite_weft_ipoib_dest,
	weft_suite_weft_ipoib_cm, weft_suite_weft_ipoib_pkey, weft_suite_weft_ipoib_cm_release;

static const struct weft_test_suite *const weft_ipoib_suites[] = {
	&weft_suite_weft_ipoib_addr,
	&weft_suite_weft_ipoib_dest,
	&weft_suite_weft_ipoib_cm,
	&weft_suite_weft_ipoib_pkey,
	&weft_suite_weft_ipoib_cm_release,
};

WEFT_KUNIT_MODULE(weft_ipoib_suites, "Weft: KUnit suites of IPoIB");
