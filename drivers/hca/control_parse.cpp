// SPDX-License-Identifier: GPL-2.0
/* Parsing of the configfs values (control_parse.h). */
#include "control_parse.h"
#include "fabric.h"

namespace weft::hca::ctl {

Text Text::token()
{
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	Text t(p, 0, true);
	while (n && *p != ' ' && *p != '\t') {
		p++;
		n--;
		t.n++;
	}
	return t;
}

bool Text::split_last(char c, Text &after)
{
	for (size_t i = n; i-- > 0;) {
		if (p[i] == c) {
			after = Text(p + i + 1, n - i - 1, true);
			n = i;
			return true;
		}
	}
	return false;
}

Result<uint32_t> parse_u32(Text t, uint32_t max)
{
	if (t.empty() || t.n > 10)
		return Error(err::EINVAL);
	uint64_t v = 0;
	for (size_t i = 0; i < t.n; i++) {
		if (t.p[i] < '0' || t.p[i] > '9')
			return Error(err::EINVAL);
		v = v * 10 + static_cast<uint64_t>(t.p[i] - '0');
	}
	if (v > max)
		return Error(err::EINVAL);
	return static_cast<uint32_t>(v);
}

Result<uint8_t> parse_ports(Text t, bool is_switch, uint8_t hca_max)
{
	const uint32_t n = WEFT_TRY(parse_u32(t, is_switch ? max_switch_ports : hca_max));
	if (n == 0)
		return Error(err::EINVAL);
	return static_cast<uint8_t>(n);
}

Result<End> parse_end(Text t)
{
	Text num(nullptr, 0);
	Text name = t;
	if (!name.split_last(':', num) || name.empty() || name.n > end_name_max)
		return Error(err::EINVAL);
	/*
	 * Device names are printable words: a NUL would end the name the
	 * fabric is searched for early ("weft0\0junk:1" would name weft0).
	 */
	for (size_t i = 0; i < name.n; i++)
		if (name.p[i] <= ' ' || name.p[i] >= 0x7f)
			return Error(err::EINVAL);
	End e{};
	e.port = static_cast<uint8_t>(WEFT_TRY(parse_u32(num, max_switch_ports)));
	__builtin_memcpy(e.name, name.p, name.n);
	e.name[name.n] = '\0';
	return e;
}

Result<FaultSpec> parse_fault(Text in, bool has_hold)
{
	FaultSpec s;
	bool any = false;
	for (Text t = in.token(); !t.empty(); t = in.token()) {
		Text val(nullptr, 0);
		Text key = t;
		if (!key.split_last('=', val))
			return Error(err::EINVAL);
		if (key.eq("ppm")) {
			s.ppm = WEFT_TRY(parse_u32(val, ppm_all));
			s.has_ppm = true;
		} else if (key.eq("count")) {
			s.count = WEFT_TRY(parse_u32(val, UINT32_MAX));
			s.has_count = true;
		} else if (key.eq("ms") && has_hold) {
			s.ms = WEFT_TRY(parse_u32(val, max_hold_ms));
			if (s.ms == 0)
				return Error(err::EINVAL);
			s.has_ms = true;
		} else if (key.eq("dir")) {
			if (val.eq("ab")) {
				s.dir[0] = true;
				s.dir[1] = false;
			} else if (val.eq("ba")) {
				s.dir[0] = false;
				s.dir[1] = true;
			} else if (val.eq("both")) {
				s.dir[0] = s.dir[1] = true;
			} else {
				return Error(err::EINVAL);
			}
		} else {
			return Error(err::EINVAL);
		}
		any = true;
	}
	if (!any)
		return Error(err::EINVAL);
	return s;
}

} // namespace weft::hca::ctl
