// SPDX-License-Identifier: GPL-2.0
/*
 * Placeholder for the transport switch until connected mode (RFC 4755)
 * is merged: datagram only.  Deleted at that merge.
 */
#include <weft/errno.h>

#include "ipoib_kapi.h"

int weft_ipoib_set_mode(void *, bool connected)
{
	return connected ? -weft::err::EOPNOTSUPP : 0;
}

bool weft_ipoib_connected(void *)
{
	return false;
}
