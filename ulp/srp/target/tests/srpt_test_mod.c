// SPDX-License-Identifier: GPL-2.0
/* weft_srpt_test: KUnit suites of the SRP target (ulp/srp/target/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_srpt_parse;
extern const struct weft_test_suite weft_suite_weft_srpt_channel;

static const struct weft_test_suite *const weft_srpt_suites[] = {
	&weft_suite_weft_srpt_parse,
	&weft_suite_weft_srpt_channel,
};

WEFT_KUNIT_MODULE(weft_srpt_suites, "Weft: KUnit suites of the SRP target");
