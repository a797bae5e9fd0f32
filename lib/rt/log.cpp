// SPDX-License-Identifier: GPL-2.0
/* Logger and RateLimit (weft/log.h). */
#include <weft/log.h>

namespace weft {

bool RateLimit::allow()
{
	uint64_t now = weft_jiffies();
	uint64_t start = window_start_.load(Order::Relaxed);
	uint64_t interval = weft_msecs_to_jiffies(interval_ms_);

	if (start == 0 || now - start >= interval) {
		/* A new window: whoever wins the exchange resets the count. */
		if (window_start_.compare_exchange(start, now, Order::Relaxed, Order::Relaxed))
			printed_.store(0, Order::Relaxed);
	}
	if (printed_.fetch_add(1, Order::Relaxed) + 1 <= burst_)
		return true;
	missed_.fetch_add(1, Order::Relaxed);
	return false;
}

#define WEFT_LOGGER_LEVEL(method, level)                        \
	void Logger::method(const char *fmt, ...) const         \
	{                                                       \
		__builtin_va_list ap;                           \
		__builtin_va_start(ap, fmt);                    \
		weft_vlog(static_cast<int>(level), prefix_, fmt, ap); \
		__builtin_va_end(ap);                           \
	}

WEFT_LOGGER_LEVEL(err, Level::Err)
WEFT_LOGGER_LEVEL(warn, Level::Warn)
WEFT_LOGGER_LEVEL(info, Level::Info)
WEFT_LOGGER_LEVEL(dbg, Level::Debug)

void Logger::log(Level l, const char *fmt, ...) const
{
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	weft_vlog(static_cast<int>(l), prefix_, fmt, ap);
	__builtin_va_end(ap);
}

size_t format(char *buf, size_t size, const char *fmt, ...)
{
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	int n = weft_vsnprintf(buf, size, fmt, ap);
	__builtin_va_end(ap);
	return n < 0 ? 0 : static_cast<size_t>(n);
}

} // namespace weft
