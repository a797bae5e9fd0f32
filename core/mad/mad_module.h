/* SPDX-License-Identifier: GPL-2.0 */
/* weft_mad module init/exit, between module.c and the C++ MAD layer. */
#ifndef WEFT_MAD_MODULE_H
#define WEFT_MAD_MODULE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Register the verbs client that gives every CA port its SMI and GSI. */
int weft_mad_client_init(void);
void weft_mad_client_exit(void);

#ifdef __cplusplus
}
#endif

#endif
