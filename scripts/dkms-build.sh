#!/bin/sh
# dkms-build.sh KERNELVER KERNEL_SOURCE_DIR: DKMS's build command (dkms.conf).
# DKMS turns a MAKE command that starts with "make" into "make -jN ...";
# Weft's top-level make takes no -j (its kbuild run gets the parallelism).
set -eu
exec make -C "$(dirname "$0")/.." KDIR="$2" modules
