/* SPDX-License-Identifier: GPL-2.0 */
/* The registry's use of the sysfs class (sysfs.cpp). */
#ifndef WEFT_CORE_VERBS_SYSFS_H
#define WEFT_CORE_VERBS_SYSFS_H

#include <weft/verbs/verbs.h>

namespace weft::verbs {

/* Create /sys/class/infiniband/<name> for a device being registered. */
Result<weft_ib_sysfs *> sysfs_add(Device &dev);
/* Remove it; no query reaches the device after this returns. */
void sysfs_del(weft_ib_sysfs *s);

} // namespace weft::verbs

#endif
