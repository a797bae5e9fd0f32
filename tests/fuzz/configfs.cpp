// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the values user space writes to /sys/kernel/config/weft/
 * (drivers/hca/control_parse.cpp, as control.cpp calls it): a node's
 * "ports", "enable", "up" and "autoconf" (decimal numbers in a range), a
 * cable end "<device>:<port>", and the fault knobs "ppm=N count=N ms=N
 * dir=...".  The input is records (fuzz.h): a byte choosing the attribute,
 * then the bytes written.  What is accepted must be what was written: a
 * number equal to a reference reading of the digits, a device name that is
 * the bytes before the last ':' and a printable name, a fault spec in its
 * ranges that reads back the same when written out again; and a spec the
 * parser accepts must apply to a cable end's Faults without an error (the
 * control plane applies it after validating, with no way back).
 */
#include "fuzz.h"

#include <weft/log.h>

#include "../../drivers/hca/control_parse.h"
#include "../../drivers/hca/fabric.h"

using namespace weft;
using namespace weft::hca;

namespace {

/* A port to hold the Faults a spec is applied to; it never carries a packet. */
class OnePort final : public Node {
public:
	OnePort() : p_(*this, 1) {}
	void receive(Port &, Own<PacketBuf>) override {}
	Port *port(uint8_t num) override { return num == 1 ? &p_ : nullptr; }
	uint8_t port_count() const override { return 1; }
	bool is_switch() const override { return false; }

private:
	Port p_;
};

/* The digits read independently of parse_u32: accepted iff 1..10 digits whose value is <= max. */
bool reference_u32(ConstBytes t, uint32_t max, uint32_t &v)
{
	if (t.empty() || t.size() > 10)
		return false;
	uint64_t x = 0;
	for (uint8_t c : t) {
		if (c < '0' || c > '9')
			return false;
		x = x * 10 + (c - '0');
	}
	v = static_cast<uint32_t>(x);
	return x <= max;
}

void number(ConstBytes text, uint32_t max)
{
	auto r = ctl::parse_u32(ctl::Text(reinterpret_cast<const char *>(text.data()), text.size()), max);
	ConstBytes digits = text;
	if (!digits.empty() && digits[digits.size() - 1] == '\n')
		digits = ConstBytes(digits.data(), digits.size() - 1);
	uint32_t v = 0;
	const bool want = reference_u32(digits, max, v);
	fuzz::check(bool(r) == want, "a number accepted exactly when its digits are in range");
	if (r && want)
		fuzz::check(r.value() == v, "the number is what was written");
	if (!r)
		fuzz::check(r.to_errno() == -err::EINVAL, "a refused number is EINVAL");
}

void ports(ConstBytes text, bool sw)
{
	auto r = ctl::parse_ports(ctl::Text(reinterpret_cast<const char *>(text.data()), text.size()), sw, 4);
	if (r)
		fuzz::check(r.value() >= 1 && r.value() <= (sw ? ctl::max_switch_ports : 4), "ports in range");
}

void end(ConstBytes text)
{
	auto r = ctl::parse_end(ctl::Text(reinterpret_cast<const char *>(text.data()), text.size()));
	if (!r) {
		fuzz::check(r.to_errno() == -err::EINVAL, "a refused end is EINVAL");
		return;
	}
	const ctl::End &e = r.value();
	const size_t n = __builtin_strlen(e.name);
	fuzz::check(n >= 1 && n <= ctl::end_name_max, "a name of 1..23 bytes");
	fuzz::check(e.port <= ctl::max_switch_ports, "a port number 0..63");
	for (size_t i = 0; i < n; i++)
		fuzz::check(e.name[i] > ' ' && e.name[i] < 0x7f, "a printable device name");
	fuzz::check(n < text.size() && !__builtin_memcmp(e.name, text.data(), n) && text[n] == ':',
		    "the name is what was written before the ':'");
	/* Written out as control.cpp shows it, it reads back the same. */
	char spec[ctl::end_name_max + 4];
	const size_t len = format(spec, sizeof(spec), "%s:%u", e.name, e.port);
	fuzz::check(len < sizeof(spec), "an end shows whole");
	auto again = ctl::parse_end(ctl::Text(spec, len));
	fuzz::check(again && !__builtin_strcmp(again.value().name, e.name) && again.value().port == e.port,
		    "an end reads back as written");
}

void fault(ConstBytes text, FaultKind k, Faults &knobs)
{
	const bool hold = k == FaultKind::Delay || k == FaultKind::Reorder;
	auto r = ctl::parse_fault(ctl::Text(reinterpret_cast<const char *>(text.data()), text.size()), hold);
	if (!r) {
		fuzz::check(r.to_errno() == -err::EINVAL, "a refused knob is EINVAL");
		return;
	}
	const ctl::FaultSpec &s = r.value();
	fuzz::check(s.dir[0] || s.dir[1], "a knob applies to some direction");
	fuzz::check(s.ppm <= ppm_all, "ppm at most 1000000");
	fuzz::check(!s.has_ms || (hold && s.ms >= 1 && s.ms <= max_hold_ms), "ms only with a hold time, in range");
	/* As set_fault applies it: after the parse nothing may fail. */
	if (s.has_ms)
		fuzz::check(bool(knobs.set_hold_ms(k, s.ms)), "a parsed hold time applies");
	if (s.has_ppm)
		fuzz::check(bool(knobs.set_probability(k, s.ppm)), "a parsed probability applies");
	if (s.has_count)
		knobs.set_count(k, s.count);
	/* The spec written out reads back the same. */
	char out[96];
	size_t len = format(out, sizeof(out), "dir=%s", s.dir[0] && s.dir[1] ? "both" : s.dir[0] ? "ab" : "ba");
	if (s.has_ppm)
		len += format(out + len, sizeof(out) - len, " ppm=%u", s.ppm);
	if (s.has_count)
		len += format(out + len, sizeof(out) - len, " count=%u", s.count);
	if (s.has_ms)
		len += format(out + len, sizeof(out) - len, " ms=%u\n", s.ms);
	auto again = ctl::parse_fault(ctl::Text(out, len), hold);
	fuzz::check(bool(again), "a spec written out parses");
	if (!again)
		return;
	const ctl::FaultSpec &t = again.value();
	fuzz::check(t.has_ppm == s.has_ppm && t.has_count == s.has_count && t.has_ms == s.has_ms &&
			    t.ppm == s.ppm && t.count == s.count && t.ms == s.ms && t.dir[0] == s.dir[0] &&
			    t.dir[1] == s.dir[1],
		    "a spec reads back as written");
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	auto *node = new (Gfp::Sleep) OnePort;
	fuzz::check(node, "node");
	Faults &knobs = node->port(1)->faults();
	fuzz::Records in(data, size);
	ConstBytes rec;
	while (in.next(rec, 257)) {
		if (rec.empty())
			continue;
		const uint8_t op = rec[0];
		const ConstBytes text(rec.data() + 1, rec.size() - 1);
		switch (op % 8) {
		case 0: number(text, 1); break; /* enable, up, autoconf */
		case 1: number(text, op >> 3 == 0 ? UINT32_MAX : (uint32_t(op) << 20) | op); break;
		case 2: ports(text, op & 0x80); break;
		case 3: end(text); break;
		default: fault(text, static_cast<FaultKind>((op >> 3) % fault_kinds), knobs); break;
		}
	}
	knobs.clear();
	delete node;
	return 0;
}
