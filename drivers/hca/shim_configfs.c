// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/config/weft/: the configfs objects of the run-time topology
 * interface (control.h).  This file only builds the directories and
 * attribute files and forwards every mkdir, rmdir, read and write to the
 * C++ control plane.
 *
 * Lifetime, from configfs itself: an item's type has ct_owner = this
 * module, so while any directory exists under hcas/, switches/ or cables/
 * the module cannot be unloaded; rmdir marks the attribute files dead
 * (no show/store after it) before drop_item; the object is freed when the
 * item's last reference goes (release).
 */
#include <linux/configfs.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "control.h"

struct weft_cfs_item {
	struct config_item item;
	enum weft_ctl_kind kind;
	void *obj;
};

static struct configfs_subsystem weft_cfs_subsys;
/* hcas/, switches/, cables/: indexed by kind. */
static struct config_group weft_cfs_groups[WEFT_CTL_NKINDS];

static struct weft_cfs_item *to_wi(struct config_item *item)
{
	return container_of(item, struct weft_cfs_item, item);
}

static bool weft_cfs_is_root(struct config_item *item)
{
	return item == &weft_cfs_subsys.su_group.cg_item;
}

static ssize_t weft_cfs_show(struct config_item *item, enum weft_ctl_attr attr, char *page)
{
	if (weft_cfs_is_root(item))
		return weft_ctl_show(WEFT_CTL_FABRIC, NULL, attr, page, PAGE_SIZE);
	return weft_ctl_show(to_wi(item)->kind, to_wi(item)->obj, attr, page, PAGE_SIZE);
}

static ssize_t weft_cfs_store(struct config_item *item, enum weft_ctl_attr attr,
			      const char *page, size_t len)
{
	if (weft_cfs_is_root(item))
		return weft_ctl_store(WEFT_CTL_FABRIC, NULL, attr, page, len);
	return weft_ctl_store(to_wi(item)->kind, to_wi(item)->obj, attr, page, len);
}

/* configfs passes no attribute to show/store: one trampoline pair per file. */
#define WEFT_CFS_SHOW(name, id)                                                       \
	static ssize_t weft_cfs_##name##_show(struct config_item *item, char *page)   \
	{                                                                             \
		return weft_cfs_show(item, id, page);                                 \
	}
#define WEFT_CFS_STORE(name, id)                                                      \
	static ssize_t weft_cfs_##name##_store(struct config_item *item,              \
					       const char *page, size_t len)          \
	{                                                                             \
		return weft_cfs_store(item, id, page, len);                           \
	}
#define WEFT_CFS_RW(name, id) WEFT_CFS_SHOW(name, id) WEFT_CFS_STORE(name, id) \
	CONFIGFS_ATTR(weft_cfs_, name)

WEFT_CFS_STORE(autoconf, WEFT_CTL_AUTOCONF)
CONFIGFS_ATTR_WO(weft_cfs_, autoconf);

/*
 * topology is a binary attribute: a text attribute is one page, and a
 * fabric of a thousand nodes takes far more.  configfs calls read twice,
 * with no buffer for the length and then with a buffer of that length;
 * a fabric changed in between shows only the whole lines that fit.
 */
static ssize_t weft_cfs_topology_read(struct config_item *item, void *buf, size_t size)
{
	return weft_ctl_topology(buf, buf ? size : 0);
}
CONFIGFS_BIN_ATTR_RO(weft_cfs_, topology, NULL, WEFT_CTL_TOPOLOGY_MAX);
WEFT_CFS_RW(ports, WEFT_CTL_PORTS);
WEFT_CFS_RW(enable, WEFT_CTL_ENABLE);
WEFT_CFS_SHOW(device, WEFT_CTL_DEVICE)
CONFIGFS_ATTR_RO(weft_cfs_, device);
WEFT_CFS_RW(a, WEFT_CTL_A);
WEFT_CFS_RW(b, WEFT_CTL_B);
WEFT_CFS_RW(up, WEFT_CTL_UP);
WEFT_CFS_RW(drop, WEFT_CTL_DROP);
WEFT_CFS_RW(corrupt, WEFT_CTL_CORRUPT);
WEFT_CFS_RW(duplicate, WEFT_CTL_DUPLICATE);
WEFT_CFS_RW(reorder, WEFT_CTL_REORDER);
WEFT_CFS_RW(delay, WEFT_CTL_DELAY);

static struct configfs_attribute *weft_cfs_root_attrs[] = {
	&weft_cfs_attr_autoconf, NULL,
};

static struct configfs_bin_attribute *weft_cfs_root_bin_attrs[] = {
	&weft_cfs_attr_topology, NULL,
};

static struct configfs_attribute *weft_cfs_node_attrs[] = {
	&weft_cfs_attr_ports, &weft_cfs_attr_enable, &weft_cfs_attr_device, NULL,
};

static struct configfs_attribute *weft_cfs_cable_attrs[] = {
	&weft_cfs_attr_a, &weft_cfs_attr_b, &weft_cfs_attr_up,
	&weft_cfs_attr_drop, &weft_cfs_attr_corrupt, &weft_cfs_attr_duplicate,
	&weft_cfs_attr_reorder, &weft_cfs_attr_delay, NULL,
};

static void weft_cfs_release(struct config_item *item)
{
	struct weft_cfs_item *wi = to_wi(item);

	weft_ctl_free(wi->kind, wi->obj);
	kfree(wi);
}

static struct configfs_item_operations weft_cfs_item_ops = {
	.release = weft_cfs_release,
};

static const struct config_item_type weft_cfs_item_types[WEFT_CTL_NKINDS] = {
	[WEFT_CTL_HCA] = { .ct_item_ops = &weft_cfs_item_ops, .ct_attrs = weft_cfs_node_attrs,
			   .ct_owner = THIS_MODULE },
	[WEFT_CTL_SWITCH] = { .ct_item_ops = &weft_cfs_item_ops, .ct_attrs = weft_cfs_node_attrs,
			      .ct_owner = THIS_MODULE },
	[WEFT_CTL_CABLE] = { .ct_item_ops = &weft_cfs_item_ops, .ct_attrs = weft_cfs_cable_attrs,
			     .ct_owner = THIS_MODULE },
};

static struct config_item *weft_cfs_make_item(struct config_group *group, const char *name)
{
	enum weft_ctl_kind kind = (enum weft_ctl_kind)(group - weft_cfs_groups);
	struct weft_cfs_item *wi;
	int err = 0;

	wi = kzalloc(sizeof(*wi), GFP_KERNEL);
	if (!wi)
		return ERR_PTR(-ENOMEM);
	wi->kind = kind;
	wi->obj = weft_ctl_make(kind, &err);
	if (!wi->obj) {
		kfree(wi);
		return ERR_PTR(err ? err : -ENOMEM);
	}
	config_item_init_type_name(&wi->item, name, &weft_cfs_item_types[kind]);
	return &wi->item;
}

static void weft_cfs_drop_item(struct config_group *group, struct config_item *item)
{
	weft_ctl_drop(to_wi(item)->kind, to_wi(item)->obj);
	config_item_put(item);
}

static struct configfs_group_operations weft_cfs_group_ops = {
	.make_item = weft_cfs_make_item,
	.drop_item = weft_cfs_drop_item,
};

static const struct config_item_type weft_cfs_group_type = {
	.ct_group_ops = &weft_cfs_group_ops,
	.ct_owner = THIS_MODULE,
};

static const struct config_item_type weft_cfs_root_type = {
	.ct_attrs = weft_cfs_root_attrs,
	.ct_bin_attrs = weft_cfs_root_bin_attrs,
	.ct_owner = THIS_MODULE,
};

static const char *const weft_cfs_group_names[WEFT_CTL_NKINDS] = {
	[WEFT_CTL_HCA] = "hcas",
	[WEFT_CTL_SWITCH] = "switches",
	[WEFT_CTL_CABLE] = "cables",
};

int weft_cfs_register(void)
{
	int kind;

	config_group_init_type_name(&weft_cfs_subsys.su_group, "weft", &weft_cfs_root_type);
	mutex_init(&weft_cfs_subsys.su_mutex);
	for (kind = WEFT_CTL_HCA; kind < WEFT_CTL_NKINDS; kind++) {
		config_group_init_type_name(&weft_cfs_groups[kind], weft_cfs_group_names[kind],
					    &weft_cfs_group_type);
		configfs_add_default_group(&weft_cfs_groups[kind], &weft_cfs_subsys.su_group);
	}
	return configfs_register_subsystem(&weft_cfs_subsys);
}

void weft_cfs_unregister(void)
{
	configfs_unregister_subsystem(&weft_cfs_subsys);
}
