// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the objects a process creates through a uverbs file, driven by
 * write() commands as libibverbs frames them (File::write, the real user
 * copies over memory mapped in the loader's address space, user_mem.h),
 * on a File of a UDevice over weft0 with no character device.  Covers
 * PD, MR, CQ and QP handles: creation and lookup, a handle naming one
 * type only, stale handles, the cyclic order in which handles are reused,
 * destroy while referenced (EBUSY, as in-tree, the object intact), and
 * teardown: closing the file or the device going away frees every
 * object, the context and the pinned pages.
 */
#include <weft/alloc.h>
#include <weft/test.h>
#include <weft/verbs/verbs.h>

#include "../abi_rxe.h"
#include "../abi_verbs.h"
#include "../device.h"
#include "user_mem.h"

using namespace weft;
using namespace weft::uverbs;
using weft::test::Test;

namespace {

namespace cmd = abi::cmd;

/* Where things are in the case's mapping: the write, the response, MR pages. */
constexpr size_t map_len = 64 * 1024, resp_off = 4096, mr_off = 16384, mr_len = 8192;

/* The user contexts and user PDs/CQs of a device (what teardown must give back). */
struct Census {
	uint32_t contexts = 0, pds = 0, cqs = 0;
	uint64_t pinned = 0;
	bool operator==(const Census &o) const
	{
		return contexts == o.contexts && pds == o.pds && cqs == o.cqs && pinned == o.pinned;
	}
};

Census census(verbs::Device &dev)
{
	Census c;
	dev.for_each_context([&](verbs::Context &ctx) {
		c.contexts += ctx.is_user();
		return true;
	});
	c.pds = dev.user_objects(verbs::Quota::Pd);
	c.cqs = dev.user_objects(verbs::Quota::Cq);
	c.pinned = weft_uvtest_pinned();
	return c;
}

/* One open uverbs file of a process, and the commands it writes. */
class Session {
public:
	explicit Session(Test &t) : t_(t)
	{
		attached_ = weft_uvtest_attach() == 0;
		dev_ = verbs::find_device("weft0");
		if (!attached_ || !dev_)
			return;
		mem_ = weft_uvtest_map(map_len);
		udev_ = new (Gfp::Sleep) UDevice(*dev_, 0xfff0, -1);
		if (!mem_ || !udev_)
			return;
		auto f = udev_->open_file();
		file_ = f ? f.value() : nullptr;
	}
	~Session()
	{
		close();
		if (udev_) {
			udev_->kill();
			udev_->put();
		}
		weft_uvtest_close_fd(async_fd_);
		if (mem_)
			weft_uvtest_unmap(mem_, map_len);
		if (attached_)
			weft_uvtest_detach();
	}
	WEFT_NOCOPY(Session);

	bool ready() const { return file_ != nullptr; }
	verbs::Device &dev() { return *dev_; }
	UDevice &udev() { return *udev_; }
	uint64_t user(size_t off) const { return mem_ + off; }

	/* The file closed, as at the process's last close(). */
	void close()
	{
		if (!file_)
			return;
		udev_->close_file(*file_);
		delete exchange(file_, nullptr);
	}

	/* One legacy command: @req (its response field, if any, set here) and @out bytes of response. */
	template <typename Req> Result<void> run(uint32_t command, Req req, size_t out = 0)
	{
		if constexpr (requires { req.response; })
			req.response = user(resp_off);
		uint8_t buf[sizeof(abi::CmdHdr) + sizeof(Req)];
		const abi::CmdHdr h{command, uint16_t(sizeof(buf) / 4), uint16_t(out / 4)};
		static_assert(sizeof(buf) % 4 == 0);
		__builtin_memcpy(buf, &h, sizeof(h));
		__builtin_memcpy(buf + sizeof(h), &req, sizeof(req));
		if (weft_uvtest_put(user(0), buf, sizeof(buf)))
			return Error(err::EFAULT);
		const auto *ubuf = reinterpret_cast<const void *>(static_cast<uintptr_t>(user(0)));
		auto r = file_->write(ubuf, sizeof(buf));
		if (!r)
			return r.error();
		WEFT_EXPECT_EQ(t_, r.value(), sizeof(buf));
		return ok();
	}
	template <typename Resp> Resp response()
	{
		Resp r{};
		WEFT_EXPECT_EQ(t_, weft_uvtest_get(&r, user(resp_off), sizeof(r)), 0);
		return r;
	}

	Result<void> get_context()
	{
		WEFT_TRY(run(cmd::get_context, abi::GetContext{}, sizeof(abi::GetContextResp)));
		async_fd_ = int(response<abi::GetContextResp>().async_fd);
		return ok();
	}
	Result<uint32_t> alloc_pd()
	{
		WEFT_TRY(run(cmd::alloc_pd, abi::AllocPd{}, sizeof(abi::AllocPdResp)));
		return response<abi::AllocPdResp>().pd_handle;
	}
	Result<void> dealloc_pd(uint32_t h) { return run(cmd::dealloc_pd, abi::DeallocPd{h}); }
	Result<uint32_t> reg_mr(uint32_t pd)
	{
		const uint64_t a = user(mr_off);
		WEFT_TRY(run(cmd::reg_mr, abi::RegMr{0, a, mr_len, a, pd, 1 /* local write */},
			     sizeof(abi::RegMrResp)));
		return response<abi::RegMrResp>().mr_handle;
	}
	Result<void> dereg_mr(uint32_t h) { return run(cmd::dereg_mr, abi::DeregMr{h}); }
	Result<uint32_t> create_cq()
	{
		WEFT_TRY(run(cmd::create_cq, abi::CreateCq{0, 0x11, 16, 0, -1, 0},
			     sizeof(abi::CreateCqResp) + sizeof(rxe::CreateCqResp)));
		return response<abi::CreateCqResp>().cq_handle;
	}
	Result<void> destroy_cq(uint32_t h)
	{
		return run(cmd::destroy_cq, abi::DestroyCq{0, h, 0}, sizeof(abi::DestroyCqResp));
	}
	Result<uint32_t> create_qp(uint32_t pd, uint32_t cq)
	{
		abi::CreateQp q{};
		q.user_handle = 0x22;
		q.pd_handle = pd;
		q.send_cq_handle = q.recv_cq_handle = cq;
		q.max_send_wr = q.max_recv_wr = 8;
		q.max_send_sge = q.max_recv_sge = 1;
		q.qp_type = uint8_t(verbs::QpType::Rc);
		WEFT_TRY(run(cmd::create_qp, q, sizeof(abi::CreateQpResp) + sizeof(rxe::CreateQpResp)));
		return response<abi::CreateQpResp>().qp_handle;
	}
	Result<void> destroy_qp(uint32_t h)
	{
		return run(cmd::destroy_qp, abi::DestroyQp{0, h, 0}, sizeof(abi::DestroyQpResp));
	}

private:
	Test &t_;
	bool attached_ = false;
	Ref<verbs::Device> dev_;
	uint64_t mem_ = 0;
	UDevice *udev_ = nullptr;
	File *file_ = nullptr;
	int async_fd_ = -1;
};

/* Every command but GET_CONTEXT wants a context; a file has one at most. */
void context_first(Test &t)
{
	Session s(t);
	WEFT_ASSERT_TRUE(t, s.ready());
	WEFT_EXPECT_ERR(t, s.alloc_pd(), err::EINVAL);
	WEFT_EXPECT_ERR(t, s.create_cq(), err::EINVAL);
	WEFT_ASSERT_OK(t, s.get_context());
	WEFT_EXPECT_ERR(t, s.run(cmd::get_context, abi::GetContext{}, sizeof(abi::GetContextResp)), err::EINVAL);
	WEFT_EXPECT_OK(t, s.alloc_pd());
}

/* A handle names its object for its commands only; a freed handle names nothing. */
void handles_by_type(Test &t)
{
	Session s(t);
	WEFT_ASSERT_TRUE(t, s.ready());
	WEFT_ASSERT_OK(t, s.get_context());
	auto pd = s.alloc_pd(), pd2 = s.alloc_pd();
	auto cq = s.create_cq();
	WEFT_ASSERT_OK(t, pd);
	WEFT_ASSERT_OK(t, pd2);
	WEFT_ASSERT_OK(t, cq);
	WEFT_EXPECT_NE(t, pd.value(), pd2.value());
	WEFT_EXPECT_NE(t, pd.value(), cq.value());
	WEFT_EXPECT_ERR(t, s.dealloc_pd(cq.value()), err::EINVAL); /* a CQ's handle */
	WEFT_EXPECT_ERR(t, s.destroy_cq(pd.value()), err::EINVAL); /* a PD's */
	WEFT_EXPECT_ERR(t, s.dealloc_pd(0xfffff), err::EINVAL);	   /* none */
	WEFT_EXPECT_ERR(t, s.create_qp(cq.value(), pd.value()), err::EINVAL); /* swapped */
	auto qp = s.create_qp(pd.value(), cq.value());
	WEFT_ASSERT_OK(t, qp);
	WEFT_EXPECT_ERR(t, s.destroy_cq(qp.value()), err::EINVAL);
	WEFT_EXPECT_OK(t, s.destroy_qp(qp.value()));
	WEFT_EXPECT_ERR(t, s.destroy_qp(qp.value()), err::EINVAL); /* stale */
	WEFT_EXPECT_OK(t, s.dealloc_pd(pd.value()));
	WEFT_EXPECT_ERR(t, s.dealloc_pd(pd.value()), err::EINVAL);
	WEFT_EXPECT_OK(t, s.dealloc_pd(pd2.value()));
	WEFT_EXPECT_OK(t, s.destroy_cq(cq.value()));
}

/*
 * Handles go round the table: a freed one is taken again only when every
 * other slot is in use, so a process's stale handle is seldom someone
 * new (the table starts with 64 slots).
 */
void handles_reused_last(Test &t)
{
	Session s(t);
	WEFT_ASSERT_TRUE(t, s.ready());
	WEFT_ASSERT_OK(t, s.get_context());
	uint32_t h[64];
	for (uint32_t i = 0; i < 3; i++) {
		auto pd = s.alloc_pd();
		WEFT_ASSERT_OK(t, pd);
		h[i] = pd.value();
	}
	WEFT_ASSERT_OK(t, s.dealloc_pd(h[1]));
	auto next = s.alloc_pd();
	WEFT_ASSERT_OK(t, next);
	WEFT_EXPECT_NE(t, next.value(), h[1]);
	h[1] = next.value(); /* now four live, slot of the freed one still empty */
	for (uint32_t i = 3; i < 63; i++) {
		auto pd = s.alloc_pd();
		WEFT_ASSERT_OK(t, pd);
		h[i] = pd.value();
	}
	/* 63 live in 64 slots: the one free slot is the freed handle's. */
	auto last = s.alloc_pd();
	WEFT_ASSERT_OK(t, last);
	WEFT_EXPECT_EQ(t, last.value(), 1u);
	WEFT_EXPECT_OK(t, s.dealloc_pd(1));
}

/* IBA 11.2.3.2, 11.2.6.4: EBUSY while in use, the object left as it was. */
void destroy_while_referenced(Test &t)
{
	Session s(t);
	WEFT_ASSERT_TRUE(t, s.ready());
	WEFT_ASSERT_OK(t, s.get_context());
	auto pd = s.alloc_pd();
	WEFT_ASSERT_OK(t, pd);
	auto mr = s.reg_mr(pd.value());
	WEFT_ASSERT_OK(t, mr);
	WEFT_EXPECT_ERR(t, s.dealloc_pd(pd.value()), err::EBUSY);
	auto cq = s.create_cq();
	WEFT_ASSERT_OK(t, cq);
	auto qp = s.create_qp(pd.value(), cq.value());
	WEFT_ASSERT_OK(t, qp);
	WEFT_EXPECT_ERR(t, s.destroy_cq(cq.value()), err::EBUSY);
	WEFT_ASSERT_OK(t, s.dereg_mr(mr.value()));
	WEFT_EXPECT_ERR(t, s.dealloc_pd(pd.value()), err::EBUSY); /* the QP still uses it */
	/* Both still there and usable: a second QP on them. */
	auto qp2 = s.create_qp(pd.value(), cq.value());
	WEFT_ASSERT_OK(t, qp2);
	WEFT_EXPECT_OK(t, s.destroy_qp(qp.value()));
	WEFT_EXPECT_OK(t, s.destroy_qp(qp2.value()));
	WEFT_EXPECT_OK(t, s.destroy_cq(cq.value()));
	WEFT_EXPECT_OK(t, s.dealloc_pd(pd.value()));
}

/* Objects of every kind, some using others, as a process leaves them. */
void populate(Test &t, Session &s)
{
	WEFT_ASSERT_OK(t, s.get_context());
	auto pd = s.alloc_pd(), pd2 = s.alloc_pd();
	WEFT_ASSERT_OK(t, pd);
	WEFT_ASSERT_OK(t, pd2);
	WEFT_EXPECT_OK(t, s.reg_mr(pd.value()));
	auto cq = s.create_cq(), cq2 = s.create_cq();
	WEFT_ASSERT_OK(t, cq);
	WEFT_ASSERT_OK(t, cq2);
	WEFT_EXPECT_OK(t, s.create_qp(pd.value(), cq.value()));
	WEFT_EXPECT_OK(t, s.create_qp(pd2.value(), cq2.value()));
}

/* The process exits with everything alive: closing the file frees it all. */
void close_frees_everything(Test &t)
{
	Session s(t);
	WEFT_ASSERT_TRUE(t, s.ready());
	const Census before = census(s.dev());
	populate(t, s);
	const Census during = census(s.dev());
	WEFT_EXPECT_EQ(t, during.contexts, before.contexts + 1);
	WEFT_EXPECT_EQ(t, during.pds, before.pds + 2);
	WEFT_EXPECT_EQ(t, during.cqs, before.cqs + 2);
	WEFT_EXPECT_EQ(t, during.pinned, before.pinned + mr_len / 4096);
	s.close();
	WEFT_EXPECT_TRUE(t, census(s.dev()) == before);
}

/* The device goes with objects alive: all freed, the file dead (EIO) until closed. */
void device_gone_frees_everything(Test &t)
{
	Session s(t);
	WEFT_ASSERT_TRUE(t, s.ready());
	const Census before = census(s.dev());
	populate(t, s);
	s.udev().kill();
	WEFT_EXPECT_TRUE(t, census(s.dev()) == before);
	WEFT_EXPECT_ERR(t, s.alloc_pd(), err::EIO);
	WEFT_EXPECT_ERR(t, s.destroy_cq(0), err::EIO);
	s.close();
	WEFT_EXPECT_TRUE(t, census(s.dev()) == before);
}

} // namespace

WEFT_TEST_SUITE(weft_uverbs_objects, WEFT_CASE(context_first), WEFT_CASE(handles_by_type),
		WEFT_CASE(handles_reused_last), WEFT_CASE(destroy_while_referenced),
		WEFT_CASE(close_frees_everything), WEFT_CASE(device_gone_frees_everything));
