// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the SA client's reading of responses (IBA Vol 1 15.2.1.1,
 * core/mad/sa_records.cpp), as SaPort and its callers read them: the
 * status, the one record of a Get/Set (PathRecord, MCMemberRecord,
 * ClassPortInfo) and the records of a GetTable (ServiceRecords at the
 * response's AttributeOffset).  The input is records (fuzz.h Records);
 * its first byte picks where the response comes from:
 *  - even: the first record is one response MAD (a 256-byte answer);
 *  - odd: every record is an RMPP DATA segment into a Receiver, as the
 *    MAD service reassembles a GetTable answer; a completed message is
 *    read from a buffer of exactly its length, so that reading past its
 *    end is an AddressSanitizer report.
 * Whatever is read must lie inside the response.
 */
#include "fuzz.h"

#include <weft/alloc.h>

#include <weft/iba/pma.h>

#include "../../core/mad/rmpp.h"
#include "../../core/mad/sa_records.h"

using namespace weft;
using namespace weft::mad;

namespace {

void read_response(const uint8_t *msg, size_t len)
{
	int e = sa::status_errno(uint16_t(msg[4]) << 8 | msg[5]);
	fuzz::check(e == 0 || e == err::ENOENT || e == err::EREMOTEIO, "an SA status is one of three errnos");
	auto got = sa::Records::of(msg, len);
	fuzz::check(bool(got) == (len >= iba::sa_data_offset), "records of exactly what holds the headers");
	if (!got)
		return;
	const sa::Records &recs = got.value();
	const size_t room = len - iba::sa_data_offset;
	iba::PathRecord path;
	iba::McMemberRecord mc;
	iba::ClassPortInfo cpi;
	fuzz::check(bool(recs.first(&path, sizeof(path))) == (sizeof(path) <= room), "PathRecord when it fits");
	fuzz::check(bool(recs.first(&mc, sizeof(mc))) == (sizeof(mc) <= room), "MCMemberRecord when it fits");
	fuzz::check(bool(recs.first(&cpi, sizeof(cpi))) == (sizeof(cpi) <= room), "ClassPortInfo when it fits");
	/* sa::get_services: up to its caller's array, counting them all. */
	iba::ServiceRecord out[8];
	size_t n = recs.count();
	const size_t stride = size_t(reinterpret_cast<const iba::SaHeader *>(msg + iba::sa_header_offset)->attr_offset.get()) * 8;
	fuzz::check(n * stride <= room, "GetTable records inside the response");
	for (size_t i = 0; i < n && i < 8; i++)
		recs.copy(i, &out[i], sizeof(out[i]));
}

void one_mad(fuzz::Records &in)
{
	ConstBytes rec;
	if (!in.next(rec, iba::mad_size))
		return;
	Mad m;
	__builtin_memset(m.bytes, 0, sizeof(m.bytes));
	__builtin_memcpy(m.bytes, rec.data(), rec.size());
	read_response(m.bytes, iba::mad_size);
}

void reassembled(fuzz::Records &in)
{
	rmpp::Receiver r(rmpp::max_message(iba::mgmt_class::subn_adm));
	ConstBytes rec;
	Mad seg;
	while (in.next(rec, iba::mad_size)) {
		__builtin_memset(seg.bytes, 0, sizeof(seg.bytes));
		__builtin_memcpy(seg.bytes, rec.data(), rec.size());
		seg.bytes[1] = iba::mgmt_class::subn_adm;
		auto step = r.add(seg, Gfp::Sleep);
		if (step == rmpp::Receiver::Step::Abort)
			return;
		if (step != rmpp::Receiver::Step::Done)
			continue;
		size_t len = 0;
		Array<uint8_t> whole = r.take(len);
		if (!len)
			return;
		/* Exactly the message's length, as SaPort::Answer's len says it. */
		auto exact = Array<uint8_t>::make(Gfp::Sleep, len, Sized::ByInput);
		if (!exact)
			return;
		__builtin_memcpy(exact.value().data(), whole.data(), len);
		read_response(exact.value().data(), len);
		return;
	}
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	fuzz::Records in(data, size);
	if (in.byte() & 1)
		reassembled(in);
	else
		one_mad(in);
	return 0;
}
