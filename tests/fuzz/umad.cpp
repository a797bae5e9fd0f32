// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: a umad file (userspace/umad/file.cpp) as user space drives
 * it, over the MAD services of one port (QP0 and QP1, core/mad/service.cpp)
 * whose transport loops a request's answer back on demand.  The input is
 * records (fuzz.h), each an operation byte and its argument:
 *   0 REGISTER_AGENT, 1 REGISTER_AGENT2 (the argument is the structure),
 *   2 UNREGISTER_AGENT, 3 ENABLE_PKEY, 4 write() of the argument (the
 *   buffer claims the argument's length, or much more: a caller's lie is
 *   EFAULT, and nothing input-sized over the class's maximum is
 *   allocated), 5 read() into a buffer of the argument's length,
 *   6 a MAD arriving on QP0/QP1, 7 the answer to the last MAD sent (the
 *   argument's bytes over it), 8 time passing.
 * At the end the file is closed: everything freed (LeakSanitizer), the
 * queue bounded throughout.
 */
#include "fuzz.h"

#include "../../userspace/umad/file.h"

using namespace weft;
using namespace weft::umad;

namespace {

struct Wire final : mad::MadTransport {
	mad::Mad last;
	bool any = false;
	Result<void> transmit(const mad::Mad &m, const mad::MadAddr &) override
	{
		last = m;
		any = true;
		return ok();
	}
};

struct Port final : Services {
	Wire wire;
	mad::MadService qp0{wire}, qp1{wire};
	mad::MadService *service(uint8_t qpn) override { return qpn == 0 ? &qp0 : qpn == 1 ? &qp1 : nullptr; }
};

/* User memory: @data, but a caller may claim more than it has (EFAULT past the end). */
class Buf final : public UserBuf {
public:
	Buf(uint8_t *data, size_t have, size_t claim) : UserBuf(claim), data_(data), have_(have) {}
	Result<void> copy_in(void *dst, size_t off, size_t n) override
	{
		fuzz::check(off <= size && n <= size - off, "copy_in within the call's buffer");
		if (off > have_ || n > have_ - off)
			return Error(err::EFAULT);
		if (n)
			__builtin_memcpy(dst, data_ + off, n);
		return ok();
	}
	Result<void> copy_out(size_t off, const void *src, size_t n) override
	{
		fuzz::check(off <= size && n <= size - off, "copy_out within the call's buffer");
		if (off > have_ || n > have_ - off)
			return Error(err::EFAULT);
		if (n)
			__builtin_memcpy(data_ + off, src, n);
		return ok();
	}

private:
	uint8_t *data_;
	size_t have_;
};

uint8_t scratch[1 << 16];

/* How much a write claims: what it has, or a lie from 64 KiB up to 4 GiB. */
size_t claim(uint8_t sel, size_t have)
{
	return sel < 0xe0 ? have : size_t(1) << (16 + (sel & 15));
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	auto *port = new (Gfp::Sleep) Port;
	fuzz::check(port, "port");
	auto *file = new (Gfp::Sleep) File(*port, Waker{});
	fuzz::check(file, "file");
	fuzz::Records in(data, size);
	ConstBytes rec;
	const mad::MadAddr from{3, 1, 0x80010000, 0, 0};
	while (in.next(rec, sizeof(scratch))) {
		if (rec.empty())
			continue;
		const uint8_t op = rec[0] % 9;
		const size_t n = rec.size() - 1;
		__builtin_memcpy(scratch, rec.data() + 1, n);
		switch (op) {
		case 0:
		case 1:
		case 2: {
			static const unsigned int cmds[] = {abi::ioc_register_agent, abi::ioc_register_agent2,
							    abi::ioc_unregister_agent};
			Buf b(scratch, n, n);
			(void)file->ioctl(cmds[op], b);
			break;
		}
		case 3: {
			Buf b(scratch, 0, 0);
			(void)file->ioctl(abi::ioc_enable_pkey, b);
			break;
		}
		case 4: {
			Buf b(scratch, n, claim(in.byte(), n));
			(void)file->write(b);
			break;
		}
		case 5: {
			Buf b(scratch, sizeof(scratch), n ? n : 1);
			(void)file->read(b);
			break;
		}
		case 6:
		case 7: {
			mad::Mad m;
			if (op == 7 && port->wire.any) {
				m = port->wire.last;
				m.hdr().method.set(m.hdr().method.get() | 0x80);
				for (size_t i = 0; i + 1 < n; i += 2)
					m.bytes[scratch[i]] = scratch[i + 1]; /* pairs: offset, value */
			} else {
				__builtin_memset(m.bytes, 0, sizeof(m.bytes));
				__builtin_memcpy(m.bytes, scratch, n < sizeof(m.bytes) ? n : sizeof(m.bytes));
			}
			port->service(qpn_of_class(m.hdr().mgmt_class.get()))->receive(m, from);
			break;
		}
		case 8:
			weft_host_advance(n ? scratch[0] * 20u : 1000u);
			break;
		}
		fuzz::check(file->queued() <= File::max_queued, "the read queue is bounded");
	}
	file->close();
	delete file;
	weft_host_advance(60000); /* every timer runs out */
	delete port;
	return 0;
}
