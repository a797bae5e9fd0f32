// SPDX-License-Identifier: GPL-2.0
/*
 * The write() framing of the in-tree 6.1 ABI (ib_uverbs_write(),
 * verify_hdr()), with its errnos: EINVAL for a malformed header or a size
 * that does not add up, EOPNOTSUPP for a command Weft does not implement,
 * ENOSPC for a request or response smaller than the command's structure,
 * EFAULT for memory that is not there.  Apart from File (no kernel call,
 * no lock) so that the host fuzz target tests/fuzz/uverbs_frame.cpp runs it.
 */
#include "abi.h"
#include "commands.h"

namespace weft::uverbs {

namespace {

uint64_t user_addr(const void *p)
{
	return reinterpret_cast<uintptr_t>(p);
}

/* The command's ranges, or the in-tree errno of a header that does not fit it. */
Result<void> frame_ex(const uint8_t *ubuf, size_t len, const abi::CmdHdr &hdr,
		      const Method &m, Call &c)
{
	abi::ExCmdHdr ex;
	if (len < sizeof(hdr) + sizeof(ex))
		return Error(err::EINVAL);
	WEFT_TRY(from_errno(weft_uverbs_copy_from_user(&ex, ubuf + sizeof(hdr), sizeof(ex))));
	const size_t count = len - sizeof(hdr) - sizeof(ex);
	if ((size_t(hdr.in_words) + ex.provider_in_words) * 8 != count)
		return Error(err::EINVAL);
	if (size_t(hdr.in_words) * 8 < m.req_size)
		return Error(err::ENOSPC);
	if (ex.cmd_hdr_reserved)
		return Error(err::EINVAL);
	if (ex.response) {
		if (!hdr.out_words && !ex.provider_out_words)
			return Error(err::EINVAL);
		if (size_t(hdr.out_words) * 8 < m.resp_size)
			return Error(err::ENOSPC);
	} else if (hdr.out_words || ex.provider_out_words) {
		return Error(err::EINVAL);
	}
	const uint64_t in = user_addr(ubuf) + sizeof(hdr) + sizeof(ex);
	c.in = {in, size_t(hdr.in_words) * 8};
	c.out = {ex.response, size_t(hdr.out_words) * 8};
	c.drv_in = {in + c.in.len, size_t(ex.provider_in_words) * 8};
	c.drv_out = {ex.response + c.out.len, size_t(ex.provider_out_words) * 8};
	return ok();
}

Result<void> frame(const uint8_t *ubuf, size_t len, const abi::CmdHdr &hdr, const Method &m,
		   Call &c)
{
	if (size_t(hdr.in_words) * 4 != len)
		return Error(err::EINVAL);
	if (len < m.req_size + sizeof(hdr) || size_t(hdr.out_words) * 4 < m.resp_size)
		return Error(err::ENOSPC);
	const uint64_t in = user_addr(ubuf) + sizeof(hdr);
	size_t in_len = len - sizeof(hdr), out_len = size_t(hdr.out_words) * 4;
	if (m.has_udata) {
		c.drv_in = {in + m.req_size, in_len - m.req_size};
		in_len = m.req_size;
	}
	uint64_t response = 0;
	if (m.has_resp) {
		/* The request's first field is the response's address. */
		WEFT_TRY(from_errno(weft_uverbs_copy_from_user(&response, ubuf + sizeof(hdr),
							       sizeof(response))));
		if (m.has_udata) {
			c.drv_out = {response + m.resp_size, out_len - m.resp_size};
			out_len = m.resp_size;
		}
	}
	c.in = {in, in_len};
	c.out = {response, out_len};
	return ok();
}

} // namespace

Result<const Method *> frame_command(const uint8_t *p, size_t len, Call &c)
{
	abi::CmdHdr hdr;
	if (len < sizeof(hdr))
		return Error(err::EINVAL);
	WEFT_TRY(from_errno(weft_uverbs_copy_from_user(&hdr, p, sizeof(hdr))));
	if (hdr.command & ~(abi::cmd_flag_extended | abi::cmd_command_mask))
		return Error(err::EINVAL);
	const Method *m = find_method(hdr.command);
	if (!m)
		return Error(err::EOPNOTSUPP);
	WEFT_TRY(m->is_ex ? frame_ex(p, len, hdr, *m, c) : frame(p, len, hdr, *m, c));
	return m;
}

} // namespace weft::uverbs
