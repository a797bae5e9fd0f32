#!/bin/sh
# check-cxx-object.sh OBJDUMP OBJ: fail if a C++ object has static
# constructors or destructors.  The kernel never runs them for modules
# (Debian's kernel has no CONFIG_CONSTRUCTORS), so a global that needs one
# would silently stay unconstructed.  g++ names them _GLOBAL__sub_I_/_D_.
# The exceptions are what the sanitizers' instrumentation adds, which the
# checker kernels do run: KASAN's constructor/destructor pair that
# (un)registers globals (_sub_I_/_sub_D_, calling __asan_register_globals)
# on the debug kernel, KCSAN's constructor calling __tsan_init on the race
# kernel.
set -eu
objdump=$1
obj=$2
nm=${NM:-nm}
fail() {
	echo "error: $obj has static constructors/destructors: $*" >&2
	echo "error: C++ globals must be constinit (constant-initialised, trivially destructible)" >&2
	exit 1
}
syms=$("$nm" "$obj")
ctors=$(printf '%s\n' "$syms" | awk '$NF ~ /^_GLOBAL__sub_[ID]_/ { print $NF }')
[ -z "$ctors" ] || fail $ctors
secs=$("$objdump" -h "$obj" | awk '$2 ~ /^\.(ctors|dtors|init_array|fini_array)/ { print $2 }')
if [ -n "$secs" ]; then
	printf '%s\n' "$syms" | grep -qE ' U (__asan_register_globals|__tsan_init)$' || fail $secs
	case "$secs" in *ctors*|*dtors*) fail $secs ;; esac
	# The sanitizers' functions are the only code allowed where constructors live.
	others=$("$objdump" -t "$obj" | awk '/ F \.text\.(startup|exit)/ && $NF !~ /^_sub_[ID]_/ { print $NF }')
	[ -z "$others" ] || fail $others
fi
exit 0
