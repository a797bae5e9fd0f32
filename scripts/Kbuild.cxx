# SPDX-License-Identifier: GPL-2.0
#
# C++ in Weft's kbuild: included by every Kbuild file that has .cpp objects.
#
# A .cpp file compiles with g++ of the kernel's gcc version (WEFT_CXX, set by
# the top Makefile) and with the kernel's own code-generation flags, i.e.
# kbuild's per-object C flags (including KASAN/KCOV instrumentation on a
# debug kernel), minus the flags that are C-only and minus ftrace's
# (-pg/-mfentry + COMDAT breaks `ld -r`: shared/notes/kernel-cxx.md).  It
# never sees kernel headers: no LINUXINCLUDE, no forced kernel includes.
#
# objtool runs once on each linked module instead of on every object:
# per-object runs leave duplicate .return_sites for COMDAT functions, which
# the kernel WARNs about at insmod.

override delay-objtool := y

WEFT_CXX ?= g++
WEFT_ROOT := $(KBUILD_EXTMOD)
# kmalloc's guaranteed alignment, for aligned new (generated per kernel).
WEFT_KMALLOC_MINALIGN := $(shell sed -n 's/^\#define WEFT_KMALLOC_MINALIGN //p' $(WEFT_ROOT)/generated/weft/layout.h)

weft-cxx-c-only := -std=gnu11 -std=gnu89 -Werror=strict-prototypes -Wstrict-prototypes \
	-Werror=implicit-function-declaration -Werror=implicit-int -Wno-pointer-sign \
	-Werror=incompatible-pointer-types -Werror=designated-init \
	-Wmissing-prototypes -Wold-style-definition -Wdeclaration-after-statement \
	-Wnested-externs -Wold-style-declaration -Wmissing-parameter-type \
	-Wno-alloc-size-larger-than -Wimplicit-fallthrough=5 \
	$(CC_FLAGS_FTRACE) -DCC_USING_FENTRY -DCC_USING_NOP_MCOUNT

weft-cxx-lang := -std=gnu++20 -ffreestanding -nostdinc -nostdinc++ \
	-isystem $(shell $(WEFT_CXX) -print-file-name=include) \
	-fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit \
	-fcheck-new -faligned-new=$(WEFT_KMALLOC_MINALIGN) \
	-Wno-missing-field-initializers -Wno-invalid-offsetof -Wimplicit-fallthrough \
	-I$(WEFT_ROOT)/include -I$(WEFT_ROOT)/generated \
	-include weft/base.h

cxx_flags = -Wp,-MMD,$(depfile) \
	$(filter-out $(weft-cxx-c-only), $(_c_flags) $(modkern_cflags) $(basename_flags) $(modname_flags)) \
	$(weft-cxx-lang)

quiet_cmd_cxx_o_cpp = CXX $(quiet_modtag) $@
      cmd_cxx_o_cpp = $(WEFT_CXX) $(cxx_flags) -c -o $@ $< && \
		python3 $(WEFT_ROOT)/scripts/shorten-cxx-symbols.py $(NM) $(OBJCOPY) $@ && \
		$(CONFIG_SHELL) $(WEFT_ROOT)/scripts/check-cxx-object.sh $(OBJDUMP) $@

define rule_cxx_o_cpp
	$(call cmd_and_fixdep,cxx_o_cpp)
endef

$(obj)/%.o: $(src)/%.cpp FORCE
	$(call if_changed_rule,cxx_o_cpp)

# C shims see the same headers (the C API half of include/weft).
ccflags-y += -I$(WEFT_ROOT)/include -I$(WEFT_ROOT)/generated

# weft-cxx-exports(module, objs): generate <module>_exports.c exporting the
# C++ symbols of objs (scripts/gen-cxx-exports.sh).
quiet_cmd_gen_cxx_exports = GEN     $@
      cmd_gen_cxx_exports = NM=$(NM) $(CONFIG_SHELL) $(WEFT_ROOT)/scripts/gen-cxx-exports.sh $@ $(filter %.o,$^)
