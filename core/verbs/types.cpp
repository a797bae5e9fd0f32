// SPDX-License-Identifier: GPL-2.0
/* Verbs vocabulary helpers: GIDs, the IBA time encodings, names. */
#include <weft/verbs/types.h>
#include <weft/wire.h>

namespace weft::verbs {

uint64_t Gid::subnet_prefix() const
{
	return reinterpret_cast<const be64 *>(raw)->get();
}

uint64_t Gid::interface_id() const
{
	return reinterpret_cast<const be64 *>(raw + 8)->get();
}

Gid Gid::make(uint64_t prefix, uint64_t guid)
{
	Gid g;
	reinterpret_cast<be64 *>(g.raw)->set(prefix);
	reinterpret_cast<be64 *>(g.raw + 8)->set(guid);
	return g;
}

/* IBA 9.7.5.2.8 Table 45: the RNR NAK timer field, in microseconds. */
uint32_t rnr_timer_us(uint8_t code)
{
	static constexpr uint32_t table[32] = {
		655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,    320,
		480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240,  15360,
		20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};
	return table[code & 31];
}

/* IBA 9.7.6.1.3: local ACK timeout = 4.096 us * 2^code; 0 means none. */
uint64_t ack_timeout_us(uint8_t code)
{
	if (code == 0)
		return 0;
	return (4096ull << (code & 31)) / 1000;
}

const char *wc_status_str(WcStatus s)
{
	static constexpr const char *names[] = {
		"success",	     "local length error", "local QP operation error",
		"local EE context operation error", "local protection error", "WR flushed",
		"memory window bind error", "bad response", "local access error",
		"remote invalid request", "remote access error", "remote operation error",
		"transport retry counter exceeded", "RNR retry counter exceeded",
		"local RDD violation", "remote invalid RD request", "remote aborted",
		"invalid EE context number", "invalid EE context state", "fatal error",
		"response timeout", "general error",
	};
	auto i = static_cast<size_t>(s);
	return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

const char *qp_state_str(QpState s)
{
	static constexpr const char *names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	auto i = static_cast<size_t>(s);
	return i < 7 ? names[i] : "unknown";
}

const char *port_state_str(PortState s)
{
	static constexpr const char *names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE" };
	auto i = static_cast<size_t>(s);
	return i < 5 ? names[i] : "unknown";
}

} // namespace weft::verbs
