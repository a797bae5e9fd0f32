// SPDX-License-Identifier: GPL-2.0
/* The in-tree add_target option string (options.h). */
#include <weft/log.h>

#include "options.h"

namespace weft::srp {

namespace {

const Logger log("weft_srp");

struct Token {
	const char *key;
	uint32_t bit;
};

constexpr Token tokens[] = {
	{"id_ext", opt::id_ext},
	{"ioc_guid", opt::ioc_guid},
	{"dgid", opt::dgid},
	{"pkey", opt::pkey},
	{"service_id", opt::service_id},
	{"max_sect", opt::max_sect},
	{"max_cmd_per_lun", opt::max_cmd_per_lun},
	{"target_can_queue", opt::target_can_queue},
	{"io_class", opt::io_class},
	{"initiator_ext", opt::initiator_ext},
	{"cmd_sg_entries", opt::cmd_sg_entries},
	{"allow_ext_sg", opt::allow_ext_sg},
	{"sg_tablesize", opt::sg_tablesize},
	{"comp_vector", opt::comp_vector},
	{"tl_retry_count", opt::tl_retry_count},
	{"queue_size", opt::queue_size},
	{"src", opt::src},
	{"dest", opt::dest},
	{"max_it_iu_size", opt::max_it_iu_size},
	{"ch_count", opt::ch_count},
};

/* The largest scatterlist a SCSI host may ask for (SG_MAX_SEGMENTS). */
constexpr uint32_t sg_max_segments = 2048;

int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* @s[0..n) as a number in @base (16: an optional "0x"; 0: C rules, as match_int). */
bool parse_u64(const char *s, size_t n, unsigned base, uint64_t &out)
{
	if (base == 0) {
		base = 10;
		if (n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			base = 16;
		} else if (n > 1 && s[0] == '0') {
			base = 8;
			s++;
			n--;
		}
	}
	if (base == 16 && n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (!n)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		const int d = hexval(s[i]);
		if (d < 0 || unsigned(d) >= base)
			return false;
		if (v > (~0ull - unsigned(d)) / base)
			return false;
		v = v * base + unsigned(d);
	}
	out = v;
	return true;
}

/* A value for an int option, in [lo, hi]. */
bool parse_int(const char *s, size_t n, uint64_t lo, uint64_t hi, uint32_t &out)
{
	uint64_t v;
	if (!parse_u64(s, n, 0, v) || v < lo || v > hi)
		return false;
	out = static_cast<uint32_t>(v);
	return true;
}

Result<void> apply(uint32_t bit, const char *v, size_t n, TargetOptions &o)
{
	uint64_t x;
	switch (bit) {
	case opt::id_ext:
		return parse_u64(v, n, 16, o.id_ext) ? ok() : Error(err::EINVAL);
	case opt::ioc_guid:
		return parse_u64(v, n, 16, o.ioc_guid) ? ok() : Error(err::EINVAL);
	case opt::service_id:
		return parse_u64(v, n, 16, o.service_id) ? ok() : Error(err::EINVAL);
	case opt::initiator_ext:
		return parse_u64(v, n, 16, o.initiator_ext) ? ok() : Error(err::EINVAL);
	case opt::dgid:
		if (n != 32)
			return Error(err::EINVAL);
		for (size_t i = 0; i < 16; i++) {
			const int h = hexval(v[2 * i]), l = hexval(v[2 * i + 1]);
			if (h < 0 || l < 0)
				return Error(err::EINVAL);
			o.dgid[i] = static_cast<uint8_t>(h << 4 | l);
		}
		return ok();
	case opt::pkey:
		if (!parse_u64(v, n, 16, x) || x > 0xffff)
			return Error(err::EINVAL);
		o.pkey = static_cast<uint16_t>(x);
		return ok();
	case opt::io_class:
		if (!parse_u64(v, n, 16, x) || (x != 0xff00 && x != 0x0100))
			return Error(err::EINVAL);
		o.io_class = static_cast<uint16_t>(x);
		return ok();
	case opt::max_sect:
		return parse_int(v, n, 1, 0x7fffffff, o.max_sect) ? ok() : Error(err::EINVAL);
	case opt::queue_size:
		return parse_int(v, n, 1, 0x7fffffff, o.queue_size) ? ok() : Error(err::EINVAL);
	case opt::max_cmd_per_lun:
		return parse_int(v, n, 1, 0x7fffffff, o.max_cmd_per_lun) ? ok() : Error(err::EINVAL);
	case opt::target_can_queue:
		return parse_int(v, n, 1, 0x7fffffff, o.target_can_queue) ? ok() : Error(err::EINVAL);
	case opt::cmd_sg_entries:
		return parse_int(v, n, 1, 255, o.cmd_sg_entries) ? ok() : Error(err::EINVAL);
	case opt::allow_ext_sg: {
		uint32_t b;
		if (!parse_int(v, n, 0, 0x7fffffff, b))
			return Error(err::EINVAL);
		o.allow_ext_sg = b != 0;
		return ok();
	}
	case opt::sg_tablesize:
		return parse_int(v, n, 1, sg_max_segments, o.sg_tablesize) ? ok() : Error(err::EINVAL);
	case opt::comp_vector:
		return parse_int(v, n, 0, 0x7fffffff, o.comp_vector) ? ok() : Error(err::EINVAL);
	case opt::tl_retry_count:
		return parse_int(v, n, 2, 7, o.tl_retry_count) ? ok() : Error(err::EINVAL);
	case opt::max_it_iu_size:
		return parse_int(v, n, 0, 0x7fffffff, o.max_it_iu_size) ? ok() : Error(err::EINVAL);
	case opt::ch_count:
		return parse_int(v, n, 1, 0x7fffffff, o.ch_count) ? ok() : Error(err::EINVAL);
	case opt::src:
	case opt::dest:
		return Error(err::EOPNOTSUPP);
	}
	return Error(err::EINVAL);
}

} // namespace

Result<void> parse_options(const char *buf, size_t len, TargetOptions &o)
{
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && buf[j] != ',' && buf[j] != '\n' && buf[j])
			j++;
		const char *item = buf + i;
		const size_t n = j - i;
		i = j + 1;
		if (!n)
			continue;
		size_t eq = 0;
		while (eq < n && item[eq] != '=')
			eq++;
		uint32_t bit = 0;
		for (const Token &t : tokens)
			if (__builtin_strlen(t.key) == eq && !__builtin_memcmp(t.key, item, eq))
				bit = t.bit;
		if (!bit || eq == n) {
			log.warn("unknown parameter or missing value '%.*s' in target creation request",
				 int(min<size_t>(n, 64)), item);
			return Error(err::EINVAL);
		}
		auto r = apply(bit, item + eq + 1, n - eq - 1, o);
		if (!r) {
			log.warn("bad %.*s value '%.*s'", int(eq), item, int(min<size_t>(n - eq - 1, 64)),
				 item + eq + 1);
			return r;
		}
		o.given |= bit;
	}
	constexpr uint32_t ib = opt::id_ext | opt::ioc_guid | opt::dgid | opt::pkey | opt::service_id;
	if ((o.given & ib) != ib) {
		log.warn("target creation request is missing one or more parameters");
		return Error(err::EINVAL);
	}
	return ok();
}

Result<uint32_t> cmd_pages(uint32_t max_sect, uint32_t page_size, uint32_t max_pages)
{
	const uint64_t bytes = uint64_t(max_sect) * 512;
	const uint64_t pages = (bytes + page_size - 1) / page_size + 1;
	if (!max_sect || pages > max_pages)
		return Error(err::EINVAL);
	return static_cast<uint32_t>(pages);
}

} // namespace weft::srp
