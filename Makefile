# SPDX-License-Identifier: GPL-2.0
#
# Weft: an InfiniBand stack for Linux in freestanding C++.
#
#   make                 build every module for KDIR (default: the running
#                        kernel's build dir if present, else Debian's 6.1 headers)
#   make KDIR=<tree>     build for another kernel (e.g. the debug kernel)
#   make sparse          run sparse (C=2) over every C shim
#   make fuzz            libFuzzer+ASan+UBSan runs of the pure parsers on the host (FUZZ_RUNS=N each)
#   make check           the test suite: both kernels, KUnit + integration in QEMU
#   make check-race      KUnit + concurrency-heavy integration tests under KCSAN
#   make check-install   make install and DKMS on a test host (tests/install/; not in make check)
#   make soak MINUTES=N  mixed traffic under cable flaps and restarts, debug kernel
#   make fuzz-syscalls MINUTES=N  syscall-sequence fuzzer on uverbs/rdma_cm/umad/netlink,
#                        debug kernel (SEED=S to start from a seed; tests/syzfuzz/README.md)
#   make run             boot a test host, bring a fabric up, show it with the real tools
#   make shell           the same test host, then a shell on its console (./shell-work/ shared)
#   make install         install the modules built for KDIR (DESTDIR=, INSTALL_MOD_DIR=), depmod
#   make uninstall       remove them (and the modprobe.d file with the last Weft installed)
#   make dkms-install    the sources to /usr/src/weft-<version>/, dkms add, build, install
#   make dkms-uninstall  dkms remove --all, the sources gone from /usr/src
#   make bench           verbs benchmark: Weft vs memcpy vs rxe (perftest)
#   make bench-verbs     perftest in user space: Weft (weft_uverbs) vs rxe vs memcpy
#   make bench-rdma-cm   cmtime connection setup/teardown: Weft's RDMA CM vs rxe's
#   make bench-ipoib     iperf3 over IPoIB (each mode) vs a veth pair
#   make bench-srp       fio on Weft's SRP vs brd vs the in-tree SRP over rxe
#   make bench-iser      fio on Weft's iSER vs brd vs the in-tree iSER over rxe vs iSCSI/TCP (PROFILE=1: where it goes)
#   make bench-scale     fabrics of ~1,024 HCAs under OpenSM, per routing engine (Documentation/scale.md)
#   make profile-ipoib   where the time goes under IPoIB iperf3 (MODE=connected|datagram, IPERF="-A 0,1")
#   make debug-kernel    build (or reuse) the cached KUnit/KASAN/lockdep kernel
#   make deps            install the Debian packages the build and tests need
#
# Objects go to build/<kernel release>/, a symlink mirror of the sources.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec

SRCDIR := $(CURDIR)
MODULE_DIRS := Kbuild include lib scripts tests/kunit tests/selftest tests/bench \
	$(wildcard drivers core ulp userspace)

# Newest Debian headers by version (6.1.0-10 after 6.1.0-9), as vm-run.sh boots.
DEBIAN_HEADERS = $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) $(DEBIAN_HEADERS))

ifneq ($(filter-out deps debug-kernel clean help dkms-install dkms-uninstall,$(or $(MAKECMDGOALS),all)),)
ifeq ($(wildcard $(KDIR)/include/config/kernel.release),)
$(info No kernel build tree at KDIR=$(KDIR): installing dependencies first.)
$(shell $(SRCDIR)/scripts/deps.sh >&2)
KDIR := $(DEBIAN_HEADERS)
endif
endif

KVER = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)
GCC_MAJOR = $(shell sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$$/\1/p' $(KDIR)/include/config/auto.conf)
WEFT_CXX = g++-$(GCC_MAJOR)
BUILD = $(SRCDIR)/build/$(KVER)
# The kernel's own compiler, spelled as it was (gcc or gcc-12): kbuild warns otherwise.
KCC = $(shell sed -n 's/^CONFIG_CC_VERSION_TEXT="\{0,1\}\([^ ]*\) .*/\1/p' $(KDIR)/include/config/auto.conf)
KMAKE = $(MAKE) -C $(KDIR) M=$(BUILD) CC=$(KCC) WEFT_CXX=$(WEFT_CXX) W=1

.PHONY: all modules layout mirror sparse check check-race check-install soak fuzz-syscalls run shell install uninstall dkms-install dkms-uninstall bench bench-verbs bench-rdma-cm bench-ipoib bench-srp bench-iser bench-scale profile-ipoib debug-kernel deps clean help print-kdir print-cxx

all: modules

mirror:
	@test -f $(KDIR)/include/config/kernel.release || { echo "no kernel tree at $(KDIR)"; exit 1; }
	@command -v $(WEFT_CXX) >/dev/null || $(SRCDIR)/scripts/deps.sh
	@$(SRCDIR)/scripts/mirror-tree.sh $(SRCDIR) $(BUILD) $(MODULE_DIRS)
	@mkdir -p $(BUILD)/generated/weft

# Sizes of kernel objects and errno values for C++, generated per kernel.
layout: mirror
	+@$(KMAKE) -s lib/rt/layout.s
	@$(SRCDIR)/scripts/gen-layout.sh $(BUILD)/lib/rt/layout.s $(BUILD)/generated/weft/layout.h

modules: layout
	@echo "Building Weft for $(KVER) ($(KDIR)) with $(WEFT_CXX)"
	+$(KMAKE) modules 2>&1 | tee $(BUILD)/build.log
	@$(SRCDIR)/scripts/check-build-log.sh $(BUILD)/build.log
	@echo "Modules for $(KVER):" $$(cd $(BUILD) && find . -name 'weft_*.ko' | sort)

sparse: layout
	+$(KMAKE) C=2 CHECK=sparse modules 2>&1 | tee $(BUILD)/sparse.log
	@if grep -E '^[^ ]+\.[ch]:[0-9]+:[0-9]+: (warning|error):' $(BUILD)/sparse.log; then \
		echo "sparse: not clean"; exit 1; fi
	@echo "sparse: clean ($$(grep -c '  CHECK ' $(BUILD)/sparse.log) C files checked)"

debug-kernel:
	@$(SRCDIR)/tests/kernel/build-debug-kernel.sh

check:
	@$(SRCDIR)/tests/run-all.sh

check-install: modules
	@$(SRCDIR)/tests/install/check-install.sh

check-race:
	@$(SRCDIR)/tests/race/run.sh

soak:
	@MINUTES=$(or $(MINUTES),10) $(SRCDIR)/tests/soak/run.sh

fuzz-syscalls:
	@MINUTES=$(or $(MINUTES),10) $(SRCDIR)/tests/syzfuzz/run.sh

run:
	@$(SRCDIR)/scripts/run-demo.sh

shell:
	@$(SRCDIR)/scripts/run-shell.sh

# Installing on this machine (Documentation/installing.md): what make built
# for KDIR, as the kernel's modules_install does it, without building.
install:
	@$(SRCDIR)/scripts/install.sh install $(KVER) $(BUILD)

uninstall:
	@$(SRCDIR)/scripts/install.sh uninstall $(KVER)

DKMS_VERSION = $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(SRCDIR)/dkms.conf)
DKMS_SRC = /usr/src/weft-$(DKMS_VERSION)

# DKMS copies what "dkms add DIR" finds; the sources alone go there.
dkms-install:
	@command -v dkms >/dev/null || { echo "dkms is not installed (apt-get install dkms)"; exit 1; }
	rm -rf $(DKMS_SRC) && mkdir -p $(DKMS_SRC)
	tar -C $(SRCDIR) --exclude=./build --exclude=./shell-work --exclude=./.git -cf - . | tar -C $(DKMS_SRC) -xf -
	dkms add weft/$(DKMS_VERSION)
	dkms install weft/$(DKMS_VERSION)

dkms-uninstall:
	@command -v dkms >/dev/null || { echo "dkms is not installed"; exit 1; }
	dkms remove weft/$(DKMS_VERSION) --all
	rm -rf $(DKMS_SRC)

# Benchmark table (Weft vs memcpy vs rxe) from one stock-kernel guest.
bench: modules
	@$(SRCDIR)/tests/bench/run.sh

bench-verbs: modules
	@$(SRCDIR)/tests/bench/verbs.sh

bench-rdma-cm: modules
	@$(SRCDIR)/tests/bench/rdma_cm.sh

bench-ipoib: modules
	@$(SRCDIR)/tests/bench/ipoib.sh

bench-srp: modules
	@$(SRCDIR)/tests/bench/srp.sh

bench-iser: modules
	@PROFILE=$(PROFILE) SECONDS_SAMPLED=$(SECONDS_SAMPLED) $(SRCDIR)/tests/bench/iser.sh

bench-scale: modules
	@$(SRCDIR)/tests/topologies/bench-scale.sh

profile-ipoib: modules
	@$(SRCDIR)/tests/bench/profile-ipoib.sh $(or $(MODE),connected)

deps:
	@$(SRCDIR)/scripts/deps.sh

# Host fuzzing of the freestanding parsers (tests/fuzz/README.md); no kernel needed.
.PHONY: fuzz
fuzz:
	@$(MAKE) --no-print-directory -C $(SRCDIR)/tests/fuzz $(if $(FUZZ_RUNS),FUZZ_RUNS=$(FUZZ_RUNS))

print-kdir:
	@echo $(KDIR)

print-cxx:
	@echo $(WEFT_CXX)

clean:
	rm -rf $(SRCDIR)/build

help:
	@sed -n '3,/make deps/p' $(SRCDIR)/Makefile
