/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit from C++.  A test is a function void name(weft::test::Test &t); a
 * suite is a table of them:
 *
 *   static void adds(Test &t) { WEFT_EXPECT_EQ(t, 1 + 1, 2); }
 *   WEFT_TEST_SUITE(weft_demo, WEFT_CASE(adds));
 *
 * and the module's C file lists the suites (WEFT_KUNIT_MODULE).  EXPECT
 * records a failure and goes on; ASSERT records it and returns from the
 * calling test function, so destructors run and guards unlock (KUnit's own
 * assert would end the kthread mid-frame).  Failures print the file, the
 * line, both expressions and both values through KUnit.
 */
#ifndef WEFT_TEST_H
#define WEFT_TEST_H

#include <weft/log.h>
#include <weft/result.h>
#include <weft/rt/kunit_api.h>

namespace weft::test {

class Test {
public:
	explicit Test(struct kunit *k) : k_(k) {}
	struct kunit *kunit() const { return k_; }
	bool failed() const { return failed_; }
	void fail(const char *file, int line, const char *msg)
	{
		failed_ = true;
		weft_kunit_fail(k_, file, line, msg);
	}
	void note(const char *msg) { weft_kunit_note(k_, msg); }

private:
	struct kunit *k_;
	bool failed_ = false;
};

template <typename T> struct is_int { static constexpr bool value = false; };
#define WEFT_INT_TYPE(T) template <> struct is_int<T> { static constexpr bool value = true; }
WEFT_INT_TYPE(char);
WEFT_INT_TYPE(signed char);
WEFT_INT_TYPE(unsigned char);
WEFT_INT_TYPE(short);
WEFT_INT_TYPE(unsigned short);
WEFT_INT_TYPE(int);
WEFT_INT_TYPE(unsigned int);
WEFT_INT_TYPE(long);
WEFT_INT_TYPE(unsigned long);
WEFT_INT_TYPE(long long);
WEFT_INT_TYPE(unsigned long long);
#undef WEFT_INT_TYPE

template <typename T> struct is_ptr { static constexpr bool value = false; };
template <typename T> struct is_ptr<T *> { static constexpr bool value = true; };

struct Value {
	char text[64];
};

template <typename T> Value show(const T &v)
{
	Value out;
	if constexpr (is_int<T>::value || __is_enum(T)) {
		__int128 x = static_cast<__int128>(v);
		if (x < 0)
			format(out.text, sizeof(out.text), "%lld", static_cast<long long>(x));
		else
			format(out.text, sizeof(out.text), "%llu (0x%llx)",
			       static_cast<unsigned long long>(x), static_cast<unsigned long long>(x));
	} else if constexpr (is_same<T, bool>::value) {
		format(out.text, sizeof(out.text), "%s", v ? "true" : "false");
	} else if constexpr (is_same<T, Error>::value) {
		format(out.text, sizeof(out.text), "errno %d", v.code());
	} else if constexpr (is_ptr<T>::value || is_same<T, decltype(nullptr)>::value) {
		format(out.text, sizeof(out.text), "%px", static_cast<const void *>(v));
	} else {
		static_assert(is_ptr<T>::value, "no way to print this type in a test");
	}
	return out;
}

/* Integers compare by value whatever their signedness (no -Wsign-compare traps). */
template <typename A, typename B> constexpr auto norm(const A &a, const B &)
{
	if constexpr ((is_int<A>::value || __is_enum(A)) && (is_int<B>::value || __is_enum(B)))
		return static_cast<__int128>(a);
	else
		return a;
}

enum class Op { Eq, Ne, Lt, Le, Gt, Ge };

template <typename A, typename B>
bool check(Test &t, const char *file, int line, Op op, const char *ops, const char *ea,
	   const char *eb, const A &a, const B &b)
{
	auto x = norm(a, b);
	auto y = norm(b, a);
	bool ok = false;
	switch (op) {
	case Op::Eq: ok = x == y; break;
	case Op::Ne: ok = !(x == y); break;
	case Op::Lt: ok = x < y; break;
	case Op::Le: ok = x <= y; break;
	case Op::Gt: ok = x > y; break;
	case Op::Ge: ok = x >= y; break;
	}
	if (!ok) {
		char msg[256];
		format(msg, sizeof(msg), "Expected %s %s %s, but\n    %s == %s\n    %s == %s", ea,
		       ops, eb, ea, show(a).text, eb, show(b).text);
		t.fail(file, line, msg);
	}
	return ok;
}

inline bool check_true(Test &t, const char *file, int line, const char *expr, bool v, bool want)
{
	if (v == want)
		return true;
	char msg[192];
	format(msg, sizeof(msg), "Expected %s to be %s, but it is %s", expr,
	       want ? "true" : "false", v ? "true" : "false");
	t.fail(file, line, msg);
	return false;
}

inline bool check_str(Test &t, const char *file, int line, const char *ea, const char *eb,
		      const char *a, const char *b)
{
	if (a && b && __builtin_strcmp(a, b) == 0)
		return true;
	char msg[256];
	format(msg, sizeof(msg), "Expected %s == %s, but\n    %s == \"%s\"\n    %s == \"%s\"", ea,
	       eb, ea, a ? a : "(null)", eb, b ? b : "(null)");
	t.fail(file, line, msg);
	return false;
}

template <typename R> bool check_ok(Test &t, const char *file, int line, const char *expr, const R &r)
{
	if (r.ok())
		return true;
	char msg[192];
	format(msg, sizeof(msg), "Expected %s to succeed, but it failed with errno %d", expr,
	       r.error().code());
	t.fail(file, line, msg);
	return false;
}

template <typename R>
bool check_err(Test &t, const char *file, int line, const char *expr, const R &r, int code)
{
	if (!r.ok() && r.error().code() == code)
		return true;
	char msg[192];
	if (r.ok())
		format(msg, sizeof(msg), "Expected %s to fail with errno %d, but it succeeded", expr, code);
	else
		format(msg, sizeof(msg), "Expected %s to fail with errno %d, but got errno %d", expr,
		       code, r.error().code());
	t.fail(file, line, msg);
	return false;
}

} // namespace weft::test

#define WEFT_CASE(fn)                                                            \
	::weft_test_case                                                         \
	{                                                                        \
		#fn, [](struct kunit *k) {                                       \
			::weft::test::Test _weft_t(k);                           \
			fn(_weft_t);                                             \
		}                                                                \
	}

/* Defines the C-visible suite weft_suite_<name>, KUnit suite "<name>". */
#define WEFT_TEST_SUITE(name, ...)                                               \
	static constinit const ::weft_test_case weft_cases_##name[] = {__VA_ARGS__}; \
	extern "C" constinit const ::weft_test_suite weft_suite_##name;          \
	constinit const ::weft_test_suite weft_suite_##name = {                  \
		#name, weft_cases_##name,                                        \
		sizeof(weft_cases_##name) / sizeof(weft_cases_##name[0])}

#define WEFT_CMP_(t, op, ops, a, b) \
	::weft::test::check((t), __FILE__, __LINE__, op, ops, #a, #b, (a), (b))
#define WEFT_EXPECT_EQ(t, a, b) WEFT_CMP_(t, ::weft::test::Op::Eq, "==", a, b)
#define WEFT_EXPECT_NE(t, a, b) WEFT_CMP_(t, ::weft::test::Op::Ne, "!=", a, b)
#define WEFT_EXPECT_LT(t, a, b) WEFT_CMP_(t, ::weft::test::Op::Lt, "<", a, b)
#define WEFT_EXPECT_LE(t, a, b) WEFT_CMP_(t, ::weft::test::Op::Le, "<=", a, b)
#define WEFT_EXPECT_GT(t, a, b) WEFT_CMP_(t, ::weft::test::Op::Gt, ">", a, b)
#define WEFT_EXPECT_GE(t, a, b) WEFT_CMP_(t, ::weft::test::Op::Ge, ">=", a, b)
#define WEFT_EXPECT_TRUE(t, x) ::weft::test::check_true((t), __FILE__, __LINE__, #x, !!(x), true)
#define WEFT_EXPECT_FALSE(t, x) ::weft::test::check_true((t), __FILE__, __LINE__, #x, !!(x), false)
#define WEFT_EXPECT_STREQ(t, a, b) ::weft::test::check_str((t), __FILE__, __LINE__, #a, #b, (a), (b))
#define WEFT_EXPECT_OK(t, r) ::weft::test::check_ok((t), __FILE__, __LINE__, #r, (r))
#define WEFT_EXPECT_ERR(t, r, code) ::weft::test::check_err((t), __FILE__, __LINE__, #r, (r), (code))

/* ASSERT: as EXPECT, and on failure return from the calling test function. */
#define WEFT_ASSERT_(check) \
	do {                \
		if (!(check)) \
			return; \
	} while (0)
#define WEFT_ASSERT_EQ(t, a, b) WEFT_ASSERT_(WEFT_EXPECT_EQ(t, a, b))
#define WEFT_ASSERT_NE(t, a, b) WEFT_ASSERT_(WEFT_EXPECT_NE(t, a, b))
#define WEFT_ASSERT_TRUE(t, x) WEFT_ASSERT_(WEFT_EXPECT_TRUE(t, x))
#define WEFT_ASSERT_FALSE(t, x) WEFT_ASSERT_(WEFT_EXPECT_FALSE(t, x))
#define WEFT_ASSERT_OK(t, r) WEFT_ASSERT_(WEFT_EXPECT_OK(t, r))

#endif
