/* SPDX-License-Identifier: GPL-2.0 */
/* SMPs as an SM would send them, for the SMA and SMI suites. */
#ifndef WEFT_HCA_TESTS_SMP_FIXTURE_H
#define WEFT_HCA_TESTS_SMP_FIXTURE_H

#include <weft/iba/smp_attrs.h>
#include <weft/verbs/verbs.h>

namespace weft::hca::fixture {

/* A request of @cls (0x01 or 0x81, a zero-hop directed route), everything else zero. */
inline void smp_request(iba::Smp &s, uint8_t cls, uint8_t method, uint16_t attr, uint32_t mod = 0,
			uint64_t m_key = 0)
{
	s = iba::Smp{};
	s.base_version.set(1);
	s.mgmt_class.set(cls);
	s.class_version.set(1);
	s.method.set(method);
	s.tid.set(0x1234);
	s.attr_id.set(attr);
	s.attr_mod.set(mod);
	s.m_key.set(m_key);
	if (cls == iba::mgmt_class::subn_directed_route) {
		s.dr_slid.set(iba::permissive_lid);
		s.dr_dlid.set(iba::permissive_lid);
	}
}

/* Two SMPs, a request and its response, on the heap (too big for a test's stack frame with lockdep). */
struct SmpPair {
	iba::Smp req, resp;

	template <typename T> T &data() { return *reinterpret_cast<T *>(req.data); }
	template <typename T> const T &got() const { return *reinterpret_cast<const T *>(resp.data); }
	uint16_t status() const { return iba::Smp::Status::get(resp.status); }

	/* Offer the request to @dev's process_mad as arriving on @port. */
	verbs::MadOutcome ask(verbs::Device &dev, uint8_t port)
	{
		verbs::MadIn in;
		in.port = port;
		resp = iba::Smp{};
		return dev.process_mad(in, reinterpret_cast<const uint8_t *>(&req), reinterpret_cast<uint8_t *>(&resp));
	}
	/* A Get of @attr; the response stays in resp. */
	verbs::MadOutcome get(verbs::Device &dev, uint8_t port, uint16_t attr, uint32_t mod = 0, uint64_t key = 0)
	{
		smp_request(req, iba::mgmt_class::subn_lid_routed, iba::method::get, attr, mod, key);
		return ask(dev, port);
	}
	/* Turn the last response into a Set of the same attribute (the SM's read-modify-write). */
	void to_set(uint64_t key = 0)
	{
		iba::Smp r = resp;
		smp_request(req, iba::mgmt_class::subn_lid_routed, iba::method::set, r.attr_id.get(), r.attr_mod.get(), key);
		__builtin_memcpy(req.data, r.data, sizeof(req.data));
	}
};

} // namespace weft::hca::fixture

#endif
