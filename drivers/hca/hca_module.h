/* SPDX-License-Identifier: GPL-2.0 */
/* Between weft_hca's module init/exit (module.c) and its C++ parts. */
#ifndef WEFT_HCA_MODULE_H
#define WEFT_HCA_MODULE_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN
void weft_hca_fabric_init(void);
void weft_hca_fabric_exit(void);
/* Build the default subnet from the module parameters; 0 or -errno. */
int weft_hca_topology_create(unsigned int hcas, unsigned int switch_ports, bool autoconf);
void weft_hca_topology_destroy(void);
/* Fabric capture (capture.cpp): the debugfs root and the ring size of new captures. */
void weft_hca_capture_init(unsigned int ring_kb);
void weft_hca_capture_exit(void);
/* Module parameters the PMA reads (pma_redirect.cpp): redirection on, and MADs served there. */
extern bool weft_hca_pma_redirect;
extern unsigned int weft_hca_pma_redirected_served;
/* Switches created while it is set are shown in the infiniband sysfs class. */
extern bool weft_hca_switch_sysfs;
/*
 * Where every HCA's completion vector 0 is (an online CPU's index; the
 * "IRQ affinity" of the soft vectors), or -1: each HCA one CPU further on.
 */
extern int weft_hca_comp_vector_cpu;
WEFT_C_END

#endif
