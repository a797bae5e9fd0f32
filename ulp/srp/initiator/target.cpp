// SPDX-License-Identifier: GPL-2.0
/*
 * A target port of the initiator: its SCSI host, its channels, and what
 * scsi_transport_srp asks on a path failure (reconnect, terminate I/O,
 * delete).  Step order of create(): channels logged in (the first with
 * SINGLE CHANNEL, the rest MULTI, SRP 6.2), then the host added and its
 * LUNs scanned.  remove() undoes it in reverse.
 */
#include <weft/cpu.h>
#include <weft/log.h>

#include "initiator.h"

namespace weft::srp {

namespace {
const Logger log("weft_srp");
constexpr uint32_t max_channels = 16;
} // namespace

Target::Target(Port &p, const TargetOptions &o)
	: port(p), opts(o), lost_work_(lost_work, WEFT_LOCK_CLASS("weft_srp_lost"))
{
}

Target::~Target()
{
	for (Channel *c : chans_)
		delete c;
}

bool Target::same(const TargetOptions &o) const
{
	return o.id_ext == opts.id_ext && o.ioc_guid == opts.ioc_guid &&
	       o.initiator_ext == opts.initiator_ext;
}

Result<void> Target::connect_all()
{
	for (uint32_t i = 0; i < ch_count; i++) {
		auto r = chans_[i]->connect(i != 0);
		if (!r) {
			disconnect_all(WEFT_SRP_DID_RESET);
			return r;
		}
	}
	return ok();
}

void Target::disconnect_all(uint8_t host_byte)
{
	for (Channel *c : chans_)
		c->disconnect(host_byte);
}

Result<void> Target::create()
{
	const verbs::Gid g = WEFT_TRY(port.dev.query_gid(port.num, 0));
	__builtin_memcpy(sgid, g.raw, 16);
	can_queue = opts.queue_size ? opts.queue_size : params.queue_size;
	can_queue = min<uint32_t>(can_queue, 4096);
	sg_entries = opts.cmd_sg_entries ? opts.cmd_sg_entries : params.cmd_sg_entries;
	ch_count = opts.ch_count ? opts.ch_count : params.ch_count;
	if (!ch_count)
		ch_count = weft_online_cpus();
	ch_count = min(ch_count, max_channels);
	max_sect = opts.max_sect ? opts.max_sect : params.max_sect;
	const uint32_t limit = port.dev.attr().max_fast_reg_page_list_len;
	auto pages = cmd_pages(max_sect, page_size, limit);
	if (!pages) {
		log.warn("%s-%u: max_sect %u needs more than the %u pages one registration holds",
			 port.dev.name(), port.num, max_sect, limit);
		return pages.error();
	}
	max_pages = *pages;
	chans_ = WEFT_TRY(Array<Channel *>::make(Gfp::Sleep, ch_count));
	for (uint32_t i = 0; i < ch_count; i++) {
		chans_[i] = new (Gfp::Sleep) Channel(*this, static_cast<uint16_t>(i));
		if (!chans_[i])
			return Error(err::ENOMEM);
		WEFT_TRY(chans_[i]->init());
	}
	weft_srp_host_params hp{};
	hp.can_queue = can_queue;
	hp.cmd_per_lun = opts.max_cmd_per_lun ? min(opts.max_cmd_per_lun, can_queue) : can_queue;
	hp.sg_tablesize = sg_entries;
	hp.max_sectors = max_sect;
	hp.nr_hw_queues = ch_count;
	be64 v;
	v.set(opts.id_ext);
	__builtin_memcpy(hp.port_id, &v, 8);
	v.set(opts.ioc_guid);
	__builtin_memcpy(hp.port_id + 8, &v, 8);
	int e = 0;
	host_ = weft_srp_host_alloc(this, &hp, &e);
	if (!host_)
		return Error(-e);
	auto r = connect_all();
	if (r)
		r = from_errno(weft_srp_host_add(host_, port.pdev));
	if (!r) {
		disconnect_all(WEFT_SRP_DID_RESET);
		weft_srp_host_put(host_);
		host_ = nullptr;
		return r;
	}
	log.info("%s-%u: new target id_ext=%016llx ioc_guid=%016llx (scsi host%u, %u channel%s)",
		 port.dev.name(), port.num, static_cast<unsigned long long>(opts.id_ext),
		 static_cast<unsigned long long>(opts.ioc_guid), weft_srp_host_no(host_), ch_count,
		 ch_count == 1 ? "" : "s");
	return ok();
}

void Target::remove()
{
	removing.store(true, Order::Release);
	weft_srp_host_remove(host_);
	lost_work_.cancel_sync();
	disconnect_all(WEFT_SRP_DID_TRANSPORT_FAILFAST);
	weft_srp_host_put(host_);
	host_ = nullptr;
}

int Target::queue(void *scmnd, const weft_srp_cmd_info &ci)
{
	if (ci.hwq >= ch_count)
		return 1;
	Channel &c = *chans_[ci.hwq];
	const int busy = c.queue(scmnd, ci);
	if (busy && removing.load(Order::Acquire) && !c.connected()) {
		weft_srp_cmd_done(scmnd, WEFT_SRP_DID_BAD_TARGET, 0, nullptr, 0, 0);
		return 0;
	}
	return busy;
}

int Target::eh_abort(void *scmnd, uint16_t hwq, uint16_t tag)
{
	if (hwq >= ch_count)
		return -err::EINVAL;
	return chans_[hwq]->abort(scmnd, tag).to_errno();
}

/* SRP 6.7 LOGICAL UNIT RESET, on the first channel. */
int Target::eh_lun_reset(const uint8_t lun[8])
{
	auto code = chans_[0]->task_mgmt(wire::tmf::lun_reset, lun, 0);
	if (!code)
		return code.to_errno();
	return *code == wire::rsp_code::complete || *code == wire::rsp_code::succeeded ? 0
											 : -err::EIO;
}

/* scsi_transport_srp: the host is blocked; new connections, outstanding commands reset. */
int Target::reconnect()
{
	disconnect_all(WEFT_SRP_DID_RESET);
	auto r = connect_all();
	if (r) {
		lost_.store(false, Order::Release);
		log.info("%s-%u: reconnected to id_ext=%016llx", port.dev.name(), port.num,
			 static_cast<unsigned long long>(opts.id_ext));
	}
	return r.to_errno();
}

void Target::terminate_io()
{
	for (Channel *c : chans_)
		c->fail_all(WEFT_SRP_DID_TRANSPORT_FAILFAST);
}

void Target::lost()
{
	if (!lost_.exchange(true, Order::AcqRel))
		lost_work_.queue();
}

void Target::lost_work(Work &w)
{
	Target &t = *container_of(&w, &Target::lost_work_);
	if (t.lost_.load(Order::Acquire) && t.host_)
		weft_srp_host_lost(t.host_);
}

void Target::info(weft_srp_target_info &out)
{
	out = weft_srp_target_info{};
	out.id_ext = opts.id_ext;
	out.ioc_guid = opts.ioc_guid;
	out.service_id = opts.service_id;
	out.pkey = opts.pkey;
	__builtin_memcpy(out.sgid, sgid, 16);
	__builtin_memcpy(out.dgid, opts.dgid, 16);
	__builtin_memcpy(out.orig_dgid, opts.dgid, 16);
	int lim = 0x7fffffff;
	for (Channel *c : chans_)
		lim = min(lim, c->req_lim());
	out.req_lim = lim;
	out.zero_req_lim = zero_req_lim.load(Order::Relaxed);
	out.local_port = port.num;
	format(out.local_dev, sizeof(out.local_dev), "%s", port.dev.name());
	out.ch_count = ch_count;
	out.comp_vector = opts.comp_vector;
	out.tl_retry_count = opts.tl_retry_count;
	out.cmd_sg_entries = sg_entries;
	out.allow_ext_sg = opts.allow_ext_sg;
}

} // namespace weft::srp

using namespace weft;
using namespace weft::srp;

static Target &target(void *ctx)
{
	return *static_cast<Target *>(ctx);
}

int weft_srp_queuecommand(void *ctx, void *scmnd, const struct weft_srp_cmd_info *ci)
{
	return target(ctx).queue(scmnd, *ci);
}

int weft_srp_eh_abort(void *ctx, void *scmnd, uint16_t hwq, uint16_t tag)
{
	return target(ctx).eh_abort(scmnd, hwq, tag);
}

int weft_srp_eh_lun_reset(void *ctx, const uint8_t lun[8])
{
	return target(ctx).eh_lun_reset(lun);
}

int weft_srp_rport_reconnect(void *ctx)
{
	return target(ctx).reconnect();
}

void weft_srp_rport_terminate_io(void *ctx)
{
	target(ctx).terminate_io();
}

void weft_srp_rport_delete(void *ctx)
{
	target(ctx).port.delete_async(target(ctx));
}

void weft_srp_host_delete(void *ctx)
{
	target(ctx).port.delete_async(target(ctx));
}

void weft_srp_host_info(void *ctx, struct weft_srp_target_info *out)
{
	target(ctx).info(*out);
}
