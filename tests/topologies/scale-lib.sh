#!/bin/bash
# Fabrics at scale, in a test host (sourced after tests/harness/guest-lib.sh):
# build a generated topology through configfs (weft-topo.py), let OpenSM
# sweep it with each routing engine in turn, and check it with the stock
# diags.  Used by tests/integration/scale_fabric.sh (a small fat tree) and
# make bench-scale (tests/topologies/bench-in-guest.sh: 1,024 HCAs).
#
# scale_run LABEL "GENERATOR ARGS" "ENGINE..." [PAIRS]: prints
#   SCALE-BUILD <label> hcas=.. switches=.. cables=.. build_s=.. hca_kib=.. ...
#   SCALE-SWEEP <label> <engine> up_s=<s to SUBNET UP> active_s=<s to every
#       HCA port ACTIVE> nodes=<ibnetdiscover> tracert=<ok>/<pairs> errors=<clean|N>
#       subs_s=<s to 2 InformInfo subscriptions per HCA port, WEFT_SCALE_SUBS only>
#   SCALE-TEARDOWN <label> teardown_s=.. cables_s=.. hcas_s=.. switches_s=..
# and returns non-zero (saying why) if any check fails: a node missing,
# a port not ACTIVE, a umad device missing, the topology file short, the
# engine not the one asked for, ibtracert failing, ibqueryerrors unclean.
# Only the management stack is loaded (no IPoIB, CM, uverbs): the figures
# are the fabric's and the SM's.

scale_topo=$WEFT_REPO/tests/topologies/weft-topo.py
scale_modules="weft_rt weft_verbs weft_mad weft_hca weft_umad"

# libibumad (rdma-core 44) opens only umad0..umad63 (UMAD_MAX_PORTS in
# umad.h: dev_to_umad_id() looks no further), and with no -C/-P takes the
# first CA with an ACTIVE port in readdir order, which on a fabric of
# hundreds of HCAs is most likely numbered beyond that: as on a host with
# that many real ports, the diags are told the port (weft0 is umad0).
scale_diag=(-C weft0 -P 1)

scale_bad() { echo "scale: $*"; scale_fail=1; }

# The management stack only, with an empty fabric.
scale_load() {
	local m name
	weft_configfs || return 1
	for m in $(weft_modules); do
		name=$(basename "$m" .ko)
		case " $scale_modules " in *" $name "*) ;; *) continue ;; esac
		if [ "$name" = weft_hca ]; then
			# Switches in the sysfs class: their node GUIDs for OpenSM's root file.
			insmod "$WEFT_MODDIR/$m" hcas=0 switch_sysfs=1 || return 1
		else
			insmod "$WEFT_MODDIR/$m" || return 1
		fi
	done
}
scale_unload() {
	local m
	for m in $(weft_modules | tac); do
		m=$(basename "$m" .ko)
		[ -d "/sys/module/$m" ] && { rmmod "$m" || return 1; }
	done
	return 0
}

# HCA devices (weftN) whose port 1 is not ACTIVE; "" when all are.
scale_not_active() {
	python3 - <<'EOF'
import os
base = "/sys/class/infiniband"
for d in sorted(os.listdir(base)):
    if d.startswith("weftsw"):
        continue
    with open(f"{base}/{d}/ports/1/state") as f:
        if "ACTIVE" not in f.read():
            print(d)
EOF
}

# scale_wait_active TIMEOUT_S: every HCA port ACTIVE within the bound.
scale_wait_active() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		[ -z "$(scale_not_active | head -1)" ] && return 0
		sleep 0.5
	done
	return 1
}

# scale_pairs N: N pairs of distinct HCA port LIDs, "a b" a line.
scale_pairs() {
	python3 - "$1" <<'EOF'
import os, random, sys
base = "/sys/class/infiniband"
lids = []
for d in sorted(os.listdir(base)):
    if not d.startswith("weftsw"):
        with open(f"{base}/{d}/ports/1/lid") as f:
            lids.append(int(f.read(), 16))
rng = random.Random(27)
for _ in range(int(sys.argv[1]) if len(lids) > 1 else 0):
    a, b = rng.sample(lids, 2)
    print(a, b)
EOF
}

# ms since the epoch.
scale_now() { date +%s%3N; }

# scale_sweep LABEL ENGINE NODES PAIRS: one OpenSM run with ENGINE; a fat
# tree's roots (its spines or cores) given to updn and ftree: updn's own
# guess takes the aggregation switches of a 3-level tree with many pods
# for roots too (most CAs at their largest distance), and leaves dead ends.
scale_sweep() {
	local label=$1 engine=$2 nodes=$3 pairs=$4 t0 up='' act='' n ok=0 tried=0 a b errs out
	rm -f /tmp/opensm.log
	# OpenSM buffers its log file: without a flush per line "SUBNET UP"
	# may sit in the buffer for good.
	echo "force_log_flush TRUE" >/tmp/opensm-scale.conf
	t0=$(scale_now)
	# -s 0: no periodic sweeps, so the figures are the first sweep's.
	local roots=()
	case $engine in updn | ftree) [ -s /tmp/topo-roots.txt ] && roots=(-a /tmp/topo-roots.txt) ;; esac
	opensm -F /tmp/opensm-scale.conf -g "$(ibstat -p weft0 | head -1)" -f /tmp/opensm.log \
		-s 0 -R "$engine" "${roots[@]}" >/tmp/opensm.out 2>&1 &
	weft_sm_pid=$!
	for _ in $(seq 1 1500); do
		grep -q "SUBNET UP" /tmp/opensm.log 2>/dev/null && { up=$(( $(scale_now) - t0 )); break; }
		kill -0 $weft_sm_pid 2>/dev/null || break
		sleep 0.2
	done
	[ -n "$up" ] || scale_bad "$label/$engine: no SUBNET UP: $(tail -5 /tmp/opensm.out /tmp/opensm.log)"
	if scale_wait_active 300; then
		act=$(( $(scale_now) - t0 ))
	else
		scale_bad "$label/$engine: ports not ACTIVE: $(scale_not_active | head -5 | tr '\n' ' ')"
	fi
	if [ -n "${WEFT_SCALE_SUBS:-}" ]; then scale_subscriptions "$label/$engine" "$t0"; fi
	# OpenSM falls back to minhop when an engine refuses the fabric.
	grep -q "$engine tables configured on all switches" /tmp/opensm.log ||
		scale_bad "$label/$engine: engine not used: $(grep "tables configured\|routing engine" /tmp/opensm.log | head -3)"
	n=$(timeout 600 ibnetdiscover "${scale_diag[@]}" 2>/dev/null | grep -cE '^(Switch|Ca)[[:space:]]')
	[ "$n" = "$nodes" ] || scale_bad "$label/$engine: ibnetdiscover sees $n nodes, want $nodes"
	# ibtracert between sampled pairs of HCA LIDs (a fixed seed: the same pairs each run).
	while read -r a b; do
		[ -n "$b" ] || continue
		tried=$((tried + 1))
		if out=$(timeout 60 ibtracert "${scale_diag[@]}" "$a" "$b" 2>&1) && grep -q "^To ca" <<<"$out"; then
			ok=$((ok + 1))
		else
			scale_bad "$label/$engine: ibtracert $a $b: $(tail -2 <<<"$out")"
		fi
	done <<<"$(scale_pairs "$pairs")"
	out=$(timeout 300 ibqueryerrors "${scale_diag[@]}" 2>&1)
	if grep -q "## Summary: $nodes nodes checked, 0 bad nodes found" <<<"$out" &&
		! grep -q "query failed\|PMA query failures" <<<"$out"; then
		errs=clean
	else
		errs=$(sed -n 's/^## Summary: .*, \([0-9]*\) bad nodes found/\1/p' <<<"$out")
		scale_bad "$label/$engine: ibqueryerrors: $(grep "Summary\|ports checked\|failed" <<<"$out" | head -4)"
		grep -v "^#\|^$" <<<"$out" | head -20
	fi
	weft_sm_stop
	if [ "$scale_fail" != 0 ]; then
		echo "--- $label/$engine: OpenSM's errors and warnings (first 20)"
		grep -E " ERR | WRN " /tmp/opensm.log | head -20
	fi
	echo "SCALE-SWEEP $label $engine up_s=$(scale_s "$up") active_s=$(scale_s "$act") nodes=$n tracert=$ok/$tried errors=${errs:-?} subs_s=$(scale_s "$scale_subs")"
}
# scale_subscriptions WHAT T0: with WEFT_SCALE_SUBS (make bench-scale), the
# subscription burst after a sweep: every HCA port's SA client subscribes to
# traps 64 and 65 (mad.md), so OpenSM's InformInfo table reaches two records
# per HCA port; scale_subs is the ms from T0 (OpenSM's start) until it does.
scale_subs=''
scale_subscriptions() {
	local want n=0 _
	want=$(( 2 * $(compgen -G '/sys/class/infiniband/weft[0-9]*/ports/*' | wc -l) ))
	scale_subs=''
	for _ in $(seq 1 300); do
		n=$(timeout 60 saquery "${scale_diag[@]}" -I 2>/dev/null | grep -c SubscriberGID)
		[ "$n" -ge "$want" ] && { scale_subs=$(( $(scale_now) - $2 )); return 0; }
		sleep 1
	done
	scale_bad "$1: OpenSM holds $n InformInfo subscriptions, want $want"
}
scale_s() { [ -n "$1" ] && printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)) || echo -; }

scale_run() {
	local label=$1 gen=$2 engines=$3 pairs=${4:-8} file=/tmp/topo-$1.txt counts h s c want e line
	scale_fail=0
	# shellcheck disable=SC2086 # GENERATOR ARGS are words
	python3 "$scale_topo" $gen >"$file" || { scale_bad "$label: generator failed"; return 1; }
	counts=$(python3 "$scale_topo" count "$file")
	h=${counts#*hcas=} s=${counts#*switches=}
	h=${h%% *} s=${s%% *}
	# A new subnet: OpenSM's LID cache of the last one would keep that
	# one's LIDs reserved and push these above them.
	rm -f /var/cache/opensm/guid2lid
	scale_load || { scale_bad "$label: loading the stack failed"; return 1; }
	rm -f /tmp/topo-roots.txt
	line=$(python3 "$scale_topo" build "$file" /tmp/topo-roots.txt) || scale_bad "$label: build failed"
	echo "SCALE-BUILD $label ${line#TOPO }"
	# Every HCA port has its umad device (in-tree ib_umad: up to 8192).
	c=$(find /sys/class/infiniband_mad/ -maxdepth 1 -name 'umad*' | wc -l)
	[ "$c" = "$h" ] || scale_bad "$label: $c umad devices, want $h"
	# The topology file lists every external port (one line each).
	want=$(awk '$1 == "switch" { n += $3 } $1 == "hca" { n += ($3 ? $3 : 1) } END { print n }' "$file")
	c=$(wc -l </sys/kernel/config/weft/topology)
	[ "$c" = "$want" ] || scale_bad "$label: topology has $c lines, want $want"
	for e in $engines; do
		scale_sweep "$label" "$e" $((h + s)) "$pairs"
	done
	line=$(python3 "$scale_topo" teardown)
	echo "SCALE-TEARDOWN $label ${line#TOPO teardown }"
	# Nor should the next subnet inherit this one's LIDs (the default
	# subnet's nodes have the same GUIDs as this fabric's first ones).
	rm -f /var/cache/opensm/guid2lid
	scale_unload || scale_bad "$label: unload failed"
	return $scale_fail
}
