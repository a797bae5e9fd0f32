/* SPDX-License-Identifier: GPL-2.0 */
/* weft_umad's module entry points into C++ (port.cpp), for module.c. */
#ifndef WEFT_UMAD_MODULE_H
#define WEFT_UMAD_MODULE_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

/* Register the verbs client (umadN/issmN for every CA port with a MAD port). */
int weft_umad_client_register(void);
void weft_umad_client_unregister(void);

WEFT_C_END

#endif
