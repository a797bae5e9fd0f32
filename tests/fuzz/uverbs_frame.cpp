// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the write() framing of /dev/infiniband/uverbsN
 * (userspace/uverbs/framing.cpp frame_command(): header, method, the
 * request, response and driver-data ranges of legacy and extended
 * commands) and the copies every handler makes through the Call it
 * gets (commands.cpp Call::request, response, driver_response).  The
 * input is records (fuzz.h), each one write():
 *   a flags byte (bit 0: the header's word counts made to fit the
 *   length, bit 1: the response address pointed at a response buffer
 *   of exactly the words the header claims, bit 2: the command number
 *   taken from a known one), a length for Call::request and one for
 *   Call::response, then the bytes written.
 * User memory is the write (a heap block of exactly its length) and the
 * response buffer (likewise): a user copy that starts in one of them
 * copies as the kernel would, so a read or write past its end is an ASan
 * report; one that starts anywhere else is EFAULT.  Checked: a framed
 * command's request and driver data lie in the write and account for all
 * of it, its response ranges are where the request points and what the
 * header claims, each at least the method's size; request() returns the
 * caller's bytes zero-filled, EOPNOTSUPP exactly when a byte beyond the
 * known structure is not zero; response() fills the caller's range
 * exactly.  No handler runs (each is a stub that fails the target).
 */
#include "fuzz.h"

#include "../../userspace/uverbs/abi_verbs.h"
#include "../../userspace/uverbs/commands.h"

using namespace weft;
using namespace weft::uverbs;

/* --- the handlers: never reached (the framing only finds them) ---------------- */

namespace {

Result<void> unreached(Call &)
{
	fuzz::check(false, "no handler runs in the framing target");
	return ok();
}

} // namespace

namespace weft::uverbs {

#define UNREACHED(name)                                                                            \
	Result<void> name(Call &c) { return unreached(c); }
UNREACHED(cmd_get_context)
UNREACHED(cmd_query_device)
UNREACHED(cmd_query_port)
UNREACHED(cmd_ex_query_device)
UNREACHED(cmd_alloc_pd)
UNREACHED(cmd_dealloc_pd)
UNREACHED(cmd_reg_mr)
UNREACHED(cmd_dereg_mr)
UNREACHED(cmd_alloc_mw)
UNREACHED(cmd_dealloc_mw)
UNREACHED(cmd_create_ah)
UNREACHED(cmd_destroy_ah)
UNREACHED(cmd_create_comp_channel)
UNREACHED(cmd_create_cq)
UNREACHED(cmd_resize_cq)
UNREACHED(cmd_destroy_cq)
UNREACHED(cmd_req_notify_cq)
UNREACHED(cmd_ex_create_cq)
UNREACHED(cmd_create_qp)
UNREACHED(cmd_ex_create_qp)
UNREACHED(cmd_query_qp)
UNREACHED(cmd_modify_qp)
UNREACHED(cmd_destroy_qp)
UNREACHED(cmd_post_send)
UNREACHED(cmd_attach_mcast)
UNREACHED(cmd_detach_mcast)
UNREACHED(cmd_create_srq)
UNREACHED(cmd_modify_srq)
UNREACHED(cmd_query_srq)
UNREACHED(cmd_destroy_srq)
#undef UNREACHED

} // namespace weft::uverbs

/* --- user memory -------------------------------------------------------------------- */

namespace {

struct Region {
	uint8_t *base = nullptr;
	size_t len = 0;
};
Region regions[2]; /* the write and the response buffer */

/*
 * The region a user address falls in: from its start to a page past its
 * end, so that a copy running over the end is ASan's to report, not EFAULT.
 */
uint8_t *user(uint64_t addr, size_t n)
{
	if (!n)
		return nullptr;
	for (const Region &r : regions) {
		const auto b = reinterpret_cast<uintptr_t>(r.base);
		if (r.base && addr >= b && addr - b < r.len + 4096)
			return reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(addr));
	}
	return nullptr;
}

uint64_t addr_of(const void *p)
{
	return reinterpret_cast<uintptr_t>(p);
}

} // namespace

extern "C" {

int weft_uverbs_copy_from_user(void *dst, const void *src, size_t len)
{
	if (!len)
		return 0;
	uint8_t *p = user(addr_of(src), len);
	if (!p)
		return -err::EFAULT;
	__builtin_memcpy(dst, p, len);
	return 0;
}

int weft_uverbs_copy_to_user(void *dst, const void *src, size_t len)
{
	if (!len)
		return 0;
	uint8_t *p = user(addr_of(dst), len);
	if (!p)
		return -err::EFAULT;
	__builtin_memcpy(p, src, len);
	return 0;
}

int weft_uverbs_clear_user(void *dst, size_t len)
{
	if (!len)
		return 0;
	uint8_t *p = user(addr_of(dst), len);
	if (!p)
		return -err::EFAULT;
	__builtin_memset(p, 0, len);
	return 0;
}

} // extern "C"

/* --- the driver ----------------------------------------------------------------------- */

namespace {

namespace cmd = abi::cmd;

/* Command numbers Weft knows, for flag bit 2 (the extended ones with the flag). */
constexpr uint32_t known[] = {
	cmd::get_context,	  cmd::query_device,  cmd::query_port,	  cmd::alloc_pd,
	cmd::dealloc_pd,	  cmd::create_ah,     cmd::destroy_ah,	  cmd::reg_mr,
	cmd::dereg_mr,		  cmd::alloc_mw,      cmd::dealloc_mw,	  cmd::create_comp_channel,
	cmd::create_cq,		  cmd::resize_cq,     cmd::destroy_cq,	  cmd::req_notify_cq,
	cmd::create_qp,		  cmd::query_qp,      cmd::modify_qp,	  cmd::destroy_qp,
	cmd::post_send,		  cmd::attach_mcast,  cmd::detach_mcast,  cmd::create_srq,
	cmd::modify_srq,	  cmd::query_srq,     cmd::destroy_srq,
	abi::cmd_flag_extended | cmd::query_device, abi::cmd_flag_extended | cmd::create_cq,
	abi::cmd_flag_extended | cmd::create_qp,
};

/* The File a Call names: never used by the framing or the copies. */
alignas(uverbs::File) uint8_t file_storage[sizeof(uverbs::File)];

abi::CmdHdr header(const uint8_t *w)
{
	abi::CmdHdr h;
	__builtin_memcpy(&h, w, sizeof(h));
	return h;
}

/* Bit 0: the word counts that fit @len (the fuzzer still picks the split and the rest). */
void fit_words(uint8_t *w, size_t len)
{
	abi::CmdHdr h = header(w);
	if (!(h.command & abi::cmd_flag_extended)) {
		h.in_words = uint16_t(len / 4);
	} else if (len >= sizeof(h) + sizeof(abi::ExCmdHdr)) {
		abi::ExCmdHdr ex;
		__builtin_memcpy(&ex, w + sizeof(h), sizeof(ex));
		const size_t words = (len - sizeof(h) - sizeof(ex)) / 8;
		ex.provider_in_words = uint16_t(min<size_t>(ex.provider_in_words, words));
		h.in_words = uint16_t(words - ex.provider_in_words);
		__builtin_memcpy(w + sizeof(h), &ex, sizeof(ex));
	}
	__builtin_memcpy(w, &h, sizeof(h));
}

/* The bytes of response the header claims (core and driver). */
size_t claimed_out(const uint8_t *w, size_t len)
{
	const abi::CmdHdr h = header(w);
	if (!(h.command & abi::cmd_flag_extended))
		return size_t(h.out_words) * 4;
	if (len < sizeof(h) + sizeof(abi::ExCmdHdr))
		return 0;
	abi::ExCmdHdr ex;
	__builtin_memcpy(&ex, w + sizeof(h), sizeof(ex));
	return (size_t(h.out_words) + ex.provider_out_words) * 8;
}

/*
 * Bit 1 first keeps the claimed response within 4 KiB (a buffer of up to
 * 1 MiB per write would be most of the run's time); without bit 1 the
 * header's words go unchanged to the framing.
 */
void small_out(uint8_t *w, size_t len)
{
	abi::CmdHdr h = header(w);
	if (!(h.command & abi::cmd_flag_extended)) {
		h.out_words %= 1024;
	} else if (len >= sizeof(h) + sizeof(abi::ExCmdHdr)) {
		abi::ExCmdHdr ex;
		__builtin_memcpy(&ex, w + sizeof(h), sizeof(ex));
		h.out_words %= 256;
		ex.provider_out_words %= 256;
		__builtin_memcpy(w + sizeof(h), &ex, sizeof(ex));
	}
	__builtin_memcpy(w, &h, sizeof(h));
}

/* Bit 1: the response address (the legacy request's first field, or ex.response) to @out. */
void point_response(uint8_t *w, size_t len, uint64_t out)
{
	if (len >= sizeof(abi::CmdHdr) + sizeof(out))
		__builtin_memcpy(w + sizeof(abi::CmdHdr), &out, sizeof(out));
}

bool inside(const UserRange &r, const uint8_t *w, size_t len)
{
	const uint64_t b = addr_of(w);
	if (!r.len)
		return true; /* an empty range names no memory */
	return r.addr >= b && r.len <= len && r.addr - b <= len - r.len;
}

/* A framed command's ranges, against what the write and its header say. */
void check_frame(const Method &m, const Call &c, const uint8_t *w, size_t len)
{
	const abi::CmdHdr h = header(w);
	fuzz::check(&m == find_method(h.command), "the command's method");
	const size_t hdrs = sizeof(h) + (m.is_ex ? sizeof(abi::ExCmdHdr) : 0);
	fuzz::check(c.in.addr == addr_of(w) + hdrs, "the request follows the headers");
	fuzz::check(inside(c.in, w, len) && inside(c.drv_in, w, len), "request and driver data in the write");
	fuzz::check(c.in.len >= m.req_size, "the request at least the method's");
	fuzz::check(hdrs + c.in.len + c.drv_in.len == len, "request and driver data are the whole write");
	fuzz::check(!c.drv_in.len || c.drv_in.addr == c.in.addr + c.in.len, "driver data after the request");
	fuzz::check(m.has_udata || m.is_ex || !c.drv_in.len, "driver data only where the method takes it");
	if (m.has_resp) {
		/* The legacy request's first field, or the extended header's: both right after CmdHdr. */
		uint64_t resp;
		__builtin_memcpy(&resp, w + sizeof(h), sizeof(resp));
		fuzz::check(c.out.addr == resp, "the response where the request points");
		/* An extended command may ask for no response at all (then no words either). */
		fuzz::check(c.out.len >= m.resp_size || (m.is_ex && !resp), "the response at least the method's");
		fuzz::check(c.out.len + c.drv_out.len == claimed_out(w, len), "response ranges as claimed");
	}
	fuzz::check(!c.drv_out.len || c.drv_out.addr == c.out.addr + c.out.len, "driver response after the core's");
}

/* Call::request() against a reading of the same bytes here. */
void check_request(const Call &c, size_t want, const uint8_t *w)
{
	auto *req = static_cast<uint8_t *>(weft_kmalloc(want ? want : 1, 0));
	if (!req)
		return;
	const uint8_t *in = w + (c.in.addr - addr_of(w));
	bool excess = false;
	for (size_t i = want; i < c.in.len; i++)
		excess |= in[i] != 0;
	auto r = c.request(req, want);
	if (excess) {
		fuzz::check(!r && r.error().code() == err::EOPNOTSUPP, "non-zero excess is EOPNOTSUPP");
	} else {
		fuzz::check(bool(r), "a request that fits is read");
		for (size_t i = 0; r && i < want; i++)
			fuzz::check(req[i] == (i < c.in.len ? in[i] : 0), "request bytes as written, then zeros");
	}
	weft_kfree(req);
}

/* Call::response() and driver_response() into the caller's buffer (@buf: the response region). */
void check_response(const Call &c, size_t n, const Region &buf)
{
	uint8_t src[512];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = uint8_t(i * 7 + 1);
	n = min(n, sizeof(src));
	const bool mine = user(c.out.addr, c.out.len) != nullptr;
	auto r = c.response(src, n);
	if (!c.out.len || mine) {
		fuzz::check(bool(r), "a response into the caller's buffer is written");
		const uint8_t *o = user(c.out.addr, c.out.len);
		for (size_t i = 0; o && i < c.out.len; i++)
			fuzz::check(o[i] == (i < n ? src[i] : 0), "response bytes, then zeros to the caller's length");
	} else {
		fuzz::check(!r && r.error().code() == err::EFAULT, "a response nowhere is EFAULT");
	}
	const size_t d = n / 2;
	auto dr = c.driver_response(src, d);
	if (c.drv_out.len < d)
		fuzz::check(!dr && dr.error().code() == err::EINVAL, "no room for the driver response is EINVAL");
	(void)buf;
}

void one_write(ConstBytes rec)
{
	if (rec.size() < 3)
		return;
	const uint8_t flags = rec[0];
	const size_t req_len = rec[1] * 2u, resp_len = rec[2] * 2u;
	const size_t len = rec.size() - 3;
	/* A block of exactly the write's length: reading past it is ASan's report. */
	auto *w = static_cast<uint8_t *>(weft_kmalloc(len ? len : 1, 0));
	if (!w)
		return;
	__builtin_memcpy(w, rec.data() + 3, len);
	if ((flags & 4) && len >= sizeof(abi::CmdHdr)) {
		abi::CmdHdr h = header(w);
		h.command = known[h.command % (sizeof(known) / sizeof(known[0]))];
		__builtin_memcpy(w, &h, sizeof(h));
	}
	if ((flags & 1) && len >= sizeof(abi::CmdHdr))
		fit_words(w, len);
	Region out;
	if ((flags & 2) && len >= sizeof(abi::CmdHdr)) {
		small_out(w, len);
		out.len = claimed_out(w, len);
		out.base = static_cast<uint8_t *>(weft_kmalloc(out.len ? out.len : 1, 0));
		if (out.base) {
			__builtin_memset(out.base, 0xa5, out.len);
			point_response(w, len, addr_of(out.base));
		}
	}
	regions[0] = {w, len};
	regions[1] = out;

	Call c{*reinterpret_cast<uverbs::File *>(file_storage), {}, {}, {}, {}};
	auto m = frame_command(w, len, c);
	if (m) {
		check_frame(*m.value(), c, w, len);
		check_request(c, m.value()->req_size, w);
		check_request(c, req_len, w);
		check_response(c, resp_len, out);
	} else {
		const int e = m.error().code();
		fuzz::check(e == err::EINVAL || e == err::ENOSPC || e == err::EOPNOTSUPP,
			    "framing errors are EINVAL, ENOSPC or EOPNOTSUPP (the write is all there)");
	}
	regions[0] = regions[1] = Region{};
	weft_kfree(out.base);
	weft_kfree(w);
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	fuzz::Records in(data, size);
	ConstBytes rec;
	while (in.next(rec, 2048))
		one_write(rec);
	return 0;
}
