// SPDX-License-Identifier: GPL-2.0
/*
 * The `infiniband` device class (ib_sysfs.h).  File names and output
 * formats are the user-space ABI of the in-tree 6.1 kernel
 * (drivers/infiniband/core/sysfs.c, device.c), byte for byte: libibumad,
 * ibstat and ibstatus parse them.  Written here from that ABI; see
 * Documentation/ABI/stable/sysfs-class-infiniband for the file list.
 *
 * Lifetime: a device is one struct device (the class device) with a plain
 * "ports" kobject under it and one kobject per port.  Every file is a
 * kernfs node, and removing a node (kobject_del(), device_del()) waits
 * until the show/store calls already inside it have returned and refuses
 * new ones.  So once weft_ib_sysfs_del() has removed every node, no
 * callback can run; the memory goes when the last kobject reference drops.
 */
#include <linux/device.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/kobject.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "ib_sysfs.h"

/* In-tree limits: IB_DEVICE_NAME_MAX and IB_DEVICE_NODE_DESC_MAX. */
#define WEFT_IB_NAME_MAX 64
#define WEFT_IB_DESC_MAX 64
#define WEFT_IB_MAX_PORTS 255
#define WEFT_IB_MAX_GIDS 256
#define WEFT_IB_MAX_PKEYS 65535

enum weft_ib_str { WEFT_IB_FW_VER, WEFT_IB_HCA_TYPE, WEFT_IB_HW_REV, WEFT_IB_BOARD_ID, WEFT_IB_NSTR };

struct weft_ib_port;

struct weft_ib_sysfs {
	struct device dev;
	const struct weft_ib_sysfs_ops *ops;
	void *ctx;
	u8 node_type;
	u64 node_guid, sys_image_guid;
	const char *str[WEFT_IB_NSTR];
	struct kobject *ports_kobj;
	u32 nports;			/* ports[] entries in sysfs */
	struct weft_ib_port *ports[];
};

/*
 * A file under ports/<N>/.  @index is the table entry (gids, pkeys) or the
 * PortInfo field; counters use @offset and @bits instead.
 */
struct weft_ib_port_attr {
	struct attribute attr;
	ssize_t (*show)(struct weft_ib_port *p, const struct weft_ib_port_attr *a, char *buf);
	u32 index;
	u16 offset;
	u8 bits;
};

/* gids/<i> and pkeys/<i>: allocated per port, with their names. */
struct weft_ib_table_attr {
	struct weft_ib_port_attr pa;
	char name[8];
};

struct weft_ib_port {
	struct kobject kobj;
	struct weft_ib_sysfs *dev;
	u32 num;
	struct attribute_group gids, pkeys;
	const struct attribute_group *groups[5];
	struct attribute **ptrs;	/* the two lists, each NULL-terminated */
	struct weft_ib_table_attr table[];	/* gid entries, then pkey entries */
};

static struct class weft_ib_class;

static struct weft_ib_sysfs *to_ib(struct device *dev)
{
	return container_of(dev, struct weft_ib_sysfs, dev);
}

/* A callback's result as a read's errno: anything but 0 or -errno is EIO. */
static int weft_ib_cb_err(int ret)
{
	if (ret < 0 && ret >= -MAX_ERRNO)
		return ret;
	return ret ? -EIO : 0;
}

/* --- device files ---------------------------------------------------------- */

/* In-tree spelling of the node types (lower case "switch", 6.1 sysfs.c). */
static const char *weft_ib_node_type_name(u8 type)
{
	switch (type) {
	case 1:
		return "CA";
	case 2:
		return "switch";
	case 3:
		return "router";
	}
	return "<unknown>";
}

static ssize_t node_type_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u8 type = to_ib(dev)->node_type;

	return sysfs_emit(buf, "%u: %s\n", type, weft_ib_node_type_name(type));
}
static DEVICE_ATTR_RO(node_type);

/* GUIDs print as four big-endian 16-bit groups (the in-tree ABI). */
static ssize_t weft_ib_emit_guid(char *buf, u64 guid)
{
	return sysfs_emit(buf, "%04x:%04x:%04x:%04x\n", (u16)(guid >> 48), (u16)(guid >> 32),
			  (u16)(guid >> 16), (u16)guid);
}

static ssize_t node_guid_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return weft_ib_emit_guid(buf, to_ib(dev)->node_guid);
}
static DEVICE_ATTR_RO(node_guid);

static ssize_t sys_image_guid_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return weft_ib_emit_guid(buf, to_ib(dev)->sys_image_guid);
}
static DEVICE_ATTR_RO(sys_image_guid);

static ssize_t node_desc_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct weft_ib_sysfs *s = to_ib(dev);
	char desc[WEFT_IB_DESC_MAX + 1] = {};

	s->ops->get_node_desc(s->ctx, desc);
	return sysfs_emit(buf, "%.64s\n", desc);
}

/*
 * In-tree takes at most the first 64 bytes of the write as they are.  We
 * also drop one trailing newline, so that `echo x > node_desc` sets "x", and
 * refuse a NUL inside, which would silently cut the description short.
 */
static ssize_t node_desc_store(struct device *dev, struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct weft_ib_sysfs *s = to_ib(dev);
	char desc[WEFT_IB_DESC_MAX + 1] = {};
	size_t len = count;
	int ret;

	if (!s->ops->set_node_desc)
		return -EOPNOTSUPP;
	if (len && buf[len - 1] == '\n')
		len--;
	if (memchr(buf, '\0', len))
		return -EINVAL;
	len = min_t(size_t, len, WEFT_IB_DESC_MAX);
	memcpy(desc, buf, len);
	ret = weft_ib_cb_err(s->ops->set_node_desc(s->ctx, desc, len));
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(node_desc);

/* fw_ver always exists (empty if unknown); the others only when given. */
struct weft_ib_str_attr {
	struct device_attribute dattr;
	enum weft_ib_str which;
};

static ssize_t weft_ib_str_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	const struct weft_ib_str_attr *a = container_of(attr, struct weft_ib_str_attr, dattr);
	const char *str = to_ib(dev)->str[a->which];

	return sysfs_emit(buf, "%s\n", str ? str : "");
}

#define WEFT_IB_STR_ATTR(_name, _which) \
	static struct weft_ib_str_attr weft_ib_attr_##_name = { \
		.dattr = __ATTR(_name, 0444, weft_ib_str_show, NULL), .which = _which }
WEFT_IB_STR_ATTR(fw_ver, WEFT_IB_FW_VER);
WEFT_IB_STR_ATTR(hca_type, WEFT_IB_HCA_TYPE);
WEFT_IB_STR_ATTR(hw_rev, WEFT_IB_HW_REV);
WEFT_IB_STR_ATTR(board_id, WEFT_IB_BOARD_ID);

static struct attribute *weft_ib_dev_attrs[] = {
	&dev_attr_node_type.attr,
	&dev_attr_node_guid.attr,
	&dev_attr_sys_image_guid.attr,
	&dev_attr_node_desc.attr,
	&weft_ib_attr_fw_ver.dattr.attr,
	&weft_ib_attr_hca_type.dattr.attr,
	&weft_ib_attr_hw_rev.dattr.attr,
	&weft_ib_attr_board_id.dattr.attr,
	NULL
};

static umode_t weft_ib_dev_attr_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	struct device_attribute *dattr = container_of(attr, struct device_attribute, attr);
	const struct weft_ib_str_attr *a;

	if (dattr->show != weft_ib_str_show)
		return attr->mode;
	a = container_of(dattr, struct weft_ib_str_attr, dattr);
	if (a->which != WEFT_IB_FW_VER && !to_ib(kobj_to_dev(kobj))->str[a->which])
		return 0;
	return attr->mode;
}

static const struct attribute_group weft_ib_dev_group = {
	.attrs = weft_ib_dev_attrs,
	.is_visible = weft_ib_dev_attr_visible,
};

static const struct attribute_group *weft_ib_dev_groups[] = { &weft_ib_dev_group, NULL };

/* --- port files ------------------------------------------------------------ */

static struct weft_ib_port *to_port(struct kobject *kobj)
{
	return container_of(kobj, struct weft_ib_port, kobj);
}

static ssize_t weft_ib_port_attr_show(struct kobject *kobj, struct attribute *attr, char *buf)
{
	const struct weft_ib_port_attr *a = container_of(attr, struct weft_ib_port_attr, attr);

	return a->show(to_port(kobj), a, buf);
}

/* Port files are read-only: no store, so sysfs refuses writes itself. */
static const struct sysfs_ops weft_ib_port_sysfs_ops = {
	.show = weft_ib_port_attr_show,
};

static int weft_ib_query_port(struct weft_ib_sysfs *s, u32 num, struct weft_ib_sysfs_port *pi)
{
	memset(pi, 0, sizeof(*pi));
	return weft_ib_cb_err(s->ops->query_port(s->ctx, num, pi));
}

/* PortInfo:PortState names as in-tree prints them (IBA 14.2.5.6). */
static const char *weft_ib_state_name(u8 state)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					     "ACTIVE_DEFER" };

	return state < ARRAY_SIZE(names) ? names[state] : "UNKNOWN";
}

/* PortInfo:PortPhysicalState names as in-tree prints them. */
static const char *weft_ib_phys_state_name(u8 phys)
{
	static const char *const names[] = { "<unknown>", "Sleep", "Polling", "Disabled",
					     "PortConfigurationTraining", "LinkUp",
					     "LinkErrorRecovery", "Phy Test" };

	return phys < ARRAY_SIZE(names) ? names[phys] : "<unknown>";
}

/* LinkWidthActive bit (IBA 14.2.5.6) to lanes; -1 for no single valid bit. */
static int weft_ib_width_lanes(u8 width)
{
	switch (width) {
	case 1:
		return 1;
	case 16:
		return 2;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	}
	return -1;
}

/*
 * "<Gb/s> Gb/sec (<lanes>X <speed>)" as in-tree: per-lane data rate in
 * tenths of Gb/s times the lanes, an unknown speed counted as SDR, an
 * invalid width an -EINVAL read.
 */
static ssize_t weft_ib_emit_rate(char *buf, const struct weft_ib_sysfs_port *pi)
{
	static const struct {
		u8 speed;
		u16 tenths;
		const char *name;
	} speeds[] = {
		{ 2, 50, "DDR" }, { 4, 100, "QDR" }, { 8, 100, "FDR10" }, { 16, 140, "FDR" },
		{ 32, 250, "EDR" }, { 64, 500, "HDR" }, { 128, 1000, "NDR" },
	};
	int lanes = weft_ib_width_lanes(pi->active_width);
	const char *name = "SDR";
	int tenths = 25, rate;
	size_t i;

	if (lanes < 0)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(speeds); i++) {
		if (speeds[i].speed == pi->active_speed) {
			tenths = speeds[i].tenths;
			name = speeds[i].name;
		}
	}
	rate = tenths * lanes;
	return sysfs_emit(buf, "%d%s Gb/sec (%dX %s)\n", rate / 10, rate % 10 ? ".5" : "", lanes,
			  name);
}

enum weft_ib_port_field {
	WEFT_IB_LID, WEFT_IB_LMC, WEFT_IB_SM_LID, WEFT_IB_SM_SL, WEFT_IB_STATE,
	WEFT_IB_PHYS_STATE, WEFT_IB_RATE, WEFT_IB_CAP_MASK,
};

static ssize_t weft_ib_port_info_show(struct weft_ib_port *p, const struct weft_ib_port_attr *a,
				      char *buf)
{
	struct weft_ib_sysfs_port pi;
	int ret = weft_ib_query_port(p->dev, p->num, &pi);

	if (ret)
		return ret;
	switch (a->index) {
	case WEFT_IB_LID:
		return sysfs_emit(buf, "0x%x\n", pi.lid);
	case WEFT_IB_LMC:
		return sysfs_emit(buf, "%u\n", pi.lmc);
	case WEFT_IB_SM_LID:
		return sysfs_emit(buf, "0x%x\n", pi.sm_lid);
	case WEFT_IB_SM_SL:
		return sysfs_emit(buf, "%u\n", pi.sm_sl);
	case WEFT_IB_STATE:
		return sysfs_emit(buf, "%u: %s\n", pi.state, weft_ib_state_name(pi.state));
	case WEFT_IB_PHYS_STATE:
		return sysfs_emit(buf, "%u: %s\n", pi.phys_state,
				  weft_ib_phys_state_name(pi.phys_state));
	case WEFT_IB_RATE:
		return weft_ib_emit_rate(buf, &pi);
	case WEFT_IB_CAP_MASK:
		return sysfs_emit(buf, "0x%08x\n", pi.cap_mask);
	}
	return -EIO;
}

/* Weft ports are InfiniBand ports; in-tree does not query the port here. */
static ssize_t weft_ib_link_layer_show(struct weft_ib_port *p, const struct weft_ib_port_attr *a,
				       char *buf)
{
	return sysfs_emit(buf, "InfiniBand\n");
}

#define WEFT_IB_PORT_ATTR(_name, _show, _index) \
	static struct weft_ib_port_attr weft_ib_port_##_name = { \
		.attr = { .name = #_name, .mode = 0444 }, .show = _show, .index = _index }
WEFT_IB_PORT_ATTR(lid, weft_ib_port_info_show, WEFT_IB_LID);
WEFT_IB_PORT_ATTR(lid_mask_count, weft_ib_port_info_show, WEFT_IB_LMC);
WEFT_IB_PORT_ATTR(sm_lid, weft_ib_port_info_show, WEFT_IB_SM_LID);
WEFT_IB_PORT_ATTR(sm_sl, weft_ib_port_info_show, WEFT_IB_SM_SL);
WEFT_IB_PORT_ATTR(state, weft_ib_port_info_show, WEFT_IB_STATE);
WEFT_IB_PORT_ATTR(phys_state, weft_ib_port_info_show, WEFT_IB_PHYS_STATE);
WEFT_IB_PORT_ATTR(rate, weft_ib_port_info_show, WEFT_IB_RATE);
WEFT_IB_PORT_ATTR(cap_mask, weft_ib_port_info_show, WEFT_IB_CAP_MASK);
WEFT_IB_PORT_ATTR(link_layer, weft_ib_link_layer_show, 0);

static struct attribute *weft_ib_port_attrs[] = {
	&weft_ib_port_lid.attr,
	&weft_ib_port_lid_mask_count.attr,
	&weft_ib_port_sm_lid.attr,
	&weft_ib_port_sm_sl.attr,
	&weft_ib_port_state.attr,
	&weft_ib_port_phys_state.attr,
	&weft_ib_port_rate.attr,
	&weft_ib_port_cap_mask.attr,
	&weft_ib_port_link_layer.attr,
	NULL
};
ATTRIBUTE_GROUPS(weft_ib_port);

/* gids/<i>: the GID as %pI6 (eight 4-digit groups), as in-tree. */
static ssize_t weft_ib_gid_show(struct weft_ib_port *p, const struct weft_ib_port_attr *a,
				char *buf)
{
	u8 gid[16] = {};
	int ret = weft_ib_cb_err(p->dev->ops->query_gid(p->dev->ctx, p->num, a->index, gid));

	return ret ? ret : sysfs_emit(buf, "%pI6\n", gid);
}

static ssize_t weft_ib_pkey_show(struct weft_ib_port *p, const struct weft_ib_port_attr *a,
				 char *buf)
{
	u16 pkey = 0;
	int ret = weft_ib_cb_err(p->dev->ops->query_pkey(p->dev->ctx, p->num, a->index, &pkey));

	return ret ? ret : sysfs_emit(buf, "0x%04x\n", pkey);
}

/*
 * counters/<name>: in-tree reads these from the PMA (PortCounters, and
 * PortCountersExtended for the data/packet counters when the PMA has them,
 * which gives this file set) and prints each field's value in decimal; the
 * data counters stay in 4-byte words.  A PortCounters field saturates at its
 * width (IBA 16.1.3.5), so a wider value reads as the field's maximum.
 */
static ssize_t weft_ib_counter_show(struct weft_ib_port *p, const struct weft_ib_port_attr *a,
				    char *buf)
{
	struct weft_ib_sysfs_counters c = {};
	u64 v;
	int ret = weft_ib_cb_err(p->dev->ops->query_counters(p->dev->ctx, p->num, &c));

	if (ret)
		return ret;
	memcpy(&v, (const u8 *)&c + a->offset, sizeof(v));
	if (a->bits < 64)
		v = min_t(u64, v, (1ULL << a->bits) - 1);
	return sysfs_emit(buf, "%llu\n", v);
}

#define WEFT_IB_COUNTER(_file, _field, _bits) \
	static struct weft_ib_port_attr weft_ib_counter_##_field = { \
		.attr = { .name = _file, .mode = 0444 }, .show = weft_ib_counter_show, \
		.offset = offsetof(struct weft_ib_sysfs_counters, _field), .bits = _bits }
WEFT_IB_COUNTER("symbol_error", symbol_error, 16);
WEFT_IB_COUNTER("link_error_recovery", link_error_recovery, 8);
WEFT_IB_COUNTER("link_downed", link_downed, 8);
WEFT_IB_COUNTER("port_rcv_errors", port_rcv_errors, 16);
WEFT_IB_COUNTER("port_rcv_remote_physical_errors", port_rcv_remote_physical_errors, 16);
WEFT_IB_COUNTER("port_rcv_switch_relay_errors", port_rcv_switch_relay_errors, 16);
WEFT_IB_COUNTER("port_xmit_discards", port_xmit_discards, 16);
WEFT_IB_COUNTER("port_xmit_constraint_errors", port_xmit_constraint_errors, 8);
WEFT_IB_COUNTER("port_rcv_constraint_errors", port_rcv_constraint_errors, 8);
WEFT_IB_COUNTER("local_link_integrity_errors", local_link_integrity_errors, 4);
WEFT_IB_COUNTER("excessive_buffer_overrun_errors", excessive_buffer_overrun_errors, 4);
WEFT_IB_COUNTER("VL15_dropped", vl15_dropped, 16);	/* in-tree capitalises VL */
WEFT_IB_COUNTER("port_xmit_wait", port_xmit_wait, 32);
WEFT_IB_COUNTER("port_xmit_data", port_xmit_data, 64);
WEFT_IB_COUNTER("port_rcv_data", port_rcv_data, 64);
WEFT_IB_COUNTER("port_xmit_packets", port_xmit_packets, 64);
WEFT_IB_COUNTER("port_rcv_packets", port_rcv_packets, 64);
WEFT_IB_COUNTER("unicast_xmit_packets", unicast_xmit_packets, 64);
WEFT_IB_COUNTER("unicast_rcv_packets", unicast_rcv_packets, 64);
WEFT_IB_COUNTER("multicast_xmit_packets", multicast_xmit_packets, 64);
WEFT_IB_COUNTER("multicast_rcv_packets", multicast_rcv_packets, 64);

static struct attribute *weft_ib_counter_attrs[] = {
	&weft_ib_counter_symbol_error.attr,
	&weft_ib_counter_link_error_recovery.attr,
	&weft_ib_counter_link_downed.attr,
	&weft_ib_counter_port_rcv_errors.attr,
	&weft_ib_counter_port_rcv_remote_physical_errors.attr,
	&weft_ib_counter_port_rcv_switch_relay_errors.attr,
	&weft_ib_counter_port_xmit_discards.attr,
	&weft_ib_counter_port_xmit_constraint_errors.attr,
	&weft_ib_counter_port_rcv_constraint_errors.attr,
	&weft_ib_counter_local_link_integrity_errors.attr,
	&weft_ib_counter_excessive_buffer_overrun_errors.attr,
	&weft_ib_counter_vl15_dropped.attr,
	&weft_ib_counter_port_xmit_wait.attr,
	&weft_ib_counter_port_xmit_data.attr,
	&weft_ib_counter_port_rcv_data.attr,
	&weft_ib_counter_port_xmit_packets.attr,
	&weft_ib_counter_port_rcv_packets.attr,
	&weft_ib_counter_unicast_xmit_packets.attr,
	&weft_ib_counter_unicast_rcv_packets.attr,
	&weft_ib_counter_multicast_xmit_packets.attr,
	&weft_ib_counter_multicast_rcv_packets.attr,
	NULL
};

static const struct attribute_group weft_ib_counter_group = {
	.name = "counters",
	.attrs = weft_ib_counter_attrs,
};

/*
 * hw_counters/<name>: the device's own counters, not the PMA's, named as
 * mlx5 names them (in-tree also has a writable "lifespan" there, the
 * cache time of rdma_hw_stats; these are read live, so there is none).
 */
WEFT_IB_COUNTER("out_of_buffer", out_of_buffer, 64);
/* Weft's own: answers of the device's SMA/PMA that a full QP0/QP1 send queue lost. */
WEFT_IB_COUNTER("mad_replies_dropped", mad_replies_dropped, 64);

static struct attribute *weft_ib_hw_counter_attrs[] = {
	&weft_ib_counter_out_of_buffer.attr,
	&weft_ib_counter_mad_replies_dropped.attr,
	NULL
};

static const struct attribute_group weft_ib_hw_counter_group = {
	.name = "hw_counters",
	.attrs = weft_ib_hw_counter_attrs,
};

static void weft_ib_port_release(struct kobject *kobj)
{
	kvfree(to_port(kobj));
}

static const struct kobj_type weft_ib_port_ktype = {
	.release = weft_ib_port_release,
	.sysfs_ops = &weft_ib_port_sysfs_ops,
	.default_groups = weft_ib_port_groups,
};

/*
 * Fill one table group ("gids" or "pkeys"): @n files from @table, listed in
 * @list (n + 1 slots, NULL-terminated).
 */
static void weft_ib_table_group(struct attribute_group *g, const char *name,
				struct weft_ib_table_attr *table, struct attribute **list, u32 n,
				ssize_t (*show)(struct weft_ib_port *,
						const struct weft_ib_port_attr *, char *))
{
	u32 i;

	for (i = 0; i < n; i++) {
		struct weft_ib_table_attr *t = &table[i];

		snprintf(t->name, sizeof(t->name), "%u", i);
		sysfs_attr_init(&t->pa.attr);	/* lockdep key for a dynamic attribute */
		t->pa.attr.name = t->name;
		t->pa.attr.mode = 0444;
		t->pa.show = show;
		t->pa.index = i;
		list[i] = &t->pa.attr;
	}
	list[n] = NULL;
	g->name = name;
	g->attrs = list;
}

/* ports/<num>/ with its files; on success it is in s->ports[]. */
static int weft_ib_port_add(struct weft_ib_sysfs *s, u32 num)
{
	struct weft_ib_sysfs_port pi;
	struct weft_ib_port *p;
	u32 ngid, npkey, n;
	int ret, g = 0;

	ret = weft_ib_query_port(s, num, &pi);
	if (ret)
		return ret;
	ngid = pi.gid_tbl_len;
	npkey = pi.pkey_tbl_len;
	if (ngid > WEFT_IB_MAX_GIDS || npkey > WEFT_IB_MAX_PKEYS)
		return -EINVAL;
	n = ngid + npkey;
	p = kvzalloc(size_add(struct_size(p, table, n), array_size(n + 2, sizeof(*p->ptrs))),
		     GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->dev = s;
	p->num = num;
	p->ptrs = (struct attribute **)&p->table[n];
	kobject_init(&p->kobj, &weft_ib_port_ktype);	/* from here kobject_put() frees p */

	/* gids/ always exists, even empty; pkeys/ only with a P_Key table (in-tree). */
	weft_ib_table_group(&p->gids, "gids", p->table, p->ptrs, ngid, weft_ib_gid_show);
	p->groups[g++] = &p->gids;
	if (npkey) {
		weft_ib_table_group(&p->pkeys, "pkeys", p->table + ngid, p->ptrs + ngid + 1, npkey,
				    weft_ib_pkey_show);
		p->groups[g++] = &p->pkeys;
	}
	if (s->ops->query_counters) {
		p->groups[g++] = &weft_ib_counter_group;
		p->groups[g++] = &weft_ib_hw_counter_group;
	}
	p->groups[g] = NULL;

	ret = kobject_add(&p->kobj, s->ports_kobj, "%u", num);
	if (ret)
		goto put;
	ret = sysfs_create_groups(&p->kobj, p->groups);
	if (ret)
		goto del;
	s->ports[s->nports++] = p;
	return 0;
del:
	kobject_del(&p->kobj);
put:
	kobject_put(&p->kobj);
	return ret;
}

/* --- devices --------------------------------------------------------------- */

static void weft_ib_dev_release(struct device *dev)
{
	struct weft_ib_sysfs *s = to_ib(dev);
	int i;

	for (i = 0; i < WEFT_IB_NSTR; i++)
		kfree(s->str[i]);
	kfree(s);
}

/*
 * Take every file out of sysfs, ports first.  Each removal waits for the
 * show/store calls running in the files it removes, so no callback runs
 * after this; the last put_device() then frees the memory.
 */
static void weft_ib_remove(struct weft_ib_sysfs *s)
{
	while (s->nports) {
		struct weft_ib_port *p = s->ports[--s->nports];

		kobject_del(&p->kobj);
		kobject_put(&p->kobj);
	}
	if (s->ports_kobj) {
		kobject_del(s->ports_kobj);
		kobject_put(s->ports_kobj);
		s->ports_kobj = NULL;
	}
	device_del(&s->dev);
}

static int weft_ib_check(const struct weft_ib_sysfs_info *info, const struct weft_ib_sysfs_ops *ops)
{
	size_t len;

	if (!info || !ops || !info->name || !ops->query_port || !ops->query_gid ||
	    !ops->query_pkey || !ops->get_node_desc)
		return -EINVAL;
	len = strnlen(info->name, WEFT_IB_NAME_MAX);
	if (!len || len >= WEFT_IB_NAME_MAX || strchr(info->name, '/'))
		return -EINVAL;
	if (info->node_type < 1 || info->node_type > 3 || info->num_ports > WEFT_IB_MAX_PORTS ||
	    info->first_port > U32_MAX - info->num_ports)
		return -EINVAL;
	return 0;
}

static int weft_ib_copy_strings(struct weft_ib_sysfs *s, const struct weft_ib_sysfs_info *info)
{
	const char *from[WEFT_IB_NSTR] = {
		[WEFT_IB_FW_VER] = info->fw_ver, [WEFT_IB_HCA_TYPE] = info->hca_type,
		[WEFT_IB_HW_REV] = info->hw_rev, [WEFT_IB_BOARD_ID] = info->board_id,
	};
	int i;

	for (i = 0; i < WEFT_IB_NSTR; i++) {
		if (!from[i])
			continue;
		s->str[i] = kstrdup(from[i], GFP_KERNEL);
		if (!s->str[i])
			return -ENOMEM;
	}
	return 0;
}

struct weft_ib_sysfs *weft_ib_sysfs_add(const struct weft_ib_sysfs_info *info,
					const struct weft_ib_sysfs_ops *ops, void *ctx, int *err)
{
	struct weft_ib_sysfs *s;
	u32 i;
	int ret;

	ret = weft_ib_check(info, ops);
	if (ret)
		goto out;
	s = kzalloc(struct_size(s, ports, info->num_ports), GFP_KERNEL);
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	s->ops = ops;
	s->ctx = ctx;
	s->node_type = info->node_type;
	s->node_guid = info->node_guid;
	s->sys_image_guid = info->sys_image_guid;
	device_initialize(&s->dev);	/* from here put_device() frees s */
	s->dev.class = &weft_ib_class;
	s->dev.groups = weft_ib_dev_groups;
	s->dev.release = weft_ib_dev_release;
	ret = weft_ib_copy_strings(s, info);
	if (!ret)
		ret = dev_set_name(&s->dev, "%s", info->name);
	if (ret)
		goto put;

	/* Like in-tree, announce the device (KOBJ_ADD) only once its ports exist. */
	dev_set_uevent_suppress(&s->dev, true);
	ret = device_add(&s->dev);
	if (ret)
		goto put;
	s->ports_kobj = kobject_create_and_add("ports", &s->dev.kobj);
	if (!s->ports_kobj) {
		ret = -ENOMEM;
		goto remove;
	}
	for (i = 0; i < info->num_ports; i++) {
		ret = weft_ib_port_add(s, info->first_port + i);
		if (ret)
			goto remove;
	}
	dev_set_uevent_suppress(&s->dev, false);
	kobject_uevent(&s->dev.kobj, KOBJ_ADD);
	return s;

remove:
	weft_ib_remove(s);
put:
	put_device(&s->dev);
out:
	*err = ret;
	return NULL;
}
EXPORT_SYMBOL_GPL(weft_ib_sysfs_add);

void weft_ib_sysfs_del(struct weft_ib_sysfs *s)
{
	if (!s)
		return;
	weft_ib_remove(s);
	put_device(&s->dev);
}
EXPORT_SYMBOL_GPL(weft_ib_sysfs_del);

/* --- the class ------------------------------------------------------------- */

/* NAME=<device> in every uevent, as in-tree (udev's rdma rules use it). */
static int weft_ib_uevent(struct device *dev, struct kobj_uevent_env *env)
{
	return add_uevent_var(env, "NAME=%s", dev_name(dev));
}

static struct class weft_ib_class = {
	.name = "infiniband",
	.dev_uevent = weft_ib_uevent,
};

int weft_ib_sysfs_class_init(void)
{
	return class_register(&weft_ib_class);
}

void weft_ib_sysfs_class_exit(void)
{
	class_unregister(&weft_ib_class);
}
