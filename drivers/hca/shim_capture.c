// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs files of the fabric capture (capture_kapi.h).  Thin: the capture
 * state, ring and pcap format are in capture.cpp.
 *
 * Lifetime: the files are created with debugfs_create_file(), so debugfs
 * proxies every operation and debugfs_remove() waits for operations in
 * progress and fails later ones (-EIO), except release, which always runs.
 * The C++ side therefore keeps the capture state in the open file, not in
 * the port, and detaches (and wakes a blocked reader) before the directory
 * is removed.  .owner pins weft_hca while a file is open.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "capture_kapi.h"

static struct dentry *weft_debugfs_root;

void weft_capture_debugfs_init(void)
{
	weft_debugfs_root = debugfs_create_dir("weft", NULL);
}

void weft_capture_debugfs_exit(void)
{
	debugfs_remove(weft_debugfs_root);
	weft_debugfs_root = NULL;
}

struct dentry *weft_capture_debugfs_dir(const char *device)
{
	struct dentry *d = debugfs_create_dir(device, weft_debugfs_root);

	return IS_ERR(d) ? NULL : d;
}

void weft_capture_debugfs_remove(struct dentry *dir)
{
	debugfs_remove(dir);
}

static int capture_open(struct inode *inode, struct file *file)
{
	void *state;
	int ret = weft_capture_file_open(inode->i_private, &state);

	if (ret)
		return ret;
	file->private_data = state;
	return nonseekable_open(inode, file);
}

static ssize_t capture_read(struct file *file, char __user *buf, size_t len, loff_t *ppos)
{
	return weft_capture_file_read(file->private_data, (void __force *)buf, len,
				      file->f_flags & O_NONBLOCK);
}

static int capture_release(struct inode *inode, struct file *file)
{
	weft_capture_file_release(file->private_data);
	return 0;
}

static const struct file_operations capture_fops = {
	.owner = THIS_MODULE,
	.open = capture_open,
	.read = capture_read,
	.release = capture_release,
	.llseek = no_llseek,
};

void weft_capture_debugfs_port(struct dentry *dir, uint8_t num, void *port,
			       uint64_t *packets, uint64_t *dropped)
{
	char name[16];
	struct dentry *d;

	if (!dir)
		return;
	snprintf(name, sizeof(name), "port%u", num);
	d = debugfs_create_dir(name, dir);
	debugfs_create_file("capture", 0400, d, port, &capture_fops);
	debugfs_create_u64("capture_packets", 0444, d, packets);
	debugfs_create_u64("capture_dropped", 0444, d, dropped);
}

int weft_capture_copy_to_user(void *ubuf, const void *src, size_t len)
{
	return copy_to_user((void __force __user *)ubuf, src, len) ? -EFAULT : 0;
}

uint64_t weft_capture_clock_ns(void)
{
	return ktime_get_real_ns();
}
