// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the MAD service's receive path (core/mad/service.cpp,
 * service_rmpp.cpp; IBA 13.4-13.6) with the agents a port has: an SA
 * client doing RMPP, a vendor class (range 2, RMPP, an OUI) that answers
 * Gets with a long RMPP response, and a PerfMgt server.  Each starts a
 * request, so that responses can match.  The input is records (fuzz.h):
 * a control byte, then a MAD.  Control bits 0-1 give the MAD the TID and
 * class of request 1-3 (a response that matches, or an ACK/STOP/ABORT of
 * a transfer in flight); bit 2 lets the next byte x 8 ms pass first
 * (timeouts, retries, RMPP windows resent); bit 3 makes the transport
 * refuse the next transmit.  At the end every agent is unregistered:
 * each request that send() took must have had exactly one send_done, and
 * everything is freed (LeakSanitizer).
 */
#include "fuzz.h"

#include <weft/mad/service.h>

using namespace weft;
using namespace weft::mad;

namespace {

struct Wire final : MadTransport {
	uint32_t sent = 0;
	bool fail_next = false;
	Result<void> transmit(const Mad &, const MadAddr &) override
	{
		sent++;
		if (exchange(fail_next, false))
			return Error(err::ENOBUFS);
		return ok();
	}
};

constexpr uint8_t sa_class = iba::mgmt_class::subn_adm, vendor_class = 0x30, perf_class = 0x04;
constexpr uint32_t vendor_oui = 0x001405;
constexpr uint8_t get = 0x01, get_resp = 0x81, get_table = 0x12;

struct Handler final : AgentHandler {
	MadService *svc = nullptr;
	uint32_t done[3] = {};
	SendReq *reqs[3] = {};
	uint8_t long_reply[900];

	void recv(Agent &a, const Mad &m, const MadAddr &from) override
	{
		/* The vendor agent answers a Get with a message of several segments. */
		if (!a.rmpp || a.mgmt_class != vendor_class || m.hdr().method.get() != get)
			return;
		SendReq r;
		__builtin_memcpy(long_reply, m.bytes, 40);
		long_reply[3] = get_resp;
		for (size_t i = 40; i < sizeof(long_reply); i++)
			long_reply[i] = uint8_t(i);
		r.long_msg = ConstBytes(long_reply, sizeof(long_reply));
		r.to = from;
		(void)svc->send(a, r);
	}
	void send_done(Agent &, SendReq &r) override
	{
		for (int i = 0; i < 3; i++)
			if (reqs[i] == &r)
				done[i]++;
	}
};

void request(Mad &m, uint8_t cls, uint8_t version, uint8_t method, uint32_t tid)
{
	__builtin_memset(m.bytes, 0, sizeof(m.bytes));
	m.hdr().base_version.set(1);
	m.hdr().mgmt_class.set(cls);
	m.hdr().class_version.set(version);
	m.hdr().method.set(method);
	m.hdr().tid.set(tid);
	if (cls == vendor_class) {
		m.bytes[37] = uint8_t(vendor_oui >> 16);
		m.bytes[38] = uint8_t(vendor_oui >> 8);
		m.bytes[39] = uint8_t(vendor_oui);
	}
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	Wire wire;
	Handler h;
	auto *svc = new (Gfp::Sleep) MadService(wire);
	fuzz::check(svc, "service");
	h.svc = svc;
	Agent sa(h, sa_class, 2), vendor(h, vendor_class, 1), perf(h, perf_class, 1);
	sa.rmpp = true;
	vendor.rmpp = true;
	vendor.oui = vendor_oui;
	vendor.add_method(get);
	perf.add_method(get);
	Agent *agents[3] = {&sa, &vendor, &perf};
	for (Agent *a : agents)
		fuzz::check(svc->register_agent(*a).ok(), "agent registered");

	/* One request each, waiting for its response (IBA 13.4.6.4 TIDs). */
	const uint8_t classes[3] = {sa_class, vendor_class, perf_class};
	const uint8_t versions[3] = {2, 1, 1};
	const uint8_t methods[3] = {get_table, get, get};
	bool taken[3] = {};
	for (int i = 0; i < 3; i++) {
		SendReq *r = new (Gfp::Sleep) SendReq;
		fuzz::check(r, "request");
		h.reqs[i] = r;
		request(r->mad, classes[i], versions[i], methods[i], 0x100u + i);
		r->to = MadAddr{1, 1, 0x80010000, 0, 0};
		r->timeout_ms = 100;
		r->retries = 2;
		taken[i] = svc->send(*agents[i], *r).ok();
	}

	fuzz::Records in(data, size);
	ConstBytes rec;
	const MadAddr from{2, 1, 0x80010000, 0, 0};
	while (in.next(rec, 1 + iba::mad_size)) {
		if (rec.empty())
			continue;
		const uint8_t ctl = rec[0];
		Mad m;
		__builtin_memset(m.bytes, 0, sizeof(m.bytes));
		__builtin_memcpy(m.bytes, rec.data() + 1, rec.size() - 1);
		if (ctl & 3) {
			const SendReq &r = *h.reqs[(ctl & 3) - 1];
			m.hdr().tid.set(r.mad.hdr().tid.get());
			m.hdr().mgmt_class.set(r.mad.hdr().mgmt_class.get());
		}
		if (ctl & 4)
			weft_host_advance(unsigned(in.byte()) * 8);
		wire.fail_next = ctl & 8;
		svc->receive(m, from);
	}
	weft_host_advance(10000); /* every timer runs out */

	for (Agent *a : agents)
		svc->unregister_agent(*a);
	for (int i = 0; i < 3; i++)
		fuzz::check(h.done[i] == (taken[i] ? 1u : 0u), "one send_done per request taken");
	delete svc;
	for (SendReq *r : h.reqs)
		delete r;
	weft_host_advance(10000);
	return 0;
}
