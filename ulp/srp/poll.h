/* SPDX-License-Identifier: GPL-2.0 */
/* The SRP target's name for verbs::drain_cq (weft/verbs/drain.h). */
#ifndef WEFT_SRP_POLL_H
#define WEFT_SRP_POLL_H

#include <weft/verbs/drain.h>

namespace weft::srp {
using verbs::drain_cq;
} // namespace weft::srp

#endif
