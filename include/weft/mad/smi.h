/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The subnet management interface's directed-route processing (IBA Vol 1
 * 14.2.2) under the MAD layer's names: the logic itself is in
 * <weft/iba/dr.h>, shared with the soft switch's SMI.
 */
#ifndef WEFT_MAD_SMI_H
#define WEFT_MAD_SMI_H

#include <weft/iba/dr.h>

namespace weft::mad {

using iba::dr_action_str;
using iba::dr_step;
using iba::DrAction;
using iba::DrNode;
using iba::DrStep;

} // namespace weft::mad

#endif
