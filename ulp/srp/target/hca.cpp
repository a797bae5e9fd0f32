// SPDX-License-Identifier: GPL-2.0
/*
 * weft_srpt as a verbs client: every Weft CA gets an Hca that listens for
 * SRP logins on its service ID (the node GUID, which is also the IOC GUID
 * and the target port identifier's ID_EXT, as the in-tree target makes
 * them), checks each SRP_LOGIN_REQ (SRP 5.2.1, 6.2) and hands it to a new
 * Channel.  The Hca list also answers configfs: which names are ports.
 */
#include <weft/log.h>

#include "../dm/dm_host.h"
#include "srpt.h"

namespace weft::srpt {

namespace {

const Logger log("weft_srpt");

class SrptClient final : public verbs::Client {
public:
	SrptClient() : verbs::Client("weft_srpt"), hcas(WEFT_LOCK_CLASS("weft_srpt_hcas")) {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		auto *h = new (Gfp::Sleep) Hca(dev);
		if (!h)
			return Error(err::ENOMEM);
		auto r = h->start();
		if (!r) {
			delete h;
			return r;
		}
		auto l = hcas.lock();
		l->push_back(*h);
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		Hca *h = nullptr;
		{
			auto l = hcas.lock();
			for (Hca &x : *l)
				if (&x.dev == &dev)
					h = &x;
			if (h)
				l->remove(*h);
		}
		if (h) {
			h->stop();
			delete h;
		}
	}

	Protected<List<Hca, &Hca::node>, Mutex> hcas;
};

SrptClient *client;
alignas(SrptClient) unsigned char client_storage[sizeof(SrptClient)];

/* Port names are ASCII hex, colons and "0x": compare them ignoring case. */
bool same_name(const char *a, const char *b)
{
	auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
	for (; *a && *b; a++, b++)
		if (lower(*a) != lower(*b))
			return false;
	return *a == *b;
}

void send_login_rej(cm::Id &id, uint32_t reason)
{
	srp::wire::LoginRej rej{};
	rej.opcode = srp::wire::op::login_rej;
	rej.reason.set(reason);
	rej.sup_buf_fmt.set(srp::wire::buf_fmt::direct | srp::wire::buf_fmt::indirect);
	(void)cm::reject(id, iba::cm::rej::consumer, {},
			 ConstBytes(reinterpret_cast<const uint8_t *>(&rej), sizeof(rej)));
}

} // namespace

Params params;

Hca::Hca(verbs::Device &d)
	: dev(d), chans(WEFT_LOCK_CLASS("weft_srpt_chans")), gone(WEFT_LOCK_CLASS("weft_srpt_gone")),
	  reap_(reap, WEFT_LOCK_CLASS("weft_srpt_reap"))
{
	service_id = d.attr().node_guid;
}

Result<void> Hca::start()
{
	ctx = WEFT_TRY(verbs::Context::open(dev, "weft_srpt"));
	auto pd_r = ctx->alloc_pd();
	if (pd_r) {
		pd = *pd_r;
		auto mr_r = ctx->get_dma_mr(pd, verbs::access::local_write);
		if (mr_r) {
			mr = *mr_r;
			auto id = cm::create_id(dev, *this, this);
			if (id) {
				listen_ = *id;
				auto l = cm::listen(*listen_, service_id);
				if (l) {
					log.info("%s: SRP target id_ext=%016llx ioc_guid=%016llx service_id=%016llx",
						 dev.name(), static_cast<unsigned long long>(service_id),
						 static_cast<unsigned long long>(service_id),
						 static_cast<unsigned long long>(service_id));
					return ok();
				}
				cm::destroy(listen_);
				listen_ = nullptr;
				ctx->close(false);
				ctx = nullptr;
				return l;
			}
		}
	}
	ctx->close(false);
	ctx = nullptr;
	return Error(err::ENOMEM);
}

/* Device removal or unload: no new login, every channel logged out and freed. */
void Hca::stop()
{
	cm::destroy(listen_);
	listen_ = nullptr;
	{
		auto l = chans.lock();
		l->stopping = true;
		for (Channel &c : l->list)
			c.shutdown();
	}
	(void)gone.wait([this] {
		auto l = chans.lock();
		return l->list.empty() && l->dead.empty();
	});
	reap_.cancel_sync();
	ctx->close(false);
	ctx = nullptr;
}

void Hca::channel_gone(Channel &ch)
{
	auto l = chans.lock();
	l->list.remove(ch);
	l->dead.push_back(ch);
	reap_.queue();
}

/* Free released channels: not from their own release work, which their destructor waits for. */
void Hca::reap(Work &w)
{
	Hca &h = *container_of(&w, &Hca::reap_);
	for (;;) {
		Channel *ch;
		{
			auto l = h.chans.lock();
			ch = l->dead.front();
			if (!ch)
				break;
			l->dead.remove(*ch);
		}
		delete ch;
	}
	h.gone.wake_all();
}

Result<void> Hca::port_names(uint8_t port, char gid_name[40], char guid_name[24])
{
	const verbs::Gid gid = WEFT_TRY(dev.query_gid(port, 0));
	const uint8_t *g = gid.raw;
	format(gid_name, 40, "0x%016llx%016llx", static_cast<unsigned long long>(gid.subnet_prefix()),
	       static_cast<unsigned long long>(gid.interface_id()));
	format(guid_name, 24, "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[8], g[9], g[10], g[11], g[12],
	       g[13], g[14], g[15]);
	return ok();
}

int Hca::event(const cm::Event &e)
{
	if (e.type == cm::EventType::Request)
		return request(e);
	return 0;
}

/* SRP 6.2 login: the REQ's private data is the SRP_LOGIN_REQ. */
int Hca::request(const cm::Event &e)
{
	using namespace srp::wire;
	LoginReq req;
	const uint32_t why = parse::login(e.private_data, service_id, params.max_req_size, req);
	if (why) {
		WEFT_LOG_RATELIMITED(log, Level::Info, "%s: login refused, SRP_LOGIN_REJ reason 0x%08x",
				     dev.name(), why);
		send_login_rej(*e.id, why);
		return -1;
	}
	auto *ch = new (Gfp::Sleep) Channel(*this, e.req->port);
	if (!ch) {
		send_login_rej(*e.id, rej::insufficient_resources);
		return -1;
	}
	/* SRP 6.2: a SINGLE CHANNEL login ends the nexus's other channels. */
	uint8_t rsp_flags = multichan::rsp_no_chan;
	{
		auto l = chans.lock();
		if (l->stopping) {
			delete ch;
			send_login_rej(*e.id, rej::unable_establish);
			return -1;
		}
		for (Channel &c : l->list)
			if (c.same_nexus(req.initiator_port_id)) {
				if ((req.req_flags & 3) == multichan::single) {
					c.shutdown();
					rsp_flags = multichan::rsp_terminated;
				} else {
					rsp_flags = multichan::rsp_maintained;
				}
			}
		l->list.push_back(*ch);
	}
	uint32_t reason = 0;
	/* @ch may be released once login() returns: not touched after. */
	if (!ch->login(*e.id, *e.req, req, reason, rsp_flags)) {
		send_login_rej(*e.id, reason);
		return -1;
	}
	return 0;
}

bool port_name_known(const char *name)
{
	auto l = client->hcas.lock();
	for (Hca &h : *l)
		for (uint8_t p = 1; p <= h.dev.num_ports(); p++) {
			char gid[40], guid[24];
			if (!h.port_names(p, gid, guid))
				continue;
			if (same_name(gid, name) || same_name(guid, name))
				return true;
		}
	return false;
}

} // namespace weft::srpt

using namespace weft;
using namespace weft::srpt;

int weft_srpt_client_register(uint32_t rq_size, uint32_t max_req_size, uint32_t max_rsp_size)
{
	params = Params{rq_size, max_req_size, max_rsp_size};
	client = new (client_storage) SrptClient();
	auto r = verbs::register_client(*client);
	if (!r) {
		client->~SrptClient();
		return r.to_errno();
	}
	return 0;
}

void weft_srpt_client_unregister(void)
{
	verbs::unregister_client(*client);
	client->~SrptClient();
}

/* Lock order: the Hca list, then the shim's target ports, then the DM host's list. */
void weft_srpt_tports_changed(void)
{
	if (!client)
		return;
	auto l = client->hcas.lock();
	for (Hca &h : *l)
		for (uint8_t p = 1; p <= h.dev.num_ports(); p++) {
			char gid[40], guid[24];
			const bool on = h.port_names(p, gid, guid) && weft_srpt_port_enabled(gid, guid);
			weft_srpt_dm_set_present(&h.dev, p, on);
		}
}

int weft_srpt_port_name_ok(const char *name)
{
	return port_name_known(name) ? 0 : -err::EINVAL;
}
