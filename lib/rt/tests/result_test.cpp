// SPDX-License-Identifier: GPL-2.0
/* KUnit: Result<T>, Error and WEFT_TRY. */
#include <weft/alloc.h>
#include <weft/test.h>

using namespace weft;
using weft::test::Test;

namespace {

Result<int> parse_digit(char c)
{
	if (c < '0' || c > '9')
		return Error(err::EINVAL);
	return c - '0';
}

Result<int> add_digits(char a, char b)
{
	int x = WEFT_TRY(parse_digit(a));
	int y = WEFT_TRY(parse_digit(b));
	return x + y;
}

Result<void> check_even(int v)
{
	if (v % 2)
		return Error(err::ERANGE);
	return ok();
}

Result<int> half_of_even(int v)
{
	WEFT_TRY(check_even(v));
	return v / 2;
}

void value_and_error(Test &t)
{
	Result<int> good = parse_digit('7');
	WEFT_ASSERT_OK(t, good);
	WEFT_EXPECT_EQ(t, good.value(), 7);
	WEFT_EXPECT_EQ(t, good.to_errno(), 0);
	Result<int> bad = parse_digit('x');
	WEFT_EXPECT_FALSE(t, bad.ok());
	WEFT_EXPECT_EQ(t, bad.error().code(), err::EINVAL);
	WEFT_EXPECT_EQ(t, bad.to_errno(), -err::EINVAL);
}

void try_propagates_first_error(Test &t)
{
	WEFT_EXPECT_EQ(t, add_digits('3', '4').value(), 7);
	WEFT_EXPECT_ERR(t, add_digits('a', '4'), err::EINVAL);
	WEFT_EXPECT_ERR(t, add_digits('3', '-'), err::EINVAL);
	WEFT_EXPECT_EQ(t, half_of_even(10).value(), 5);
	WEFT_EXPECT_ERR(t, half_of_even(3), err::ERANGE);
}

void errno_conversions(Test &t)
{
	WEFT_EXPECT_OK(t, from_errno(0));
	WEFT_EXPECT_OK(t, from_errno(5));
	WEFT_EXPECT_ERR(t, from_errno(-err::ETIMEDOUT), err::ETIMEDOUT);
	/* A non-positive code is a bug; it must still read as an error. */
	WEFT_EXPECT_EQ(t, Error(0).code(), err::EINVAL);
	WEFT_EXPECT_EQ(t, Error(-4).code(), err::EINVAL);
}

void move_only_values(Test &t)
{
	int alive = 0;
	struct Obj {
		explicit Obj(int *a) : a_(a) { ++*a_; }
		~Obj() { --*a_; }
		int *a_;
	};
	{
		Result<Own<Obj>> r = make_own<Obj>(Gfp::Sleep, &alive);
		WEFT_ASSERT_OK(t, r);
		Result<Own<Obj>> moved(move(r));
		WEFT_EXPECT_TRUE(t, moved.ok());
		WEFT_EXPECT_EQ(t, alive, 1);
	}
	WEFT_EXPECT_EQ(t, alive, 0);
}

} // namespace

WEFT_TEST_SUITE(weft_rt_result, WEFT_CASE(value_and_error), WEFT_CASE(try_propagates_first_error),
		WEFT_CASE(errno_conversions), WEFT_CASE(move_only_values));
