# Sourced by the block benchmarks (srp-in-guest.sh, iser-in-guest.sh): the
# fio jobs every disk runs, the queue settings that make disks comparable,
# the LIO export of the ramdisk, and (on the host) the table.  A benchmark,
# not a test: it asserts nothing.
# shellcheck shell=bash

# The jobs, "name rw bs iodepth": 4 KiB random at queue depth 1 and 32,
# 1 MiB sequential at 8.
blk_jobs="randread-qd1 randread 4k 1
randread-qd32 randread 4k 32
randwrite-qd1 randwrite 4k 1
randwrite-qd32 randwrite 4k 32
seqread-1m read 1m 8
seqwrite-1m write 1m 8"

# blk_queue DEV: the same block-layer settings on every disk (test-hosts.md:
# an SRP disk came with max_sectors_kb 512 and no scheduler, iSCSI/iSER
# disks with 124 and mq-deadline): no scheduler, 512 KiB requests at most.
blk_queue() {
	local q=/sys/block/${1#/dev/}/queue
	echo none >"$q/scheduler" 2>/dev/null
	echo 512 >"$q/max_sectors_kb" 2>/dev/null
	echo "BLK-QUEUE $1 scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' "$q/scheduler") max_sectors_kb=$(cat "$q/max_sectors_kb")" \
		"nr_requests=$(cat "$q/nr_requests") queue_depth=$(cat "/sys/block/${1#/dev/}/device/queue_depth" 2>/dev/null || echo -)"
}

# blk_fio STACK DEV [SECONDS]: every job on DEV (libaio, direct, one job,
# time-based over the first 64 MiB); prints "BLK <stack> <job> <IOPS> <MiB/s>".
blk_fio() {
	local stack=$1 dev=$2 secs=${3:-${WEFT_BENCH_SECS:-6}} name rw bs qd
	blk_queue "$dev"
	while read -r name rw bs qd; do
		fio --name="$name" --filename="$dev" --rw="$rw" --bs="$bs" --iodepth="$qd" --ioengine=libaio \
			--direct=1 --size=64M --time_based --runtime="$secs" --ramp_time=1 --output-format=json \
			>/tmp/blk-"$stack"-"$name".json 2>/tmp/blk-"$stack"-"$name".err
		python3 - "$stack" "$name" /tmp/blk-"$stack"-"$name".json <<'PY'
import json, sys
stack, name, path = sys.argv[1:]
try:
    job = json.load(open(path))["jobs"][0]
    side = job["read"] if job["read"]["io_bytes"] else job["write"]
    print("BLK %s %s %.0f %.1f" % (stack, name, side["iops"], side["bw_bytes"] / 1048576))
except Exception as e:  # a failed run shows as a dash in the table
    print("BLK %s %s - - (%s)" % (stack, name, e))
PY
	done <<<"$blk_jobs"
}

# lio_brd TPORT_DIR ACL (in the guest): /dev/ram0 as a LIO block
# backstore, LUN 0 of the target port's TPG 1, mapped for ACL; the TPG
# enabled.
lio_brd() {
	local b=/sys/kernel/config/target/core/iblock_0/ram0 tp=$1/tpgt_1
	mkdir -p $b && echo udev_path=/dev/ram0 >$b/control && echo 1 >$b/enable || return 1
	mkdir -p "$tp/lun/lun_0" && ln -s $b "$tp/lun/lun_0/ram0" || return 1
	mkdir -p "$tp/acls/$2/lun_0" && ln -s $tp/lun/lun_0 "$tp/acls/$2/lun_0/ram0" || return 1
	echo 1 >"$tp/enable"
}

# blk_table LOG STACK...: the table of the BLK lines in LOG, one column pair
# (IOPS, MiB/s) per stack, then each stack's ratio to the first and the
# second's to the last (e.g. brd weft rxe: weft/brd, weft/rxe).
blk_table() {
	local log=$1
	shift
	tr -d '\r' <"$log" | sed -n 's/.*\(BLK \)/\1/p' | awk -v stacks="$*" '
		$1 == "BLK" { iops[$2 "|" $3] = $4; mib[$2 "|" $3] = $5; if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
		function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
		END {
			k = split(stacks, s, " ")
			printf "%-15s", "job"
			for (j = 1; j <= k; j++) printf " %12s %9s", s[j] " IOPS", "MiB/s"
			printf " %10s %10s\n", s[2] "/" s[1], s[2] "/" s[k]
			for (i = 1; i <= n; i++) {
				printf "%-15s", order[i]
				for (j = 1; j <= k; j++) printf " %12s %9s", iops[s[j] "|" order[i]], mib[s[j] "|" order[i]]
				printf " %10s %10s\n", ratio(iops[s[2] "|" order[i]], iops[s[1] "|" order[i]]),
					ratio(iops[s[2] "|" order[i]], iops[s[k] "|" order[i]])
			}
		}'
}

# blk_bench NAME STACK... (on the host, from the repository): NAME's job
# (tests/bench/NAME-in-guest.sh) in one stock-kernel guest, console log
# build/logs/bench-NAME.log; its notes, then the table of STACKs.
blk_bench() {
	local name=$1 log=build/logs/bench-$1.log
	shift
	mkdir -p build/logs
	tests/harness/vm-run.sh --kernel stock --script "tests/bench/$name-in-guest.sh" --log "$log" \
		--timeout 2400 --mem 3072 --name "bench-$name" >/dev/null || true
	tr -d '\r' <"$log" | grep -E "^(BLK-QUEUE|ISCSI-PARAMS|bench-$name:)" || true
	blk_table "$log" "$@"
}
