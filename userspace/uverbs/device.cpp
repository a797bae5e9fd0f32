// SPDX-License-Identifier: GPL-2.0
/*
 * The device table, uverbsN per CA, the verbs client that keeps them
 * (device.h), and the char device callbacks of shim_uverbs.c.
 */
#include <weft/log.h>

#include "device.h"
#include "uverbs_module.h"

namespace weft::uverbs {

namespace {

constexpr Logger log("weft_uverbs");

Table *the_table;

} // namespace

Table &table()
{
	return *the_table;
}

Table::Table() : lock_(WEFT_LOCK_CLASS("weft_uverbs_table")) {}

UDevice::UDevice(verbs::Device &dev, uint32_t idx, int n)
	: index(idx), num(n), device_id(&dev), lock_(WEFT_LOCK_CLASS("weft_uverbs_device"))
{
}

Result<void> UDevice::start()
{
	if (num < 0)
		return ok();
	get(); /* the char device's, dropped when the shim frees it */
	int e = 0;
	weft_uverbs_cdev *c = weft_uverbs_cdev_add(device_id->name(), uint32_t(num), this, &e);
	if (!c) {
		put();
		return Error(-e);
	}
	cdev_ = c;
	return ok();
}

void UDevice::kill()
{
	{
		MutexGuard g(lock_);
		dead_ = true;
		for (File &f : files_)
			f.kill();
	}
	/* No new opens; open files stay (dead) until their owners close them. */
	weft_uverbs_cdev_del(exchange(cdev_, nullptr));
}

Result<File *> UDevice::open_file()
{
	MutexGuard g(lock_);
	if (dead_)
		return Error(err::ENXIO);
	auto *f = new (Gfp::Sleep) File(*this, *device_id);
	if (!f)
		return Error(err::ENOMEM);
	files_.push_back(*f);
	return f;
}

void UDevice::close_file(File &f)
{
	MutexGuard g(lock_);
	files_.remove(f);
	f.close();
}

/* Every device in the sysfs class gets a netlink index; CAs also uverbsN, N the lowest free number. */
class UverbsClient final : public verbs::Client {
public:
	explicit UverbsClient(Table &t) : verbs::Client("uverbs"), t_(t) {}
	~UverbsClient() = default;

	Result<void> add(verbs::Device &dev) override
	{
		uint32_t index;
		int num = -1;
		/*
		 * A device outside the sysfs class (a soft switch by default) is a
		 * box on the fabric, not this host's: netlink and libibverbs must
		 * list what /sys/class/infiniband lists, no more.
		 */
		if (!dev.sysfs_visible())
			return ok();
		{
			MutexGuard g(t_.lock_);
			index = t_.next_index_++;
			if (dev.node_type() == verbs::NodeType::Ca) {
				for (num = 0; num < WEFT_UVERBS_MAX_DEVICES && (t_.used_nums_ >> num) & 1; num++)
					;
				if (num == WEFT_UVERBS_MAX_DEVICES) {
					log.warn("%s: no uverbs device (all %d in use)", dev.name(),
						 WEFT_UVERBS_MAX_DEVICES);
					num = -1;
				} else {
					t_.used_nums_ |= 1u << num;
				}
			}
		}
		auto *u = new (Gfp::Sleep) UDevice(dev, index, num);
		auto started = u ? u->start() : Result<void>(Error(err::ENOMEM));
		if (!started) {
			log.warn("%s: no uverbs device (errno %d)", dev.name(), started.error().code());
			if (u) {
				u->kill();
				u->put();
			}
			release_num(num);
			return started;
		}
		MutexGuard g(t_.lock_);
		t_.devs_.push_back(*u); /* adds are serialised by the registry: index order */
		return ok();
	}

	void remove(verbs::Device &dev) override
	{
		UDevice *u = nullptr;
		{
			/* Unlinked first: no netlink query reaches it from here on. */
			MutexGuard g(t_.lock_);
			for (UDevice &d : t_.devs_) {
				if (d.device_id == &dev) {
					u = &d;
					t_.devs_.remove(d);
					break;
				}
			}
		}
		if (!u)
			return;
		u->kill();
		release_num(u->num);
		u->put(); /* the table's */
	}

private:
	void release_num(int num)
	{
		if (num < 0)
			return;
		MutexGuard g(t_.lock_);
		t_.used_nums_ &= ~(1u << num);
	}

	Table &t_;
};

namespace {

UverbsClient *the_client;

UDevice &udev_of(void *ctx)
{
	return *static_cast<UDevice *>(ctx);
}

File &file_of(void *ctx)
{
	return *static_cast<File *>(ctx);
}

} // namespace

} // namespace weft::uverbs

using namespace weft;
using namespace weft::uverbs;

int weft_uverbs_core_init(void)
{
	the_table = new (Gfp::Sleep) Table;
	return the_table ? 0 : -err::ENOMEM;
}

void weft_uverbs_core_exit(void)
{
	delete exchange(the_table, nullptr);
}

int weft_uverbs_client_register(void)
{
	auto *c = new (Gfp::Sleep) UverbsClient(table());
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

void weft_uverbs_client_unregister(void)
{
	if (UverbsClient *c = exchange(the_client, nullptr)) {
		verbs::unregister_client(*c);
		delete c;
	}
}

void weft_uverbs_device_put(void *dev_ctx)
{
	udev_of(dev_ctx).put();
}

int weft_uverbs_file_open(void *dev_ctx, void **file)
{
	auto r = udev_of(dev_ctx).open_file();
	if (!r)
		return r.to_errno();
	*file = r.value();
	return 0;
}

void weft_uverbs_file_release(void *file)
{
	File &f = file_of(file);
	Ref<UDevice> u = f.udev;
	u->close_file(f);
	delete &f;
}

long weft_uverbs_file_write(void *file, const void *buf, size_t len)
{
	auto r = file_of(file).write(buf, len);
	return r ? static_cast<long>(r.value()) : static_cast<long>(r.to_errno());
}

int weft_uverbs_file_mmap(void *file, uint64_t offset, size_t len, void *vma)
{
	return file_of(file).mmap(offset, len, vma).to_errno();
}
