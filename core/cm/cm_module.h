/* SPDX-License-Identifier: GPL-2.0 */
/* Between weft_cm's module init/exit (module.c) and its C++ parts. */
#ifndef WEFT_CM_MODULE_H
#define WEFT_CM_MODULE_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN
/* Start the CM (a verbs client with an agent on every CA port); 0 or -errno. */
int weft_cm_init(void);
void weft_cm_exit(void);
/* Live Ids, the module parameter "ids" (for leak checks). */
unsigned int weft_cm_live_ids(void);
WEFT_C_END

#endif
