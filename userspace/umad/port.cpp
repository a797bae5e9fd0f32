// SPDX-License-Identifier: GPL-2.0
/*
 * umadN/issmN per CA port (port.h), the verbs client that makes them, and
 * the file callbacks of shim_umad.c.
 *
 * Lock order: the client's lock, then a port's lock_, then a file's locks.
 * The port's lock_ is held across registration, unregistration and close,
 * so kill() (device removal) sees every agent: once it returns none is
 * left on the MAD port's services.
 */
#include <weft/log.h>

#include "port.h"
#include "umad_module.h"

namespace weft::umad {

namespace {

constexpr Logger log("weft_umad");

/* User memory through the shim's copies. */
class UserMem final : public UserBuf {
public:
	UserMem(void *p, size_t n) : UserBuf(n), p_(static_cast<uint8_t *>(p)) {}
	Result<void> copy_in(void *dst, size_t off, size_t n) override
	{
		return from_errno(weft_umad_copy_from_user(dst, p_ + off, n));
	}
	Result<void> copy_out(size_t off, const void *src, size_t n) override
	{
		return from_errno(weft_umad_copy_to_user(p_ + off, src, n));
	}

private:
	uint8_t *p_;
};

/* What the shim holds for an open umad file. */
struct OpenFile {
	OpenFile(Port &p, Waker w) : port(Ref<Port>::share(&p)), file(p, w) {}
	Ref<Port> port;
	File file;
};

void wake_waiter(void *ctx)
{
	weft_umad_file_wake(static_cast<weft_umad_waiter *>(ctx));
}

} // namespace

Port::Port(verbs::Device &dev, mad::MadPort &mp, uint8_t port, uint32_t n)
	: port_num(port), num(n), device_id(&dev), lock_(WEFT_LOCK_CLASS("weft_umad_port")),
	  dev_(&dev), mp_(&mp)
{
}

Result<void> Port::start()
{
	for (int i = 0; i < 2; i++) {
		const bool issm = i == 1;
		get(); /* the node's reference, dropped when the shim frees it */
		int e = 0;
		weft_umad_cdev *c = weft_umad_cdev_add(dev_->name(), port_num, num, issm, this, &e);
		if (!c) {
			put();
			return Error(-e);
		}
		(issm ? issm_ : umad_) = c;
	}
	return ok();
}

void Port::kill()
{
	{
		MutexGuard g(lock_);
		dead_.store(true, Order::Release);
		for (File &f : files_)
			f.kill();
		mp_ = nullptr;
		dev_ = nullptr;
	}
	/* No new opens; blocked issm openers wake, see the port dead and fail. */
	weft_umad_cdev_del(exchange(umad_, nullptr));
	weft_umad_cdev_del(exchange(issm_, nullptr));
}

mad::MadService *Port::service(uint8_t qpn)
{
	lock_.assert_held();
	if (!mp_)
		return nullptr;
	return qpn == 0 ? &mp_->smi() : &mp_->gsi();
}

Result<File *> Port::open_file(Waker w)
{
	auto *of = new (Gfp::Sleep) OpenFile(*this, w);
	if (!of)
		return Error(err::ENOMEM);
	MutexGuard g(lock_);
	if (dead_.load(Order::Relaxed)) {
		of->file.close();
		delete of;
		return Error(err::ENXIO);
	}
	files_.push_back(of->file);
	return &of->file;
}

void Port::close_file(File &f)
{
	MutexGuard g(lock_);
	files_.remove(f);
	f.close();
	closed_dropped_ += f.dropped();
}

uint64_t Port::recv_dropped()
{
	MutexGuard g(lock_);
	uint64_t n = closed_dropped_;
	for (File &f : files_)
		n += f.dropped();
	return n;
}

Result<void> Port::ioctl(File &f, unsigned int cmd, UserBuf &arg)
{
	MutexGuard g(lock_);
	return f.ioctl(cmd, arg);
}

Result<void> Port::issm_open()
{
	MutexGuard g(lock_);
	if (dead_.load(Order::Relaxed))
		return Error(err::ENXIO);
	if (sm_held_.load(Order::Relaxed))
		return Error(err::EBUSY);
	auto r = dev_->modify_port(port_num, verbs::port_cap::is_sm, 0);
	if (!r && r.error().code() != err::EOPNOTSUPP)
		return r;
	if (!r)
		WEFT_LOG_RATELIMITED(log, Level::Warn, "%s port %u cannot set IsSM (no modify_port); issm%u held anyway",
				     dev_->name(), port_num, num);
	sm_held_.store(true, Order::Release);
	get(); /* the issm file's */
	return ok();
}

bool Port::issm_busy() const
{
	return sm_held_.load(Order::Acquire) && !dead_.load(Order::Acquire);
}

void Port::issm_release()
{
	{
		MutexGuard g(lock_);
		if (dev_)
			(void)dev_->modify_port(port_num, 0, verbs::port_cap::is_sm);
		sm_held_.store(false, Order::Release);
	}
	put();
}

namespace {

/* umadN/issmN for each CA port that has a MAD port; N is the lowest free number. */
class UmadClient final : public verbs::Client {
public:
	UmadClient() : verbs::Client("umad"), lock_(WEFT_LOCK_CLASS("weft_umad_client")) {}
	~UmadClient() = default;

	Result<void> add(verbs::Device &dev) override
	{
		if (dev.node_type() != verbs::NodeType::Ca)
			return ok();
		for (int i = 0; i < dev.num_ports(); i++) {
			uint8_t p = static_cast<uint8_t>(dev.first_port() + i);
			mad::MadPort *mp = mad::find_port(dev, p);
			if (!mp)
				continue;
			auto r = add_port(dev, *mp, p);
			if (!r)
				log.warn("%s port %u: no umad device (errno %d)", dev.name(), p, r.error().code());
		}
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		for (;;) {
			Port *port = nullptr;
			{
				MutexGuard g(lock_);
				for (Port &p : ports_) {
					if (p.device_id == &dev) {
						port = &p;
						ports_.remove(p);
						break;
					}
				}
			}
			if (!port)
				return;
			port->kill();
			{
				MutexGuard g(lock_);
				used_[port->num / 64] &= ~(1ull << (port->num % 64));
			}
			port->put(); /* the client's */
		}
	}

private:
	Result<void> add_port(verbs::Device &dev, mad::MadPort &mp, uint8_t p)
	{
		uint32_t n;
		{
			MutexGuard g(lock_);
			n = WEFT_UMAD_MAX_PORTS;
			for (uint32_t w = 0; w < WEFT_UMAD_MAX_PORTS / 64; w++) {
				if (used_[w] != ~0ull) {
					n = w * 64 + static_cast<uint32_t>(__builtin_ctzll(~used_[w]));
					break;
				}
			}
			if (n == WEFT_UMAD_MAX_PORTS)
				return Error(err::ENOSPC);
			used_[n / 64] |= 1ull << (n % 64);
		}
		Port *port = new (Gfp::Sleep) Port(dev, mp, p, n);
		auto started = port ? port->start() : Result<void>(Error(err::ENOMEM));
		if (!started) {
			if (port) {
				port->kill();
				port->put();
			}
			MutexGuard g(lock_);
			used_[n / 64] &= ~(1ull << (n % 64));
			return started;
		}
		MutexGuard g(lock_);
		ports_.push_back(*port);
		return ok();
	}

	Mutex lock_;
	List<Port, &Port::node> ports_; /* under lock_ */
	uint64_t used_[WEFT_UMAD_MAX_PORTS / 64] = {}; /* numbers N in use, under lock_ */
};

UmadClient *the_client;

} // namespace

} // namespace weft::umad

using namespace weft;
using namespace weft::umad;

namespace {

Port &port_of(void *ctx)
{
	return *static_cast<Port *>(ctx);
}

OpenFile &open_of(void *file)
{
	return *static_cast<OpenFile *>(file);
}

long to_long(const Result<size_t> &r)
{
	return r ? static_cast<long>(r.value()) : static_cast<long>(r.to_errno());
}

} // namespace

int weft_umad_client_register(void)
{
	auto *c = new (Gfp::Sleep) UmadClient;
	if (!c)
		return -err::ENOMEM;
	auto r = verbs::register_client(*c);
	if (!r) {
		delete c;
		return r.to_errno();
	}
	the_client = c;
	return 0;
}

void weft_umad_client_unregister(void)
{
	if (UmadClient *c = exchange(the_client, nullptr)) {
		verbs::unregister_client(*c);
		delete c;
	}
}

void weft_umad_port_put(void *port_ctx)
{
	port_of(port_ctx).put();
}

uint64_t weft_umad_port_recv_dropped(void *port_ctx)
{
	return port_of(port_ctx).recv_dropped();
}

int weft_umad_file_open(void *port_ctx, struct weft_umad_waiter *w, void **file)
{
	auto r = port_of(port_ctx).open_file(Waker{wake_waiter, w});
	if (!r)
		return r.to_errno();
	*file = container_of(r.value(), &OpenFile::file);
	return 0;
}

void weft_umad_file_release(void *file)
{
	OpenFile *of = &open_of(file);
	of->port->close_file(of->file);
	delete of;
}

long weft_umad_file_read(void *file, void *buf, size_t len)
{
	UserMem m(buf, len);
	return to_long(open_of(file).file.read(m));
}

bool weft_umad_file_readable(void *file)
{
	return open_of(file).file.readable();
}

unsigned int weft_umad_file_poll(void *file)
{
	return open_of(file).file.poll();
}

long weft_umad_file_write(void *file, const void *buf, size_t len)
{
	UserMem m(const_cast<void *>(buf), len);
	return to_long(open_of(file).file.write(m));
}

long weft_umad_file_ioctl(void *file, unsigned int cmd, void *arg)
{
	OpenFile &of = open_of(file);
	UserMem m(arg, (cmd >> 16) & 0x3fff); /* _IOC_SIZE */
	return of.port->ioctl(of.file, cmd, m).to_errno();
}

int weft_umad_issm_open(void *port_ctx, void **file)
{
	Port &p = port_of(port_ctx);
	auto r = p.issm_open();
	if (!r)
		return r.to_errno();
	*file = &p;
	return 0;
}

bool weft_umad_issm_busy(void *port_ctx)
{
	return port_of(port_ctx).issm_busy();
}

void weft_umad_issm_release(void *file)
{
	port_of(file).issm_release();
}
