/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logging with a device prefix ("weft0: port 1 ACTIVE") and rate limiting.
 * Anything that can be triggered by outside input (a bad packet, a bad MAD)
 * logs through the rate-limited form, so a flood of bad input cannot flood
 * the log.
 */
#ifndef WEFT_LOG_H
#define WEFT_LOG_H

#include <weft/atomic.h>
#include <weft/rt/kapi.h>

namespace weft {

enum class Level : int { Err = 3, Warn = 4, Notice = 5, Info = 6, Debug = 7 };

/* At most `burst` messages per `interval_ms` per call site; counts the rest. */
class RateLimit {
public:
	constexpr RateLimit(unsigned interval_ms = 5000, unsigned burst = 10)
		: interval_ms_(interval_ms), burst_(burst)
	{
	}
	/* True if this message may be printed.  Lock-free; races only blur the count. */
	bool allow();
	unsigned suppressed() const { return missed_.load(Order::Relaxed); }

private:
	unsigned interval_ms_;
	unsigned burst_;
	Atomic<uint64_t> window_start_{0};
	Atomic<unsigned> printed_{0};
	Atomic<unsigned> missed_{0};
};

class Logger {
public:
	constexpr explicit Logger(const char *prefix) : prefix_(prefix) {}
	const char *prefix() const { return prefix_; }

	void log(Level l, const char *fmt, ...) const WEFT_PRINTF(3, 4);
	void err(const char *fmt, ...) const WEFT_PRINTF(2, 3);
	void warn(const char *fmt, ...) const WEFT_PRINTF(2, 3);
	void info(const char *fmt, ...) const WEFT_PRINTF(2, 3);
	void dbg(const char *fmt, ...) const WEFT_PRINTF(2, 3);

private:
	const char *prefix_;
};

/* Format into a fixed buffer; always NUL-terminated, returns chars written. */
size_t format(char *buf, size_t size, const char *fmt, ...) WEFT_PRINTF(3, 4);

} // namespace weft

/* Rate-limited logging, one limiter per call site. */
#define WEFT_LOG_RATELIMITED(logger, level, fmt, ...)                           \
	do {                                                                    \
		static constinit ::weft::RateLimit _weft_rl;                    \
		if (_weft_rl.allow())                                           \
			(logger).log((level), fmt, ##__VA_ARGS__);              \
	} while (0)

#endif
