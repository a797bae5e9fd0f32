// SPDX-License-Identifier: GPL-2.0
/* weft_srp_dm_test: KUnit suite of the SRP target's DM agent (ulp/srp/dm/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_srp_dm;

static const struct weft_test_suite *const weft_srp_dm_suites[] = {
	&weft_suite_weft_srp_dm,
};

WEFT_KUNIT_MODULE(weft_srp_dm_suites, "Weft: KUnit suite of the SRP target's device management agent");
