// SPDX-License-Identifier: GPL-2.0
/* Reading an SA response (IBA Vol 1 15.2.1.1): see sa_records.h. */
#include <weft/util.h>

#include "sa_records.h"

namespace weft::mad::sa {

namespace {

/* IBA 15.2.1.1, table 181: the SA's own status codes (MAD status bits 8-14). */
constexpr uint16_t status_no_records = 3u << 8;

} // namespace

int status_errno(uint16_t status)
{
	if (!status)
		return 0;
	return (status & 0x7f00) == status_no_records ? err::ENOENT : err::EREMOTEIO;
}

Result<Records> Records::of(const uint8_t *msg, size_t len)
{
	if (!msg || len < iba::sa_data_offset)
		return Error(err::EBADMSG);
	const auto *h = reinterpret_cast<const iba::SaHeader *>(msg + iba::sa_header_offset);
	return Records(msg + iba::sa_data_offset, len - iba::sa_data_offset, size_t(h->attr_offset.get()) * 8);
}

Result<void> Records::first(void *out, size_t size) const
{
	if (size > len_)
		return Error(err::EBADMSG);
	__builtin_memcpy(out, data_, size);
	return ok();
}

size_t Records::count() const
{
	return stride_ ? len_ / stride_ : 0;
}

void Records::copy(size_t i, void *out, size_t size) const
{
	size_t n = min(stride_, size);
	__builtin_memcpy(out, data_ + i * stride_, n);
	__builtin_memset(static_cast<uint8_t *>(out) + n, 0, size - n);
}

} // namespace weft::mad::sa
