/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Result<T>: a value or a kernel errno.  Every fallible call in Weft returns
 * one; [[nodiscard]] makes ignoring it a compile error under -Werror and a
 * warning otherwise.  Errors are kept positive (EINVAL), and turned into the
 * kernel's negative convention only at the C boundary (to_errno()).
 */
#ifndef WEFT_RESULT_H
#define WEFT_RESULT_H

#include <weft/errno.h>
#include <weft/rt/kapi.h>
#include <weft/util.h>

namespace weft {

class [[nodiscard]] Error {
public:
	/* @code: a positive errno; anything else is a bug, reported as EINVAL. */
	constexpr explicit Error(int code) : code_(code > 0 ? code : err::EINVAL) {}
	constexpr int code() const { return code_; }
	constexpr int to_errno() const { return -code_; }
	constexpr bool operator==(const Error &o) const { return code_ == o.code_; }

private:
	int code_;
};

template <typename T> class [[nodiscard]] Result {
public:
	Result(const T &v) : ok_(true) { new (&value_) T(v); }
	Result(T &&v) : ok_(true) { new (&value_) T(move(v)); }
	Result(Error e) : code_(e.code()), ok_(false) {}
	Result(Result &&o) : ok_(o.ok_)
	{
		if (ok_)
			new (&value_) T(move(o.value_));
		else
			code_ = o.code_;
	}
	Result(const Result &) = delete;
	Result &operator=(const Result &) = delete;
	~Result()
	{
		if (ok_)
			value_.~T();
	}

	bool ok() const { return ok_; }
	explicit operator bool() const { return ok_; }
	Error error() const { return ok_ ? Error(err::EINVAL) : Error(code_); }
	int to_errno() const { return ok_ ? 0 : -code_; }

	/* Access the value; calling these on an error is a bug (WARN). */
	T &value()
	{
		check();
		return value_;
	}
	const T &value() const
	{
		check();
		return value_;
	}
	T take()
	{
		check();
		return move(value_);
	}
	T *operator->() { return &value(); }
	T &operator*() { return value(); }

private:
	void check() const
	{
		if (WEFT_UNLIKELY(!ok_))
			weft_warn(__FILE__, __LINE__, "value of a failed Result");
	}

	union {
		T value_;
		int code_;
	};
	bool ok_;
};

template <> class [[nodiscard]] Result<void> {
public:
	Result() : code_(0) {}
	Result(Error e) : code_(e.code()) {}
	bool ok() const { return code_ == 0; }
	explicit operator bool() const { return code_ == 0; }
	Error error() const { return Error(code_ ? code_ : err::EINVAL); }
	int to_errno() const { return -code_; }
	void take() const {}

private:
	int code_;
};

/* A successful Result<void>. */
inline Result<void> ok() { return Result<void>(); }

/* From a kernel-convention return value (0 or -errno). */
inline Result<void> from_errno(int ret)
{
	return ret < 0 ? Result<void>(Error(-ret)) : Result<void>();
}

} // namespace weft

/*
 * Evaluate a Result; on error return the error from the enclosing function,
 * else yield the value.  (A GNU statement expression, as in the kernel.)
 */
#define WEFT_TRY(expr)                                  \
	({                                              \
		auto _weft_r = (expr);                  \
		if (WEFT_UNLIKELY(!_weft_r.ok()))       \
			return _weft_r.error();         \
		_weft_r.take();                         \
	})

#endif
