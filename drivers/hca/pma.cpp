// SPDX-License-Identifier: GPL-2.0
/*
 * The PMA (IBA Vol 1 16.1): which PerfMgt MADs it answers, the ports a
 * PortSelect names, and the counter attributes built from Port::counters.
 *
 * Honest zeros: the soft wire has no symbols, no link error recovery and
 * no credits, so SymbolErrorCounter, LinkErrorRecoveryCounter,
 * ExcessiveBufferOverrunErrors and PortXmitWait stay 0 (and PortXmitWait
 * is not announced).  LocalLinkIntegrityErrors counts VCRC failures past
 * PortInfo.LocalPhyErrors (trap.cpp local_phy_error).  PortRcvRemotePhysicalErrors (EBP-marked packets)
 * and the constraint errors (switch partition enforcement and raw
 * filtering, 16.1.3.5) have no source here; a CA's P_Key violations are
 * counted in PortInfo.P_KeyViolations (14.2.5.6).
 * PortRcvSwitchRelayErrors counts at a switch's ports only.
 */
#include <weft/iba/smp_attrs.h>

#include "pma.h"

namespace weft::hca::pma {

using iba::PmaMad;
using verbs::MadOutcome;
using verbs::PortCounterValues;
namespace status = iba::mad_status;
namespace method = iba::method;

uint16_t capabilities()
{
	/* AllPortSelect: PortSelect 0xFF sums and clears every port; ExtendedWidth: PortCountersExtended. */
	return iba::pma_cap::all_port_select | iba::pma_cap::ext_width;
}

namespace {

/*
 * IBA 13.4.6.2 RespTimeValue, 4.096 us << n.  The answer is built inline
 * but travels through the GSI's work queues; 14 (about 67 ms) leaves
 * room for a loaded host.
 */
constexpr uint8_t resp_time_value = 14;

/* IBA 16.1.3.5: a PortCounters field stops at its maximum, never wraps. */
template <typename T> T saturate(uint64_t v)
{
	constexpr T max = static_cast<T>(~T(0));
	return v > max ? max : static_cast<T>(v);
}

/* The ports a request names: [first, last], or none (first > last). */
struct PortRange {
	uint8_t first = 1, last = 0;
	bool empty() const { return first > last; }
};

/*
 * IBA 16.1.3.5 PortSelect: 0xFF all external ports (AllPortSelect); 0 at
 * a CA, the arrival port; 0 at a switch, its management port 0.
 */
PortRange select_ports(Node &node, const verbs::MadIn &in, uint8_t sel)
{
	const uint8_t n = node.port_count();
	if (sel == iba::pma_all_ports)
		return PortRange{1, n};
	if (sel == 0 && !node.is_switch())
		sel = in.port;
	const uint8_t lowest = node.is_switch() ? 0 : 1;
	if (sel < lowest || sel > n || !node.port(sel))
		return PortRange{};
	return PortRange{sel, sel};
}

/* The counters of @r added up (one port: just its own). */
struct Sums : PortCounterValues {
	uint64_t switch_relay_errors = 0; /* not among the verbs counters */
	uint64_t local_link_integrity = 0;
};

Sums sum(Node &node, PortRange r)
{
	Sums s;
	for (unsigned i = r.first; i <= r.last; i++) {
		const PortCounters &c = node.port(static_cast<uint8_t>(i))->counters;
		PortCounterValues v = c.read();
		s.switch_relay_errors += c.switch_relay_errors.load(Order::Relaxed);
		s.local_link_integrity += c.local_link_integrity.load(Order::Relaxed);
		s.xmit_packets += v.xmit_packets;
		s.rcv_packets += v.rcv_packets;
		s.xmit_words += v.xmit_words;
		s.rcv_words += v.rcv_words;
		s.xmit_discards += v.xmit_discards;
		s.rcv_errors += v.rcv_errors;
		s.vl15_dropped += v.vl15_dropped;
		s.link_downed += v.link_downed;
		s.unicast_xmit += v.unicast_xmit;
		s.unicast_rcv += v.unicast_rcv;
		s.multicast_xmit += v.multicast_xmit;
		s.multicast_rcv += v.multicast_rcv;
	}
	return s;
}

/* A select bit and the data path counter it clears. */
struct Clearable {
	uint16_t bit;
	Atomic<uint64_t> PortCounters::*counter;
};

/* IBA 16.1.3.5 CounterSelect: bits naming a counter Weft keeps; the rest are honest zeros. */
constexpr Clearable pc_clearable[] = {
	{iba::pc_select::link_downed, &PortCounters::link_downed},
	{iba::pc_select::rcv_errors, &PortCounters::rcv_errors},
	{iba::pc_select::rcv_switch_relay_errors, &PortCounters::switch_relay_errors},
	{iba::pc_select::local_link_integrity, &PortCounters::local_link_integrity},
	{iba::pc_select::xmit_discards, &PortCounters::xmit_discards},
	{iba::pc_select::vl15_dropped, &PortCounters::vl15_dropped},
	{iba::pc_select::xmit_data, &PortCounters::xmit_words},
	{iba::pc_select::rcv_data, &PortCounters::rcv_words},
	{iba::pc_select::xmit_packets, &PortCounters::xmit_packets},
	{iba::pc_select::rcv_packets, &PortCounters::rcv_packets},
};

/*
 * IBA 16.1.4.11 CounterSelect.  PortCountersExtended's data and packet
 * counters are the same counters as PortCounters' (one count, two
 * widths), so clearing either clears both.
 */
constexpr Clearable pcx_clearable[] = {
	{iba::pcx_select::xmit_data, &PortCounters::xmit_words},
	{iba::pcx_select::rcv_data, &PortCounters::rcv_words},
	{iba::pcx_select::xmit_packets, &PortCounters::xmit_packets},
	{iba::pcx_select::rcv_packets, &PortCounters::rcv_packets},
	{iba::pcx_select::unicast_xmit, &PortCounters::unicast_xmit},
	{iba::pcx_select::unicast_rcv, &PortCounters::unicast_rcv},
	{iba::pcx_select::multicast_xmit, &PortCounters::multicast_xmit},
	{iba::pcx_select::multicast_rcv, &PortCounters::multicast_rcv},
};

template <size_t N> void clear(Node &node, PortRange r, uint16_t select, const Clearable (&table)[N])
{
	for (unsigned i = r.first; i <= r.last; i++) {
		PortCounters &c = node.port(static_cast<uint8_t>(i))->counters;
		for (const Clearable &k : table)
			if (select & k.bit)
				PortCounters::clear(c.*k.counter);
	}
}

/* One PerfMgt request being answered. */
struct Ctx {
	Node &node;
	const verbs::MadIn &in;
	const PmaMad &req;
	PmaMad &resp;
	bool set;

	template <typename T> const T &in_data() const { return *reinterpret_cast<const T *>(req.data); }
	template <typename T> T &out_data() { return *reinterpret_cast<T *>(resp.data); }
};

/* IBA 13.4.8.1 ClassPortInfo: no redirection, no traps. */
uint16_t class_port_info(Ctx &c)
{
	if (c.set)
		return status::attr_unsupported; /* nothing in it is settable here */
	auto &cpi = c.out_data<iba::ClassPortInfo>();
	cpi.base_version.set(1);
	cpi.class_version.set(iba::pma_class_version);
	cpi.capability_mask.set(capabilities());
	iba::ClassPortInfo::RespTimeValue::set(cpi.cap2_resp_time, resp_time_value);
	return status::ok;
}

void fill_counters(iba::PortCounters &pc, const Sums &v)
{
	pc.link_downed.set(saturate<uint8_t>(v.link_downed));
	pc.rcv_errors.set(saturate<uint16_t>(v.rcv_errors));
	pc.rcv_switch_relay_errors.set(saturate<uint16_t>(v.switch_relay_errors));
	/* A 4-bit counter (IBA 16.1.3.5): it stops at 15. */
	iba::PortCounters::LocalLinkIntegrity::set(pc.link_integrity_overrun,
						   static_cast<uint8_t>(min(v.local_link_integrity, uint64_t(15))));
	pc.xmit_discards.set(saturate<uint16_t>(v.xmit_discards));
	pc.vl15_dropped.set(saturate<uint16_t>(v.vl15_dropped));
	pc.xmit_data.set(saturate<uint32_t>(v.xmit_words));
	pc.rcv_data.set(saturate<uint32_t>(v.rcv_words));
	pc.xmit_packets.set(saturate<uint32_t>(v.xmit_packets));
	pc.rcv_packets.set(saturate<uint32_t>(v.rcv_packets));
}

/*
 * Both counter attributes (IBA 16.1.3.5, 16.1.4.11): the selects echoed,
 * the ports PortSelect names (empty: a bad one), and on a Set the counters
 * CounterSelect names cleared before the answer reads them.
 */
template <typename T, size_t N> PortRange select_and_clear(Ctx &c, const Clearable (&table)[N])
{
	const auto &rq = c.in_data<T>();
	auto &pc = c.out_data<T>();
	pc.port_select = rq.port_select;
	pc.counter_select = rq.counter_select;
	pc.counter_select2 = rq.counter_select2;
	PortRange r = select_ports(c.node, c.in, rq.port_select.get());
	if (!r.empty() && c.set)
		clear(c.node, r, rq.counter_select.get(), table);
	return r;
}

/* IBA 16.1.3.5 PortCounters: Set clears what CounterSelect names, then both answer the values. */
uint16_t port_counters(Ctx &c)
{
	PortRange r = select_and_clear<iba::PortCounters>(c, pc_clearable);
	if (r.empty())
		return status::invalid_value;
	fill_counters(c.out_data<iba::PortCounters>(), sum(c.node, r));
	return status::ok;
}

/* IBA 16.1.4.11 PortCountersExtended: the same counters, 64 bits wide, plus unicast/multicast. */
uint16_t port_counters_ext(Ctx &c)
{
	PortRange r = select_and_clear<iba::PortCountersExt>(c, pcx_clearable);
	if (r.empty())
		return status::invalid_value;
	auto &pc = c.out_data<iba::PortCountersExt>();
	const Sums v = sum(c.node, r);
	pc.xmit_data.set(v.xmit_words);
	pc.rcv_data.set(v.rcv_words);
	pc.xmit_packets.set(v.xmit_packets);
	pc.rcv_packets.set(v.rcv_packets);
	pc.unicast_xmit_packets.set(v.unicast_xmit);
	pc.unicast_rcv_packets.set(v.unicast_rcv);
	pc.multicast_xmit_packets.set(v.multicast_xmit);
	pc.multicast_rcv_packets.set(v.multicast_rcv);
	return status::ok;
}

struct Attr {
	uint16_t id;
	uint16_t (*fn)(Ctx &c);
};

constexpr Attr attrs[] = {
	{iba::pma_attr::class_port_info, class_port_info},
	{iba::pma_attr::port_counters, port_counters},
	{iba::pma_attr::port_counters_ext, port_counters_ext},
};

/* IBA 13.4.7: an unknown attribute is "method/attribute combination not supported". */
uint16_t dispatch(Ctx &c)
{
	const uint16_t id = c.req.hdr.attr_id.get();
	for (const Attr &a : attrs)
		if (a.id == id)
			return c.req.hdr.attr_mod.get() ? status::invalid_value : a.fn(c);
	return status::attr_unsupported;
}

/* The request turned into its GetResp (IBA 13.4.5: Set is answered with GetResp too). */
void begin_response(const PmaMad &req, PmaMad &resp)
{
	__builtin_memcpy(&resp, &req, sizeof(PmaMad));
	resp.hdr.method.set(method::get_resp);
	resp.hdr.status.set(status::ok);
	__builtin_memset(resp.data, 0, sizeof(resp.data));
}

} // namespace

MadOutcome process(Node &node, const verbs::MadIn &in, const PmaMad &req, PmaMad &resp)
{
	if (req.hdr.mgmt_class.get() != iba::mgmt_class::perf || iba::MadHeader::Response::get(req.hdr.method))
		return MadOutcome::NotMine;
	if (req.hdr.base_version.get() != 1)
		return MadOutcome::Consumed;
	begin_response(req, resp);
	const uint8_t mth = req.hdr.method.get();
	uint16_t st;
	if (req.hdr.class_version.get() != iba::pma_class_version) {
		st = status::bad_version;
	} else if (mth != method::get && mth != method::set) {
		st = status::method_unsupported; /* the counters have Get and Set only (IBA 16.1.2) */
	} else {
		Ctx c{node, in, req, resp, mth == method::set};
		st = dispatch(c);
	}
	resp.hdr.status.set(st);
	return MadOutcome::Reply;
}

} // namespace weft::hca::pma
