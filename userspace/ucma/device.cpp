// SPDX-License-Identifier: GPL-2.0
/*
 * What ucma reads of a verbs device: its node GUID, by which librdmacm
 * finds the libibverbs device of an Id (QUERY ADDR, QUERY_ROUTE).  Alone
 * in its file so the host fuzz target (tests/fuzz/ucma.cpp), which has no
 * verbs devices, can stand in for it.
 */
#include <weft/verbs/verbs.h>

#include "commands.h"

namespace weft::ucma {

uint64_t node_guid(const verbs::Device &dev)
{
	return dev.attr().node_guid;
}

} // namespace weft::ucma
