// SPDX-License-Identifier: GPL-2.0
/* Partitions for IPoIB (pkey.h). */
#include <weft/log.h>

#include "pkey.h"

namespace weft::ipoib {

Result<uint16_t> child_pkey(long value)
{
	if (value <= 0 || value > 0xffff || value == pkey_full_bit)
		return Error(err::EINVAL);
	return static_cast<uint16_t>(value | pkey_full_bit);
}

Result<uint16_t> pkey_index_in(const uint16_t *table, size_t len, uint16_t pkey)
{
	long limited = -1;
	for (size_t i = 0; i < len && i <= 0xffff; i++) {
		/* IBA 10.9.1.2: an entry with no partition bits is invalid, never a match. */
		if (!pkey_base(table[i]) || pkey_base(table[i]) != pkey_base(pkey))
			continue;
		if (table[i] & pkey_full_bit)
			return static_cast<uint16_t>(i);
		if (limited < 0)
			limited = static_cast<long>(i);
	}
	if (limited >= 0)
		return static_cast<uint16_t>(limited);
	return Error(err::ENOENT);
}

void child_name(char *out, size_t size, const char *parent, uint16_t given)
{
	format(out, size, "%.10s.%04x", parent, given);
}

} // namespace weft::ipoib
