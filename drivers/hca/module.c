// SPDX-License-Identifier: GPL-2.0
/*
 * weft_hca: the soft HCA driver.  At load it builds the default subnet:
 * `hcas` single-port HCAs cabled to one switch of `switch_ports` ports.
 * With `autoconf=1` (a test-only stand-in until the subnet manager can run)
 * every port gets a LID, the switch's forwarding table is filled and the
 * ports go ACTIVE.  With `hcas=0` the fabric starts empty; tests build
 * their own shapes under /sys/kernel/config/weft/ (Documentation/fabric.md).
 */
#include <linux/module.h>

#include "control.h"
#include "hca_module.h"

static unsigned int hcas = 2;
module_param(hcas, uint, 0444);
MODULE_PARM_DESC(hcas, "HCAs in the default subnet (0-16; 0: empty fabric; default 2)");

static unsigned int switch_ports = 8;
module_param(switch_ports, uint, 0444);
MODULE_PARM_DESC(switch_ports, "external ports of the default switch (>= hcas, <= 63; default 8)");

static bool autoconf = true;
module_param(autoconf, bool, 0444);
MODULE_PARM_DESC(autoconf, "assign LIDs, program the switch, ports ACTIVE without a subnet manager (default Y; N for OpenSM)");

static unsigned int capture_ring_kb = 1024;
module_param(capture_ring_kb, uint, 0444);
MODULE_PARM_DESC(capture_ring_kb, "ring of each new fabric capture, KiB (>= 5; default 1024; debugfs weft/<dev>/port<N>/capture)");

/* Read by the PMA (pma_redirect.cpp) at each request: switchable at run time. */
bool weft_hca_pma_redirect;
module_param_named(pma_redirect, weft_hca_pma_redirect, bool, 0644);
MODULE_PARM_DESC(pma_redirect, "HCA PMAs answer QP1 with a redirect to their own QP (IBA 13.5.3.3; default N)");

unsigned int weft_hca_pma_redirected_served;
module_param_named(pma_redirected_served, weft_hca_pma_redirected_served, uint, 0444);
MODULE_PARM_DESC(pma_redirected_served, "PerfMgt MADs the HCAs' PMAs answered on their redirect QP");

/*
 * Read at each switch's creation (switch.cpp).  Off: a soft switch is a box
 * on the fabric, not a device of this host, as on a real host; libibumad
 * would otherwise resolve it first (a switch means port 0 to it) and the
 * diags would find no umad device there.
 */
bool weft_hca_switch_sysfs;
module_param_named(switch_sysfs, weft_hca_switch_sysfs, bool, 0644);
MODULE_PARM_DESC(switch_sysfs, "show switches created from now on in /sys/class/infiniband (default N; "
		 "the diags then need -C/-P: a switch's port 0 has no umad device)");

/* Read at each HCA's creation (hca.cpp). */
int weft_hca_comp_vector_cpu = -1;
module_param_named(comp_vector_cpu, weft_hca_comp_vector_cpu, int, 0444);
MODULE_PARM_DESC(comp_vector_cpu, "online CPU of every HCA's completion vector 0, the others on the CPUs after it "
		 "(default -1: each HCA's vectors start one CPU after the previous HCA's)");

static int __init weft_hca_init(void)
{
	int ret = 0;

	if (weft_hca_comp_vector_cpu < -1 || weft_hca_comp_vector_cpu >= (int)num_online_cpus())
		return -EINVAL;
	weft_hca_fabric_init();
	weft_hca_capture_init(capture_ring_kb);
	if (hcas)
		ret = weft_hca_topology_create(hcas, switch_ports, autoconf);
	if (ret)
		goto err_fabric;
	weft_ctl_init();
	ret = weft_cfs_register();
	if (ret)
		goto err_ctl;
	return 0;

err_ctl:
	weft_ctl_exit();
	weft_hca_topology_destroy();
err_fabric:
	weft_hca_capture_exit();
	weft_hca_fabric_exit();
	return ret;
}

/*
 * configfs holds a module reference for every directory under weft/, so
 * by now none is left: unregistering removes only the empty tree.
 */
static void __exit weft_hca_exit(void)
{
	weft_cfs_unregister();
	weft_ctl_exit();
	weft_hca_topology_destroy();
	weft_hca_capture_exit();
	weft_hca_fabric_exit();
}

module_init(weft_hca_init);
module_exit(weft_hca_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft InfiniBand stack: soft HCA, soft switch and fabric");
