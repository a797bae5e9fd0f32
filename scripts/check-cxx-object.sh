#!/bin/sh
# check-cxx-object.sh OBJDUMP OBJ: fail if a C++ object has static
# constructors or destructors.  The kernel never runs them for modules
# (Debian's kernel has no CONFIG_CONSTRUCTORS), so a global that needs one
# would silently stay unconstructed.  The one exception is the constructor
# KASAN's instrumentation adds to register globals (priority 99), which the
# debug kernel does run.
set -eu
objdump=$1
obj=$2
bad=$("$objdump" -r -j .init_array -j .fini_array -j .ctors -j .dtors "$obj" 2>/dev/null |
	awk '/R_X86_64_/ { print $3 }' | grep -v '_sub_[ID]_00099_' || true)
secs=$("$objdump" -h "$obj" | awk '$2 ~ /^\.(ctors|dtors)/ { print $2 }')
if [ -n "$bad$secs" ]; then
	echo "error: $obj has static constructors/destructors: $bad $secs" >&2
	echo "error: C++ globals must be constinit (constant-initialised, trivially destructible)" >&2
	exit 1
fi
