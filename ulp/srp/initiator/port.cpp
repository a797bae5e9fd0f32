// SPDX-License-Identifier: GPL-2.0
/*
 * weft_srp as a verbs client: every port of every Weft CA gets a Port,
 * i.e. the class device srp-<hca>-<port> whose add_target creates target
 * ports (in-tree semantics: EINVAL for a malformed string, EEXIST for a
 * target already added with the same id_ext, ioc_guid and
 * initiator_ext), and the memory key the descriptors name.
 */
#include <weft/log.h>

#include "initiator.h"

namespace weft::srp {

namespace {

const Logger log("weft_srp");

class SrpClient final : public verbs::Client {
public:
	SrpClient() : verbs::Client("weft_srp") {}

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		for (uint8_t p = 1; p <= dev.num_ports(); p++) {
			auto *port = new (Gfp::Sleep) Port(dev, p);
			if (!port)
				return Error(err::ENOMEM);
			auto r = port->start();
			if (!r) {
				delete port;
				return r;
			}
			ports_.push_back(*port);
		}
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		for (bool again = true; again;) {
			again = false;
			for (Port &p : ports_)
				if (&p.dev == &dev) {
					ports_.remove(p);
					p.stop();
					delete &p;
					again = true;
					break;
				}
		}
	}

private:
	/* add() and remove() are serialised by the registry. */
	List<Port, &Port::node> ports_;
};

SrpClient *client;
alignas(SrpClient) unsigned char client_storage[sizeof(SrpClient)];

} // namespace

Params params;

Port::Port(verbs::Device &d, uint8_t port)
	: dev(d), num(port), targets_(WEFT_LOCK_CLASS("weft_srp_targets")),
	  gone_(WEFT_LOCK_CLASS("weft_srp_gone")), reap_(reap, WEFT_LOCK_CLASS("weft_srp_reap"))
{
}

Result<void> Port::start()
{
	WEFT_TRY(dom.open(dev, "weft_srp"));
	int e = 0;
	pdev = weft_srp_port_dev_create(this, dev.name(), num, &e);
	if (!pdev) {
		dom.close();
		return Error(-e);
	}
	return ok();
}

void Port::stop()
{
	{
		auto l = targets_.lock();
		l->closing = true;
	}
	for (;;) {
		Target *t;
		{
			auto l = targets_.lock();
			t = l->live.front();
			if (!t)
				break;
			l->live.remove(*t);
		}
		t->remove();
		delete t;
	}
	(void)gone_.wait([this] {
		auto l = targets_.lock();
		return l->doomed.empty();
	});
	reap_.cancel_sync();
	weft_srp_port_dev_destroy(pdev);
	pdev = nullptr;
	dom.close();
}

Result<void> Port::add_target(const char *buf, size_t len)
{
	TargetOptions o;
	WEFT_TRY(parse_options(buf, len, o));
	/* Held through the login and the scan: one add_target at a time per port, as in-tree. */
	auto l = targets_.lock();
	if (l->closing)
		return Error(err::ENODEV);
	for (Target &t : l->live)
		if (t.same(o)) {
			log.warn("%s-%u: already connected to target id_ext=%016llx ioc_guid=%016llx",
				 dev.name(), num, static_cast<unsigned long long>(o.id_ext),
				 static_cast<unsigned long long>(o.ioc_guid));
			return Error(err::EEXIST);
		}
	auto *t = new (Gfp::Sleep) Target(*this, o);
	if (!t)
		return Error(err::ENOMEM);
	auto r = t->create();
	if (!r) {
		log.warn("%s-%u: connecting to target id_ext=%016llx failed (%d)", dev.name(), num,
			 static_cast<unsigned long long>(o.id_ext), r.to_errno());
		delete t;
		return r;
	}
	l->live.push_back(*t);
	return ok();
}

void Port::delete_async(Target &t)
{
	auto l = targets_.lock();
	if (t.doomed || l->closing)
		return; /* queued already, or stop() removes it */
	t.doomed = true;
	l->live.remove(t);
	l->doomed.push_back(t);
	reap_.queue();
}

/* Remove doomed targets; each stays listed until it is gone, so that stop() waits for it. */
void Port::reap(Work &w)
{
	Port &p = *container_of(&w, &Port::reap_);
	for (;;) {
		Target *t;
		{
			auto l = p.targets_.lock();
			t = l->doomed.front();
		}
		if (!t)
			break;
		t->remove();
		{
			auto l = p.targets_.lock();
			l->doomed.remove(*t);
		}
		delete t;
		p.gone_.wake_all();
	}
}

} // namespace weft::srp

using namespace weft;
using namespace weft::srp;

int weft_srp_client_register(void)
{
	client = new (client_storage) SrpClient();
	auto r = verbs::register_client(*client);
	if (!r) {
		client->~SrpClient();
		return r.to_errno();
	}
	return 0;
}

void weft_srp_client_unregister(void)
{
	verbs::unregister_client(*client);
	client->~SrpClient();
}

int weft_srp_add_target(void *port_ctx, const char *buf, size_t len)
{
	return static_cast<Port *>(port_ctx)->add_target(buf, len).to_errno();
}

void weft_srp_set_params(uint32_t cmd_sg_entries, uint32_t queue_size, uint32_t ch_count,
			 uint32_t max_sect)
{
	params = Params{cmd_sg_entries, queue_size, ch_count, max_sect};
}
