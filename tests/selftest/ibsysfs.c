// SPDX-License-Identifier: GPL-2.0
/*
 * weft_selftest_ibsysfs: two fake devices in the `infiniband` class, driven
 * through the sysfs shim's C API (core/verbs/ib_sysfs.h) from outside
 * weft_verbs, for tests/integration/ib_sysfs.sh.  Test-only; the values are
 * fixed and that test checks them:
 *
 * weftfake0, CA: node GUID 0x00066a00d8000100, system image GUID
 *   0x00066a00d80001ff, fw_ver "1.2.3", hca_type "WEFTFAKE", hw_rev "0x10",
 *   board_id "WEFT-FAKE-0001", node_desc "weftfake0 fake CA" (writable).
 *   Port GUID of port N: node GUID + N; gids/0 = fe80::<port GUID>.
 *   port 1: ACTIVE, LinkUp, LID 0x11, LMC 0, SM LID 0x1, SM SL 0,
 *     cap_mask 0x02510868, 4X EDR; GIDs {fe80::GUID, ::}, P_Keys
 *     {0xffff, 0x8001}; counters: symbol_error 70000 (reads 65535: a 16-bit
 *     field), local_link_integrity_errors 20 (reads 15), link_downed 3,
 *     VL15_dropped 7, port_xmit_data 1234567890123, port_rcv_data 42,
 *     everything else 0; hw_counters/out_of_buffer 5000000000 (not cut),
 *     hw_counters/mad_replies_dropped 9.
 *   port 2: DOWN, Polling, LID 0, SM LID 0, 1X SDR, one GID and one P_Key
 *     (0xffff); its counters fail with -EIO (a callback error is the read's
 *     errno).
 * weftfakesw0, switch: node GUID 0x00066a00e0000200 (also the system image
 *   GUID and port 0's GUID), fw_ver "2.0.0", no hca_type/hw_rev/board_id, no
 *   counters, node_desc read-only ("weftfakesw0 fake switch").
 *   port 0: ACTIVE, LinkUp, LID 0x2, SM LID 0x1, 12X QDR, one GID, P_Key
 *   0xffff.
 *
 * At load it also checks that adds which must fail do fail and leave
 * nothing behind (a port query failing halfway, bad arguments): the test
 * then finds no weftfakebad0 and kmemleak finds no leak.
 */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "ib_sysfs.h"

struct fake_dev {
	struct weft_ib_sysfs_info info;
	const struct weft_ib_sysfs_port *ports;	/* [port - first_port] */
	u32 fail_port;				/* query_port fails for it (0: none) */
	struct mutex desc_lock;
	char desc[65];
	struct weft_ib_sysfs *sysfs;
};

/* Set once the devices are deleted: any callback after that is a shim bug. */
static bool fake_gone;

static const struct weft_ib_sysfs_port fake_ca_ports[] = {
	{ .state = 4, .phys_state = 5, .lid = 0x11, .lmc = 0, .sm_lid = 0x1, .sm_sl = 0,
	  .cap_mask = 0x02510868, .active_width = 2, .active_speed = 32,
	  .gid_tbl_len = 2, .pkey_tbl_len = 2 },
	{ .state = 1, .phys_state = 2, .cap_mask = 0x02510868, .active_width = 1,
	  .active_speed = 1, .gid_tbl_len = 1, .pkey_tbl_len = 1 },
};

static const struct weft_ib_sysfs_port fake_sw_ports[] = {
	{ .state = 4, .phys_state = 5, .lid = 0x2, .sm_lid = 0x1, .active_width = 8,
	  .active_speed = 4, .gid_tbl_len = 1, .pkey_tbl_len = 1 },
};

static struct fake_dev fake_ca = {
	.info = { .name = "weftfake0", .node_type = 1, .node_guid = 0x00066a00d8000100ULL,
		  .sys_image_guid = 0x00066a00d80001ffULL, .fw_ver = "1.2.3",
		  .hca_type = "WEFTFAKE", .hw_rev = "0x10", .board_id = "WEFT-FAKE-0001",
		  .first_port = 1, .num_ports = 2 },
	.ports = fake_ca_ports,
	.desc = "weftfake0 fake CA",
};

static struct fake_dev fake_sw = {
	.info = { .name = "weftfakesw0", .node_type = 2, .node_guid = 0x00066a00e0000200ULL,
		  .sys_image_guid = 0x00066a00e0000200ULL, .fw_ver = "2.0.0",
		  .first_port = 0, .num_ports = 1 },
	.ports = fake_sw_ports,
	.desc = "weftfakesw0 fake switch",
};

/* Same ports as weftfake0, but port 2 cannot be queried: add() must unwind. */
static struct fake_dev fake_bad = {
	.info = { .name = "weftfakebad0", .node_type = 1, .node_guid = 0x00066a00d8000300ULL,
		  .first_port = 1, .num_ports = 2 },
	.ports = fake_ca_ports,
	.fail_port = 2,
};

static int fake_query_port(void *ctx, u32 port, struct weft_ib_sysfs_port *out)
{
	struct fake_dev *f = ctx;

	WARN_ON_ONCE(READ_ONCE(fake_gone));
	if (port < f->info.first_port || port - f->info.first_port >= f->info.num_ports)
		return -EINVAL;
	if (f->fail_port && port == f->fail_port)
		return -EIO;
	*out = f->ports[port - f->info.first_port];
	return 0;
}

static int fake_query_gid(void *ctx, u32 port, u32 index, u8 gid[16])
{
	struct fake_dev *f = ctx;
	u64 guid = f->info.node_guid + (f->info.node_type == 2 ? 0 : port);
	int i;

	WARN_ON_ONCE(READ_ONCE(fake_gone));
	if (index > 0)
		return 0;	/* empty entry: the zero GID */
	gid[0] = 0xfe;	/* link-local prefix fe80::/64 (IBA 4.1.1) */
	gid[1] = 0x80;
	for (i = 0; i < 8; i++)
		gid[15 - i] = guid >> (8 * i);
	return 0;
}

static int fake_query_pkey(void *ctx, u32 port, u32 index, u16 *pkey)
{
	WARN_ON_ONCE(READ_ONCE(fake_gone));
	*pkey = index == 0 ? 0xffff : 0x8001;
	return 0;
}

static int fake_query_counters(void *ctx, u32 port, struct weft_ib_sysfs_counters *out)
{
	WARN_ON_ONCE(READ_ONCE(fake_gone));
	if (port != 1)
		return -EIO;
	out->symbol_error = 70000;
	out->local_link_integrity_errors = 20;
	out->link_downed = 3;
	out->vl15_dropped = 7;
	out->port_xmit_data = 1234567890123ULL;
	out->port_rcv_data = 42;
	out->out_of_buffer = 5000000000ULL;
	out->mad_replies_dropped = 9;
	return 0;
}

static void fake_get_node_desc(void *ctx, char desc[65])
{
	struct fake_dev *f = ctx;

	WARN_ON_ONCE(READ_ONCE(fake_gone));
	mutex_lock(&f->desc_lock);
	memcpy(desc, f->desc, sizeof(f->desc));
	mutex_unlock(&f->desc_lock);
}

static int fake_set_node_desc(void *ctx, const char *desc, size_t len)
{
	struct fake_dev *f = ctx;

	WARN_ON_ONCE(READ_ONCE(fake_gone));
	if (WARN_ON_ONCE(len > 64 || desc[len]))
		return -EINVAL;
	mutex_lock(&f->desc_lock);
	memset(f->desc, 0, sizeof(f->desc));
	memcpy(f->desc, desc, len);
	mutex_unlock(&f->desc_lock);
	return 0;
}

static const struct weft_ib_sysfs_ops fake_ca_ops = {
	.query_port = fake_query_port,
	.query_gid = fake_query_gid,
	.query_pkey = fake_query_pkey,
	.query_counters = fake_query_counters,
	.get_node_desc = fake_get_node_desc,
	.set_node_desc = fake_set_node_desc,
};

/* The switch shows no counters and has a read-only node_desc. */
static const struct weft_ib_sysfs_ops fake_sw_ops = {
	.query_port = fake_query_port,
	.query_gid = fake_query_gid,
	.query_pkey = fake_query_pkey,
	.get_node_desc = fake_get_node_desc,
};

/* An add that must fail with @want and leave nothing behind. */
static int fake_expect_fail(const char *what, const struct weft_ib_sysfs_info *info,
			    struct fake_dev *f, int want)
{
	struct weft_ib_sysfs *s;
	int err = 0;

	s = weft_ib_sysfs_add(info, &fake_ca_ops, f, &err);
	if (!s && err == want)
		return 0;
	pr_err("weft_selftest_ibsysfs: %s: add gave %p err %d, want NULL and %d\n", what, s, err,
	       want);
	weft_ib_sysfs_del(s);
	return -EINVAL;
}

static int fake_add(struct fake_dev *f, const struct weft_ib_sysfs_ops *ops)
{
	int err = 0;

	mutex_init(&f->desc_lock);
	f->sysfs = weft_ib_sysfs_add(&f->info, ops, f, &err);
	return f->sysfs ? 0 : err;
}

static int __init weft_selftest_ibsysfs_init(void)
{
	struct weft_ib_sysfs_info bad;
	int ret = 0;

	mutex_init(&fake_bad.desc_lock);
	ret |= fake_expect_fail("port 2 query fails", &fake_bad.info, &fake_bad, -EIO);
	bad = fake_bad.info;
	bad.node_type = 0;
	ret |= fake_expect_fail("node type 0", &bad, &fake_bad, -EINVAL);
	bad = fake_bad.info;
	bad.name = "weft/bad";
	ret |= fake_expect_fail("name with '/'", &bad, &fake_bad, -EINVAL);
	if (ret)
		return -EINVAL;

	ret = fake_add(&fake_ca, &fake_ca_ops);
	if (ret)
		return ret;
	ret = fake_add(&fake_sw, &fake_sw_ops);
	if (ret) {
		weft_ib_sysfs_del(fake_ca.sysfs);
		return ret;
	}
	return 0;
}

static void __exit weft_selftest_ibsysfs_exit(void)
{
	weft_ib_sysfs_del(fake_sw.sysfs);
	weft_ib_sysfs_del(fake_ca.sysfs);
	WRITE_ONCE(fake_gone, true);
	mutex_destroy(&fake_ca.desc_lock);
	mutex_destroy(&fake_sw.desc_lock);
	mutex_destroy(&fake_bad.desc_lock);
}

module_init(weft_selftest_ibsysfs_init);
module_exit(weft_selftest_ibsysfs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test: fake devices in the infiniband sysfs class");
