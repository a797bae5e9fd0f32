// SPDX-License-Identifier: GPL-2.0
/*
 * A suite with one deliberately failing case, for the harness self-test:
 * the KUnit run must report this suite as failed (tests/harness/ktap.sh is
 * told to expect exactly that), proving a failing case cannot go unnoticed.
 */
#include <weft/test.h>

using weft::test::Test;

namespace {

void passes(Test &t)
{
	WEFT_EXPECT_EQ(t, 2 + 2, 4);
}

void fails_on_purpose(Test &t)
{
	int four = 4;
	WEFT_EXPECT_EQ(t, four, 5);
}

} // namespace

WEFT_TEST_SUITE(weft_selftest_expected_failure, WEFT_CASE(passes), WEFT_CASE(fails_on_purpose));
