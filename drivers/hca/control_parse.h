/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The values user space writes to /sys/kernel/config/weft/ (control.h,
 * Documentation/fabric.md), parsed apart from the fabric objects they
 * change: pure functions over the written bytes, so that the host fuzz
 * target `configfs` drives exactly what the control plane calls.  Every
 * refusal is EINVAL; nothing here allocates or keeps the input.
 */
#ifndef WEFT_HCA_CONTROL_PARSE_H
#define WEFT_HCA_CONTROL_PARSE_H

#include <weft/result.h>

namespace weft::hca::ctl {

inline constexpr uint8_t max_switch_ports = 63;
/* A cable end's device name, as kept for reading back ("<device>:<port>" fits 24). */
inline constexpr size_t end_name_max = 23;

/* Input text, as user space writes it: a trailing newline is not part of a value. */
struct Text {
	const char *p;
	size_t n;

	Text(const char *buf, size_t len) : p(buf), n(len)
	{
		if (n && p[n - 1] == '\n')
			n--;
	}
	bool empty() const { return n == 0; }
	bool eq(const char *s) const { return __builtin_strlen(s) == n && !__builtin_memcmp(p, s, n); }
	/* The next space-separated token, or an empty one at the end. */
	Text token();
	/* Split at the last @c: this keeps the part before, returns the part after. */
	bool split_last(char c, Text &after);

private:
	Text(const char *buf, size_t len, bool) : p(buf), n(len) {}
};

/* A decimal number in [0, max], nothing else. */
Result<uint32_t> parse_u32(Text t, uint32_t max);

/* A node's "ports": 1..max_switch_ports for a switch, 1..@hca_max for an HCA. */
Result<uint8_t> parse_ports(Text t, bool is_switch, uint8_t hca_max);

/*
 * A cable end, "<device>:<port>": a name of 1..end_name_max printable
 * bytes other than space (NUL-terminated here), port 0..63.
 */
struct End {
	char name[end_name_max + 1];
	uint8_t port;
};
Result<End> parse_end(Text t);

/*
 * A fault knob: "ppm=N count=N ms=N dir=ab|ba|both", any subset in any
 * order, at least one; what is not given stays.  ms only for a kind with
 * a hold time (@has_hold: Delay, Reorder), 1..max_hold_ms; ppm at most
 * ppm_all.  ab is a->b (what port a transmits).
 */
struct FaultSpec {
	bool has_ppm = false, has_count = false, has_ms = false;
	uint32_t ppm = 0, count = 0, ms = 0;
	bool dir[2] = {true, true};
};
Result<FaultSpec> parse_fault(Text t, bool has_hold);

} // namespace weft::hca::ctl

#endif
