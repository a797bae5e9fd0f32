/* SPDX-License-Identifier: GPL-2.0 */
/* Between weft_verbs' module init/exit (module.c) and its C++ parts. */
#ifndef WEFT_CORE_VERBS_MODULE_H
#define WEFT_CORE_VERBS_MODULE_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN
void weft_verbs_registry_init(void);
void weft_verbs_registry_exit(void);
WEFT_C_END

#endif
