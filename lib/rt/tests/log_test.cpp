// SPDX-License-Identifier: GPL-2.0
/* KUnit: formatting and rate limiting. */
#include <weft/log.h>
#include <weft/test.h>

using namespace weft;
using weft::test::Test;

namespace {

void format_truncates_safely(Test &t)
{
	char buf[8];
	size_t n = format(buf, sizeof(buf), "%s-%d", "abcdef", 12345);
	WEFT_EXPECT_EQ(t, n, 7u);
	WEFT_EXPECT_STREQ(t, buf, "abcdef-");
	n = format(buf, sizeof(buf), "%x", 0xbeef);
	WEFT_EXPECT_EQ(t, n, 4u);
	WEFT_EXPECT_STREQ(t, buf, "beef");
}

void ratelimit_burst_then_suppress(Test &t)
{
	RateLimit rl(60000, 3);
	int allowed = 0;
	for (int i = 0; i < 10; i++)
		allowed += rl.allow();
	WEFT_EXPECT_EQ(t, allowed, 3);
	WEFT_EXPECT_EQ(t, rl.suppressed(), 7u);
}

void ratelimit_new_window(Test &t)
{
	RateLimit rl(20, 1);
	WEFT_EXPECT_TRUE(t, rl.allow());
	WEFT_EXPECT_FALSE(t, rl.allow());
	weft_msleep(60);
	WEFT_EXPECT_TRUE(t, rl.allow());
}

void logger_prefix(Test &t)
{
	constexpr Logger log("weft-test");
	WEFT_EXPECT_STREQ(t, log.prefix(), "weft-test");
	/* A rate-limited site prints at most its burst; the rest are counted. */
	for (int i = 0; i < 3; i++)
		WEFT_LOG_RATELIMITED(log, Level::Info, "rate-limited line %d", i);
}

} // namespace

WEFT_TEST_SUITE(weft_rt_log, WEFT_CASE(format_truncates_safely),
		WEFT_CASE(ratelimit_burst_then_suppress), WEFT_CASE(ratelimit_new_window),
		WEFT_CASE(logger_prefix));
