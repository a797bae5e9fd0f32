// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of each fuzz target (tests/fuzz/corpus/<target>/):
 * valid inputs made by Weft's own builders, as the KUnit suites make them
 * (drivers/hca/tests/sample_packet.h, the RMPP Sender, DR SMPs along a
 * path, the MAD service's responses and strays).  `make -C tests/fuzz seeds` regenerates them; the result is
 * committed, next to the regression inputs of every finding.
 */
#include "seeds.h"

#include <weft/iba/cm.h>
#include <weft/iba/dr.h>
#include <weft/iba/pma.h>
#include <weft/iba/sa.h>
#include <weft/iba/smp_attrs.h>

#include "../../core/mad/rmpp.h"
#include "../../drivers/hca/packet.h"
#include "../../drivers/hca/tests/sample_packet.h"
#include "../../ulp/ipoib/addr.h"
#include "../../ulp/ipoib/cm_proto.h"
#include "../../ulp/iser/initiator/pdu.h"
#include "../../ulp/srp/srp_wire.h"
#include "../../userspace/umad/abi.h"

extern "C" int weft_fuzz_write(const char *dir, const char *name, const void *data, size_t len);

using namespace weft;
using fuzz::Out;
using fuzz::put;

namespace {

const char *root;

WEFT_PRINTF(3, 4) void format(char *buf, size_t size, const char *fmt, ...)
{
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	weft_vsnprintf(buf, size, fmt, ap);
	__builtin_va_end(ap);
}


/* Every opcode Weft speaks, with and without a GRH, with a payload where the opcode carries one. */
void packets()
{
	uint8_t payload[300], wire[512];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = uint8_t(i * 7);
	for (unsigned opc = 0; opc < 256; opc++) {
		const iba::OpcodeInfo &op = iba::opcode_info(uint8_t(opc));
		if (!op.valid)
			continue;
		for (int grh = 0; grh < 2; grh++) {
			size_t plen = op.payload ? (opc % 3 == 0 ? 256 : 13) : 0;
			hca::PacketSpec s = hca::fixture::sample(uint8_t(opc), ConstBytes(payload, plen), grh);
			auto len = hca::build(Bytes(wire, sizeof(wire)), s);
			if (!len)
				continue;
			char name[64];
			format(name, sizeof(name), "op%02x%s", opc, grh ? "-grh" : "");
			put("packet", name, wire, len.value());
		}
	}
}

/* A message of @len bytes of class @cls, as an agent would send it. */
void message(uint8_t *m, size_t len, uint8_t cls)
{
	for (size_t i = 0; i < len; i++)
		m[i] = uint8_t(i * 13 + 1);
	m[0] = 1;
	m[1] = cls;
	m[2] = 2;
	m[3] = 0x12; /* GetTableResp */
}

void rmpp_seeds()
{
	static const uint8_t classes[] = {iba::mgmt_class::subn_adm, 0x30 /* vendor range 2 */, 0x05 /* dev_mgt */};
	static const size_t lens[] = {100, 256, 600, 3000};
	for (uint8_t cls : classes) {
		for (size_t len : lens) {
			uint8_t msg[4096];
			message(msg, len, cls);
			char name[64];
			/* Receiving: the Sender's segments, in order, as they come off the wire. */
			auto s = mad::rmpp::Sender::make(ConstBytes(msg, len));
			if (!s)
				continue;
			Out rx;
			rx.byte(0);
			mad::Mad seg;
			for (uint32_t n = 1; n <= s.value()->count(); n++) {
				s.value()->build(n, seg);
				rx.record(seg.bytes, sizeof(seg.bytes));
			}
			format(name, sizeof(name), "rx-%02x-%zu", cls, len);
			put("rmpp", name, rx.buf, rx.n);
			/* Sending: the message, then ACKs opening the window step by step. */
			Out tx;
			tx.byte(1);
			tx.record(msg, len);
			for (uint32_t a = 1; a <= s.value()->count(); a++) {
				uint8_t ack[8] = {uint8_t(a >> 8), uint8_t(a), uint8_t((a + 16) >> 8), uint8_t(a + 16)};
				tx.record(ack, sizeof(ack));
			}
			format(name, sizeof(name), "tx-%02x-%zu", cls, len);
			put("rmpp", name, tx.buf, tx.n);
		}
	}
}

/*
 * Directed-route SMPs: a path of @hops switches to a CA, purely directed
 * or with a LID-routed leg, and the nodes and arrival ports along it.
 */
void smi_seeds()
{
	for (unsigned hops = 0; hops <= 6; hops++) {
		for (int lid_leg = 0; lid_leg < 2; lid_leg++) {
			Out o;
			iba::Smp smp;
			__builtin_memset(&smp, 0, sizeof(smp));
			smp.base_version.set(1);
			smp.mgmt_class.set(iba::mgmt_class::subn_directed_route);
			smp.class_version.set(1);
			smp.method.set(1);
			smp.hop_count.set(uint8_t(hops));
			smp.attr_id.set(0x0011);
			smp.dr_slid.set(iba::permissive_lid);
			smp.dr_dlid.set(lid_leg ? 0x0005 : iba::permissive_lid);
			for (unsigned h = 1; h <= hops; h++)
				smp.initial_path[h] = uint8_t(1 + h % 4);
			__builtin_memcpy(o.buf, &smp, sizeof(smp));
			o.n = sizeof(smp);
			/* The SM's node: a CA with 2 ports (or a switch of 8 when it routes by LID). */
			o.byte(lid_leg ? (8 << 1 | 1) : (2 << 1));
			o.byte(0);
			/* Out: switches of 8 ports, the last node a CA; then the same way back. */
			for (unsigned h = 1; h <= hops + lid_leg; h++) {
				o.byte(h == hops + lid_leg ? (2 << 1) : (8 << 1 | 1));
				o.byte(uint8_t(1 + (h + 1) % 4));
			}
			for (unsigned h = 0; h <= hops + lid_leg; h++) {
				o.byte(8 << 1 | 1);
				o.byte(uint8_t(1 + h % 8));
			}
			char name[64];
			format(name, sizeof(name), "dr-%u%s", hops, lid_leg ? "-lid" : "");
			put("smi", name, o.buf, o.n);
		}
	}
}

/* A MAD record of the mad target: control byte, then the MAD. */
void mad_record(Out &o, uint8_t ctl, const uint8_t *mad)
{
	uint8_t rec[1 + iba::mad_size];
	rec[0] = ctl;
	__builtin_memcpy(rec + 1, mad, iba::mad_size);
	o.record(rec, sizeof(rec));
}

void header(uint8_t *m, uint8_t cls, uint8_t version, uint8_t method, uint64_t tid)
{
	__builtin_memset(m, 0, iba::mad_size);
	auto &h = *reinterpret_cast<iba::MadHeader *>(m);
	h.base_version.set(1);
	h.mgmt_class.set(cls);
	h.class_version.set(version);
	h.method.set(method);
	h.tid.set(tid);
}

/* The MAD service's traffic (mad.cpp): responses to its three requests, a long vendor answer, strays. */
void mad_seeds()
{
	uint8_t m[iba::mad_size];
	/* SA GetTableResp in RMPP segments, matched to request 1, with time passing between. */
	static const size_t lens[] = {300, 1000};
	for (size_t len : lens) {
		Out o;
		uint8_t msg[1024];
		message(msg, len, iba::mgmt_class::subn_adm);
		msg[3] = 0x92;
		auto s = mad::rmpp::Sender::make(ConstBytes(msg, len));
		if (!s)
			continue;
		mad::Mad seg;
		for (uint32_t n = 1; n <= s.value()->count(); n++) {
			s.value()->build(n, seg);
			mad_record(o, n == 2 ? (1 | 4) : 1, seg.bytes);
			if (n == 2)
				o.byte(3);
		}
		char name[64];
		format(name, sizeof(name), "sa-table-%zu", len);
		put("mad", name, o.buf, o.n);
	}
	/* PerfMgt and vendor GetResp matched to requests 3 and 2; then the timers run out. */
	{
		Out o;
		header(m, 0x04, 1, 0x81, 0);
		mad_record(o, 3, m);
		header(m, 0x30, 1, 0x81, 0);
		mad_record(o, 2, m);
		put("mad", "responses", o.buf, o.n);
	}
	/* A vendor Get its agent answers with four segments, then the peer's ACKs (IBA 13.6.5.1). */
	{
		Out o;
		header(m, 0x30, 1, 0x01, 0x77);
		m[37] = 0x00, m[38] = 0x14, m[39] = 0x05;
		mad_record(o, 0, m);
		for (uint32_t a = 1; a <= 4; a++) {
			header(m, 0x30, 1, 0x01, 0x77);
			m[37] = 0x00, m[38] = 0x14, m[39] = 0x05;
			auto &r = mad::rmpp::header(m);
			r.version.set(1);
			r.type.set(iba::rmpp_type::ack);
			iba::RmppHeader::Flags::set(r.rtime_flags, iba::rmpp_flag::active);
			r.seg_num.set(a);
			r.paylen_newwin.set(a + 1);
			mad_record(o, a == 2 ? 4 : 0, m);
			if (a == 2)
				o.byte(200);
		}
		put("mad", "vendor-long-answer", o.buf, o.n);
	}
	/* Strays: a Get nobody serves, a served class in another version, a bad base version, a Report. */
	{
		Out o;
		header(m, 0x21, 1, 0x01, 5);
		mad_record(o, 0, m);
		header(m, 0x04, 2, 0x01, 6);
		mad_record(o, 0, m);
		header(m, 0x04, 1, 0x01, 7);
		m[0] = 2;
		mad_record(o, 8, m);
		header(m, 0x03, 2, 0x06, 8);
		mad_record(o, 0, m);
		put("mad", "strays", o.buf, o.n);
	}
}

/*
 * The CA's firmware agents (sma.cpp target): a Get of every SMP attribute,
 * LID routed and zero-hop directed, on either port; the PMA's attributes;
 * Sets of what a Get returns are left to the fuzzer's mutations.
 */
void sma_seeds(const char *target)
{
	static const uint16_t attrs[] = {
		iba::smp_attr::node_description, iba::smp_attr::node_info, iba::smp_attr::switch_info,
		iba::smp_attr::guid_info, iba::smp_attr::port_info, iba::smp_attr::pkey_table,
		iba::smp_attr::sl_to_vl_table, iba::smp_attr::vl_arbitration, iba::smp_attr::linear_fdb,
		iba::smp_attr::multicast_fdb, iba::smp_attr::sm_info, iba::smp_attr::notice,
	};
	uint8_t m[iba::mad_size];
	for (int dr = 0; dr < 2; dr++) {
		Out o;
		for (uint16_t a : attrs) {
			header(m, dr ? iba::mgmt_class::subn_directed_route : iba::mgmt_class::subn_lid_routed, 1,
			       0x01, 0x1000 + a);
			auto &smp = *reinterpret_cast<iba::Smp *>(m);
			smp.attr_id.set(a);
			smp.attr_mod.set(a == iba::smp_attr::port_info ? 1 : 0);
			if (dr) {
				smp.dr_slid.set(iba::permissive_lid);
				smp.dr_dlid.set(iba::permissive_lid);
			}
			mad_record(o, a & 1 ? 0x40 : 0, m);
		}
		put(target, dr ? "smp-get-all-dr" : "smp-get-all", o.buf, o.n);
	}
	/* M_Key set on PortInfo, then a Get with the wrong key after the lease ran out. */
	{
		Out o;
		header(m, iba::mgmt_class::subn_lid_routed, 1, 0x02, 0x2000);
		auto &smp = *reinterpret_cast<iba::Smp *>(m);
		smp.attr_id.set(iba::smp_attr::port_info);
		smp.attr_mod.set(1);
		auto &pi = *reinterpret_cast<iba::PortInfo *>(smp.data);
		pi.m_key.set(0x1122334455667788ull);
		pi.lid.set(5);
		pi.master_sm_lid.set(1);
		mad_record(o, 0, m);
		header(m, iba::mgmt_class::subn_lid_routed, 1, 0x01, 0x2001);
		smp.attr_id.set(iba::smp_attr::port_info);
		smp.attr_mod.set(1);
		smp.m_key.set(7);
		mad_record(o, 0x80 | 10, m);
		put(target, "m-key", o.buf, o.n);
	}
	/* PMA: ClassPortInfo, PortCounters(Extended) of each port and of all, a clearing Set. */
	{
		Out o;
		static const uint16_t pattrs[] = {iba::pma_attr::class_port_info, iba::pma_attr::port_counters,
						  iba::pma_attr::port_counters_ext};
		for (uint16_t a : pattrs) {
			static const uint8_t ports[] = {1, 2, 0xff};
			for (uint8_t port : ports) {
				header(m, 0x04, 1, 0x01, 0x3000 + a);
				auto &p = *reinterpret_cast<iba::PmaMad *>(m);
				p.hdr.attr_id.set(a);
				p.data[1] = port;
				mad_record(o, 0, m);
			}
		}
		header(m, 0x04, 1, 0x02, 0x3100);
		auto &p = *reinterpret_cast<iba::PmaMad *>(m);
		p.hdr.attr_id.set(iba::pma_attr::port_counters);
		p.data[1] = 1;
		p.data[2] = 0xff;
		p.data[3] = 0xff;
		mad_record(o, 0, m);
		put(target, "pma", o.buf, o.n);
	}
}

/* umad (umad.cpp): an operation byte, then its argument. */
void umad_op(Out &o, uint8_t op, const void *arg, size_t len)
{
	uint8_t rec[4200];
	rec[0] = op;
	__builtin_memcpy(rec + 1, arg, len);
	o.record(rec, len + 1);
}

/* Register, send a request and take its answer, serve a class and read what arrives. */
void umad_seeds()
{
	for (int rmpp = 0; rmpp < 2; rmpp++) {
		Out o;
		umad::abi::RegReq2 r2{};
		r2.qpn = 1;
		r2.mgmt_class = rmpp ? iba::mgmt_class::subn_adm : 0x04;
		r2.mgmt_class_version = rmpp ? 2 : 1;
		r2.rmpp_version = rmpp ? 1 : 0;
		r2.method_mask[0] = rmpp ? 0 : 0x2; /* a PerfMgt server: Get */
		umad_op(o, 1, &r2, sizeof(r2));
		/* write: the 64-byte header, then a request (a Get, or an SA GetTable). */
		uint8_t w[64 + iba::mad_size] = {};
		auto &h = *reinterpret_cast<umad::abi::Hdr *>(w);
		h.timeout_ms = 100;
		h.retries = 1;
		h.qpn.set(1);
		h.qkey.set(0x80010000);
		h.lid.set(3);
		header(w + 64, r2.mgmt_class, r2.mgmt_class_version, rmpp ? 0x12 : 0x01, 0x55);
		umad_op(o, 4, w, sizeof(w));
		o.byte(0); /* the write claims what it has */
		/* the answer (method | 0x80, same TID), then read it. */
		const uint8_t none[1] = {0};
		umad_op(o, 7, none, 0);
		uint8_t rd[1] = {0};
		umad_op(o, 5, rd, 0);
		/* A Get arriving for the served class, read with room for header and MAD. */
		uint8_t m[iba::mad_size];
		header(m, 0x04, 1, 0x01, 0x99);
		umad_op(o, 6, m, sizeof(m));
		uint8_t big[320] = {};
		umad_op(o, 5, big, sizeof(big));
		/* Time passing, an unregister, and a write that claims 4 GiB. */
		const uint8_t t[1] = {50};
		umad_op(o, 8, t, 1);
		umad_op(o, 4, w, sizeof(w));
		o.byte(0xff);
		const uint32_t id = 0;
		umad_op(o, 2, &id, sizeof(id));
		put("umad", rmpp ? "sa-client" : "perf-server", o.buf, o.n);
	}
	/* The old ioctl and header, ENABLE_PKEY after it (EINVAL), a QP0 agent. */
	{
		Out o;
		umad::abi::RegReq r{};
		r.qpn = 0;
		r.mgmt_class = iba::mgmt_class::subn_lid_routed;
		r.mgmt_class_version = 1;
		r.method_mask[0] = 0x2;
		umad_op(o, 0, &r, sizeof(r));
		umad_op(o, 3, &r, 0);
		uint8_t m[iba::mad_size];
		header(m, iba::mgmt_class::subn_lid_routed, 1, 0x01, 0x42);
		umad_op(o, 6, m, sizeof(m));
		uint8_t big[320] = {};
		umad_op(o, 5, big, sizeof(big));
		put("umad", "qp0-old-abi", o.buf, o.n);
	}
}

/* SRP target (srpt.cpp): a login for its port, SRP_CMDs of each format, a response with sense. */
void srpt_seeds()
{
	using namespace srp::wire;
	uint8_t b[1 + sizeof(Cmd) + sizeof(IndirectHdr) + 16 * sizeof(DirectBuf)] = {};
	LoginReq l{};
	l.opcode = op::login_req;
	l.req_it_iu_len.set(4096);
	l.req_buf_fmt.set(buf_fmt::direct | buf_fmt::indirect);
	be64 id[2];
	id[0].set(0x0200574654000004ull);
	id[1].set(0x0200574654000004ull);
	__builtin_memcpy(l.target_port_id, id, sizeof(id));
	b[0] = 0;
	__builtin_memcpy(b + 1, &l, sizeof(l));
	put("srpt", "login", b, 1 + 92); /* the CM REQ's private data is 92 bytes */
	static const uint32_t counts[] = {0, 1, 16};
	for (uint32_t n : counts) {
		__builtin_memset(b, 0, sizeof(b));
		b[0] = 1;
		Cmd c{};
		c.opcode = op::cmd;
		size_t len = 1 + sizeof(c);
		if (n == 1) {
			c.buf_fmt = desc::direct;
			DirectBuf d{};
			d.len.set(4096);
			__builtin_memcpy(b + len, &d, sizeof(d));
			len += sizeof(d);
		} else if (n) {
			c.buf_fmt = desc::indirect << 4;
			c.data_out_desc_cnt = uint8_t(n);
			IndirectHdr h{};
			h.table.len.set(n * sizeof(DirectBuf));
			h.total_len.set(n * 4096);
			__builtin_memcpy(b + len, &h, sizeof(h));
			len += sizeof(h);
			for (uint32_t i = 0; i < n; i++, len += sizeof(DirectBuf)) {
				DirectBuf d{};
				d.len.set(4096);
				__builtin_memcpy(b + len, &d, sizeof(d));
			}
		}
		__builtin_memcpy(b + 1, &c, sizeof(c));
		char name[32];
		format(name, sizeof(name), "cmd-%u", n);
		put("srpt", name, b, len);
	}
	__builtin_memset(b, 0x70, sizeof(b));
	b[0] = 2;
	b[1] = 200;
	put("srpt", "rsp-sense", b, 1 + 1 + 96);
}

/* iSER initiator (iser.cpp): PDUs a target sends, a Hello pair, the CM REP's private data. */
void iser_seeds()
{
	using namespace iser;
	static uint8_t b[3 + wire::hdrs_len + 512];
	auto pdu_seed = [&](const char *name, uint8_t kind, uint8_t op, uint32_t dlength, uint32_t byte_len) {
		__builtin_memset(b, 0, sizeof(b));
		b[0] = kind;
		b[1] = uint8_t(byte_len >> 8);
		b[2] = uint8_t(byte_len);
		pdu::build_header(*reinterpret_cast<wire::Header *>(b + 3), pdu::Stags{});
		uint8_t *bhs = b + 3 + sizeof(wire::Header);
		bhs[0] = op;
		bhs[1] = 0x80;
		bhs[5] = uint8_t(dlength >> 16);
		bhs[6] = uint8_t(dlength >> 8);
		bhs[7] = uint8_t(dlength);
		for (uint32_t i = 0; i < dlength; i++)
			bhs[48 + i] = uint8_t('a' + i % 26);
		put("iser", name, b, 3 + byte_len);
	};
	pdu_seed("login-rsp", 1, wire::iscsi_op::login_rsp, 301, wire::hdrs_len + 304);
	pdu_seed("text-rsp", 1, wire::iscsi_op::text_rsp, 480, wire::hdrs_len + 480);
	pdu_seed("scsi-rsp-sense", 0, wire::iscsi_op::scsi_rsp, 20, wire::hdrs_len + 20);
	pdu_seed("nop-in", 0, wire::iscsi_op::nop_in, 0, wire::hdrs_len);
	pdu_seed("reject", 0, wire::iscsi_op::reject, 48, wire::hdrs_len + 48);
	uint8_t h[1 + sizeof(wire::Hello)];
	h[0] = 2;
	pdu::build_hello(*reinterpret_cast<wire::Hello *>(h + 1), 10, 10, 16);
	put("iser", "hello", h, sizeof(h));
	pdu::build_hello_reply(*reinterpret_cast<wire::HelloReply *>(h + 1), false, 10, 10, 16);
	put("iser", "hello-reply", h, sizeof(h));
	const uint8_t rep[] = {3, 0x80, 0, 0, 0};
	put("iser", "cm-rep", rep, sizeof(rep));
}

/* SA responses (sa.cpp): one MAD answers of each record the SA client reads, and GetTables. */
void sa_seeds()
{
	uint8_t m[iba::mad_size];
	auto sa_hdr = [&](uint8_t method, uint16_t attr, size_t stride) {
		header(m, iba::mgmt_class::subn_adm, iba::sa_class_version, method, 0x1234);
		reinterpret_cast<iba::MadHeader *>(m)->attr_id.set(attr);
		reinterpret_cast<iba::SaHeader *>(m + iba::sa_header_offset)->attr_offset.set(uint16_t(stride / 8));
	};
	auto one = [&](const char *name) {
		Out o;
		o.byte(0);
		o.record(m, sizeof(m));
		put("sa", name, o.buf, o.n);
	};
	sa_hdr(iba::sa_method::get_resp, iba::sa_attr::path_record, sizeof(iba::PathRecord));
	auto &pr = *reinterpret_cast<iba::PathRecord *>(m + iba::sa_data_offset);
	pr.dgid[0] = 0xfe, pr.dgid[1] = 0x80, pr.sgid[0] = 0xfe, pr.sgid[1] = 0x80;
	pr.pkey.set(0xffff);
	one("path-record");
	sa_hdr(iba::sa_method::get_resp, iba::sa_attr::path_record, 0);
	reinterpret_cast<iba::MadHeader *>(m)->status.set(3u << 8);
	one("no-records");
	sa_hdr(iba::sa_method::get_resp, iba::sa_attr::mcmember_record, sizeof(iba::McMemberRecord));
	one("mcmember-record");
	sa_hdr(iba::sa_method::get_resp, iba::sa_attr::class_port_info, 0);
	one("class-port-info");
	sa_hdr(iba::sa_method::get_table_resp, iba::sa_attr::service_record, sizeof(iba::ServiceRecord));
	one("service-table-1");
	/* GetTableResp of 0, 1, 5 and 40 ServiceRecords in RMPP segments. */
	static const size_t counts[] = {0, 1, 5, 40};
	for (size_t c : counts) {
		static uint8_t msg[iba::sa_data_offset + 40 * sizeof(iba::ServiceRecord)];
		size_t len = iba::sa_data_offset + c * sizeof(iba::ServiceRecord);
		message(msg, len, iba::mgmt_class::subn_adm);
		msg[3] = iba::sa_method::get_table_resp;
		reinterpret_cast<iba::SaHeader *>(msg + iba::sa_header_offset)->attr_offset.set(sizeof(iba::ServiceRecord) / 8);
		auto s = mad::rmpp::Sender::make(ConstBytes(msg, len));
		if (!s)
			continue;
		Out o;
		o.byte(1);
		mad::Mad seg;
		for (uint32_t n = 1; n <= s.value()->count(); n++) {
			s.value()->build(n, seg);
			o.record(seg.bytes, sizeof(seg.bytes));
		}
		char name[64];
		format(name, sizeof(name), "service-table-rmpp-%zu", c);
		put("sa", name, o.buf, o.n);
	}
}

/* CM messages (cm.cpp), each as a connection's handshake sends it, and all of them in one input. */
void cm_seeds()
{
	namespace ic = iba::cm;
	uint8_t m[iba::mad_size];
	Out all;
	auto body = [&]() { return m + sizeof(iba::MadHeader); };
	auto msg = [&](uint16_t attr) {
		header(m, iba::mgmt_class::cm, ic::class_version, iba::method::send, 0x4242);
		reinterpret_cast<iba::MadHeader *>(m)->attr_id.set(attr);
		for (size_t i = sizeof(iba::MadHeader) + 64; i < sizeof(m); i++)
			m[i] = uint8_t(i); /* private data */
	};
	auto one = [&](const char *name) {
		Out o;
		o.record(m, sizeof(m));
		put("cm", name, o.buf, o.n);
		all.record(m, sizeof(m));
	};
	msg(ic::attr::req);
	{
		auto &r = *reinterpret_cast<ic::Req *>(body());
		r.local_comm_id.set(0x1001);
		r.service_id.set(0x1000000000000abcull);
		r.local_ca_guid.set(0x0200574654000002ull);
		ic::Req::Qpn::set(r.qpn_rr, 0x48);
		ic::Req::ResponderResources::set(r.qpn_rr, 4);
		ic::Req::InitiatorDepth::set(r.eecn_id, 4);
		ic::Req::Psn::set(r.psn_flags, 0x123456);
		ic::Req::LocalCmTimeout::set(r.psn_flags, 20);
		ic::Req::RetryCount::set(r.psn_flags, 7);
		r.pkey.set(0xffff);
		ic::Req::Mtu::set(r.mtu_flags, uint8_t(iba::Mtu::M2048));
		ic::Req::RnrRetry::set(r.mtu_flags, 7);
		ic::Req::MaxCmRetries::set(r.retries_flags, 15);
		r.primary.local_lid.set(2);
		r.primary.remote_lid.set(3);
		ic::Path::AckTimeout::set(r.primary.ack_timeout, 18);
		ic::Path::SubnetLocal::set(r.primary.sl_local, 1);
	}
	one("req");
	msg(ic::attr::rep);
	{
		auto &r = *reinterpret_cast<ic::Rep *>(body());
		r.local_comm_id.set(0x2002);
		r.remote_comm_id.set(0x1001);
		ic::Rep::Qpn::set(r.qpn_vendor, 0x49);
		ic::Rep::Psn::set(r.psn_vendor, 0x654321);
		r.responder_resources.set(4);
		r.initiator_depth.set(4);
		ic::Rep::RnrRetry::set(r.rnr_flags, 7);
		r.local_ca_guid.set(0x0200574654000004ull);
	}
	one("rep");
	msg(ic::attr::rtu);
	reinterpret_cast<ic::Rtu *>(body())->local_comm_id.set(0x1001);
	reinterpret_cast<ic::Rtu *>(body())->remote_comm_id.set(0x2002);
	one("rtu");
	msg(ic::attr::mra);
	{
		auto &r = *reinterpret_cast<ic::Mra *>(body());
		r.local_comm_id.set(0x2002);
		r.remote_comm_id.set(0x1001);
		ic::Mra::Mraed::set(r.mraed, ic::msg::req);
		ic::Mra::Timeout::set(r.service_timeout, 20);
	}
	one("mra");
	msg(ic::attr::rej);
	{
		auto &r = *reinterpret_cast<ic::Rej *>(body());
		r.local_comm_id.set(0x2002);
		r.remote_comm_id.set(0x1001);
		ic::Rej::Rejected::set(r.rejected, ic::msg::req);
		ic::Rej::AriLength::set(r.ari_length, 16);
		r.reason.set(ic::rej::invalid_gid);
	}
	one("rej");
	msg(ic::attr::dreq);
	{
		auto &r = *reinterpret_cast<ic::Dreq *>(body());
		r.local_comm_id.set(0x1001);
		r.remote_comm_id.set(0x2002);
		ic::Dreq::Qpn::set(r.remote_qpn, 0x49);
	}
	one("dreq");
	msg(ic::attr::drep);
	reinterpret_cast<ic::Drep *>(body())->local_comm_id.set(0x2002);
	reinterpret_cast<ic::Drep *>(body())->remote_comm_id.set(0x1001);
	one("drep");
	msg(ic::attr::lap);
	reinterpret_cast<ic::Rtu *>(body())->local_comm_id.set(0x1001);
	reinterpret_cast<ic::Rtu *>(body())->remote_comm_id.set(0x2002);
	one("lap");
	msg(ic::attr::apr);
	reinterpret_cast<ic::Apr *>(body())->status.set(ic::apr::unsupported);
	one("apr");
	msg(ic::attr::sidr_req);
	{
		auto &r = *reinterpret_cast<ic::SidrReq *>(body());
		r.request_id.set(0x3003);
		r.pkey.set(0xffff);
		r.service_id.set(0x1000000000000abcull);
	}
	one("sidr-req");
	msg(ic::attr::sidr_rep);
	{
		auto &r = *reinterpret_cast<ic::SidrRep *>(body());
		r.request_id.set(0x3003);
		r.status.set(ic::sidr::ok);
		ic::SidrRep::Qpn::set(r.qpn_vendor, 0x4a);
		r.qkey.set(0x11111111);
		r.service_id.set(0x1000000000000abcull);
	}
	one("sidr-rep");
	put("cm", "all", all.buf, all.n);
}

/* configfs values as fabric.md's examples write them (configfs.cpp: an op byte, then the text). */
void configfs_seeds()
{
	struct Val {
		uint8_t op;
		const char *text;
	};
	static const Val vals[] = {
		{0, "1\n"}, {0, "0"}, {1, "4294967295\n"}, {2, "2\n"}, {0x82, "36\n"}, {3, "weft0:1\n"},
		{3, "weftsw0:8"}, {4 + (0 << 3), "ppm=1000 dir=ab\n"}, {4 + (1 << 3), "count=3\n"},
		{4 + (2 << 3), "ppm=1000000 count=1 dir=both\n"}, {4 + (3 << 3), "ms=20 ppm=500000 dir=ba\n"},
		{4 + (4 << 3), "ms=10000 count=10\n"}, {4 + (4 << 3), "ppm=0 count=0 dir=both"},
	};
	Out all;
	int i = 0;
	for (const Val &v : vals) {
		uint8_t rec[64];
		const size_t n = __builtin_strlen(v.text);
		rec[0] = v.op;
		__builtin_memcpy(rec + 1, v.text, n);
		Out one;
		one.record(rec, n + 1);
		all.record(rec, n + 1);
		char name[32];
		format(name, sizeof(name), "value-%d", i++);
		put("configfs", name, one.buf, one.n);
	}
	put("configfs", "all", all.buf, all.n);
}

/* IPoIB (ipoib.cpp): frames, private data, P_Keys and a destination table's life, as an interface meets them. */
void ipoib_seeds()
{
	Out all;
	auto both = [&](const char *name, const uint8_t *rec, size_t n) {
		Out one;
		one.record(rec, n);
		all.record(rec, n);
		put("ipoib", name, one.buf, one.n);
	};
	uint8_t rec[256] = {};
	/* A broadcast ARP over UD: size 2048+44, byte_len 40+4+28, GRH with the partition's MGID. */
	const verbs::Gid bc = ipoib::broadcast_mgid(0xffff);
	rec[0] = 0;
	rec[1] = 0; /* be32_at(r, 0) & 3: the buffer size */
	rec[2] = 0;
	rec[3] = 0;
	rec[4] = 72;
	rec[6] = 1; /* GRH */
	__builtin_memcpy(rec + 7 + 24, bc.raw, 16);
	rec[7 + 40] = 0x08;
	rec[7 + 41] = 0x06;
	both("ud-arp-broadcast", rec, 7 + 72);
	rec[6] = 0; /* unicast IPv4, no GRH */
	rec[7 + 41] = 0x00;
	both("ud-ipv4", rec, 7 + 72);
	/* Connected mode: 1500 + 4 bytes, IPv6. */
	__builtin_memset(rec, 0, sizeof(rec));
	rec[0] = 1;
	rec[3] = 0x05;
	rec[4] = 0xe0;
	rec[5] = 0x86;
	rec[6] = 0xdd;
	both("cm-ipv6", rec, 64);
	/* REQ/REP private data as we send it. */
	const auto pd = ipoib::cmp::encode(0x48, ipoib::cmp::buf_size);
	rec[0] = 2;
	__builtin_memcpy(rec + 1, &pd, sizeof(pd));
	both("cm-private-data", rec, 1 + sizeof(pd));
	/* create_child 0x8001 against a table of default, limited and full 0x0001 */
	const uint8_t pk[] = {3, 0, 0, 0x80, 0x01, 0xff, 0xff, 0x00, 0x01, 0x80, 0x01, 'i', 'b', '0'};
	both("pkeys", pk, sizeof(pk));
	/* A table's life: sends queue, the claim resolves, sends go, rx_mode, ageing, flush. */
	const uint8_t ops[] = {0x06, 0x00, 0x00, 0x02, 0x03, 0x00, 0x11, 0x04, 0xf5, 0x07};
	for (uint8_t op : ops) {
		__builtin_memset(rec, 0, 40);
		rec[0] = 4;
		rec[1] = op;
		rec[2] = 0x00;
		rec[3] = 0x00;
		rec[4] = 0x00;
		rec[5] = 0x48; /* QPN */
		rec[6] = 0xfe;
		rec[7] = 0x80; /* link-local GID */
		rec[21] = op;
		all.record(rec, 38);
	}
	put("ipoib", "all", all.buf, all.n);
}

/* The switch's SMA (sma_switch.cpp): the CA seeds, then its own tables programmed and read back. */
void sma_switch_seeds()
{
	sma_seeds("sma_switch");
	uint8_t m[iba::mad_size];
	Out o;
	auto &smp = *reinterpret_cast<iba::Smp *>(m);
	/* SwitchInfo Set: LinearFDBTop, a default port, LifeTimeValue, PortStateChange cleared. */
	header(m, iba::mgmt_class::subn_lid_routed, 1, 0x02, 0x4000);
	smp.attr_id.set(iba::smp_attr::switch_info);
	auto &si = *reinterpret_cast<iba::SwitchInfo *>(smp.data);
	si.linear_fdb_top.set(0x40);
	si.default_port.set(1);
	si.multicast_fdb_top.set(0xc010);
	iba::SwitchInfo::LifeTimeValue::set(si.life_state, 18);
	iba::SwitchInfo::PortStateChange::set(si.life_state, 1);
	mad_record(o, 0, m);
	/* LFT block 0 (LIDs 0-63) and block 1, then read back. */
	for (uint32_t blk = 0; blk < 2; blk++) {
		header(m, iba::mgmt_class::subn_lid_routed, 1, 0x02, 0x4100 + blk);
		smp.attr_id.set(iba::smp_attr::linear_fdb);
		smp.attr_mod.set(blk);
		auto &l = *reinterpret_cast<iba::LinearFdb *>(smp.data);
		for (uint16_t i = 0; i < iba::lft_entries_per_block; i++)
			l.port[i].set(uint8_t(i % 7));
		mad_record(o, 0, m);
	}
	header(m, iba::mgmt_class::subn_lid_routed, 1, 0x01, 0x4200);
	smp.attr_id.set(iba::smp_attr::linear_fdb);
	smp.attr_mod.set(1);
	mad_record(o, 0, m);
	/* MFT block 0, position 0 (ports 0-15), then read back. */
	header(m, iba::mgmt_class::subn_lid_routed, 1, 0x02, 0x4300);
	smp.attr_id.set(iba::smp_attr::multicast_fdb);
	auto &mf = *reinterpret_cast<iba::MulticastFdb *>(smp.data);
	for (uint16_t i = 0; i < iba::mft_entries_per_block; i++)
		mf.port_mask[i].set(uint16_t(0x7e >> (i % 6)));
	mad_record(o, 0, m);
	header(m, iba::mgmt_class::subn_lid_routed, 1, 0x01, 0x4301);
	smp.attr_id.set(iba::smp_attr::multicast_fdb);
	mad_record(o, 0, m);
	/* PortInfo of each external port, a Set of port 3's state to Down, and port 0's LID. */
	for (uint32_t port = 0; port <= 6; port++) {
		header(m, iba::mgmt_class::subn_lid_routed, 1, 0x01, 0x4400 + port);
		smp.attr_id.set(iba::smp_attr::port_info);
		smp.attr_mod.set(port);
		mad_record(o, uint8_t(port), m);
	}
	header(m, iba::mgmt_class::subn_lid_routed, 1, 0x02, 0x4500);
	smp.attr_id.set(iba::smp_attr::port_info);
	smp.attr_mod.set(0);
	reinterpret_cast<iba::PortInfo *>(smp.data)->lid.set(7);
	reinterpret_cast<iba::PortInfo *>(smp.data)->master_sm_lid.set(1);
	mad_record(o, 0, m);
	put("sma_switch", "switch-tables", o.buf, o.n);
}

} // namespace

void weft::fuzz::put(const char *target, const char *name, const void *data, size_t len)
{
	char dir[512];
	format(dir, sizeof(dir), "%s/%s", root, target);
	weft_fuzz_write(dir, name, data, len);
}

/* Freestanding C++ does not know main: spelled as C. */
extern "C" int main(int argc, char **argv);
extern "C" int main(int argc, char **argv)
{
	root = argc > 1 ? argv[1] : "corpus";
	packets();
	rmpp_seeds();
	smi_seeds();
	mad_seeds();
	sma_seeds("sma");
	sma_switch_seeds();
	umad_seeds();
	srpt_seeds();
	iser_seeds();
	sa_seeds();
	cm_seeds();
	configfs_seeds();
	ipoib_seeds();
	uverbs_seeds();
	return 0;
}
