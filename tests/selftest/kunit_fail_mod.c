// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_kunit: the deliberately failing suite (kunit_fail_test.cpp). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_selftest_expected_failure;

static const struct weft_test_suite *const weft_selftest_suites[] = {
	&weft_suite_weft_selftest_expected_failure,
};

WEFT_KUNIT_MODULE(weft_selftest_suites, "Weft harness self-test: a failing KUnit case");
