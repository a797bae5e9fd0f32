// SPDX-License-Identifier: GPL-2.0
/* weft_mad_test: KUnit suites of the MAD layer (core/mad/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_mad_smi, weft_suite_weft_mad_service,
	weft_suite_weft_mad_gsi, weft_suite_weft_mad_rmpp, weft_suite_weft_mad_smi_port, weft_suite_weft_mad_sa,
	weft_suite_weft_mad_sa_inform, weft_suite_weft_mad_smi_hostile;

static const struct weft_test_suite *const weft_mad_suites[] = {
	&weft_suite_weft_mad_smi,
	&weft_suite_weft_mad_service,
	&weft_suite_weft_mad_gsi,
	&weft_suite_weft_mad_rmpp,
	&weft_suite_weft_mad_smi_port,
	&weft_suite_weft_mad_sa,
	&weft_suite_weft_mad_sa_inform,
	&weft_suite_weft_mad_smi_hostile,
};

WEFT_KUNIT_MODULE(weft_mad_suites, "Weft: KUnit suites of the MAD layer");
