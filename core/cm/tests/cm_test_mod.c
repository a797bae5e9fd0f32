// SPDX-License-Identifier: GPL-2.0
/* weft_cm_test: KUnit suites of the communication manager (core/cm/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_cm_connect, weft_suite_weft_cm_faults,
	weft_suite_weft_cm_load, weft_suite_weft_cm_exit;

static const struct weft_test_suite *const weft_cm_suites[] = {
	&weft_suite_weft_cm_connect,
	&weft_suite_weft_cm_faults,
	&weft_suite_weft_cm_load,
	&weft_suite_weft_cm_exit,
};

WEFT_KUNIT_MODULE(weft_cm_suites, "Weft: KUnit suites of the communication manager");
