#!/bin/bash
# PID 1 of a test host after switch_root: set the system up, run the job,
# record its exit status in the job share, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# /tmp stays the overlay's (tmpfs-backed) view of the host's: the repository
# under test may live there (CI clones into a temporary directory).
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
hostname weft-host
ip link set lo up

# shellcheck source=/dev/null
set -a
. /weft-job/env
set +a

# The debug kernel's own modules live in the cache: show them where modprobe looks.
if [ ! -d "/lib/modules/$(uname -r)" ] && [ -d "$WEFT_KMODS" ]; then
	mkdir -p "/lib/modules/$(uname -r)"
	mount --bind "$WEFT_KMODS" "/lib/modules/$(uname -r)"
fi

# Weft is the RDMA stack on a test host: the in-tree one must never load
# (libibverbs' netlink probe would otherwise pull ib_core in).
mkdir -p /etc/modprobe.d
for m in ib_core ib_uverbs ib_umad ib_cm iw_cm rdma_cm rdma_ucm ib_ipoib ib_srp ib_srpt \
	ib_iser ib_isert rdma_rxe siw mlx4_ib mlx5_ib rpcrdma; do
	echo "install $m /bin/false"
done >/etc/modprobe.d/weft-test-host.conf

echo "weft-host: kernel $(uname -r), job $(head -c 200 /weft-job/job.sh | sed -n 2p)"
cd /weft-job || exit 1
bash -c '. /weft-job/guest-lib.sh; . /weft-job/job.sh' job "${WEFT_JOB_ARGS[@]}" </dev/null
rc=$?
echo "$rc" >/weft-job/rc
sync
echo "weft-host: job exit status $rc"
# Power off with reboot(2) from a child: it is synchronous, so PID 1 waits
# for it inside the kernel.  The asynchronous sysrq power-off let PID 1
# run on while the devices shut down, and the host's binaries come over
# 9p: an exec'd sleep failed there (init exited: a panic read as a splat),
# and so did a page of bash's own text (SIGBUS).  sysrq stays the fallback.
busybox poweroff -f
echo o >/proc/sysrq-trigger
sleep 30
