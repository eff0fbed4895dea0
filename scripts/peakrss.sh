#!/bin/sh
# peakrss.sh [--limit-mb N] [--every S] -- COMMAND...: runs COMMAND, samples
# its VmRSS and VmHWM (the kernel's peak) from /proc/PID/status every S
# seconds (default 1), and prints, on stderr when it ends, the largest
# sampled RSS, the last VmHWM seen and the wall time. With --limit-mb it is
# also a watchdog: the command is killed (and this exits 137) when its RSS
# passes N MiB, before a machine without swap runs out.
set -u
limit=0
every=1
while [ $# -gt 0 ]; do
	case $1 in
	--limit-mb) limit=$2; shift 2 ;;
	--every) every=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: peakrss.sh [--limit-mb N] [--every S] -- COMMAND..." >&2; exit 2; }
start=$(date +%s)
"$@" &
pid=$!
peak=0
hwm=0
killed=0
while kill -0 "$pid" 2>/dev/null; do
	if [ -r /proc/$pid/status ]; then
		rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null)
		h=$(awk '/^VmHWM:/ {print $2}' /proc/$pid/status 2>/dev/null)
		[ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
		[ -n "$h" ] && hwm=$h
		if [ "$limit" -gt 0 ] && [ -n "$rss" ] && [ "$rss" -gt $((limit * 1024)) ]; then
			echo "peakrss: RSS $((rss / 1024)) MiB passed --limit-mb $limit: killing $pid" >&2
			kill -9 "$pid"
			killed=1
		fi
	fi
	sleep "$every"
done
wait "$pid"
rc=$?
[ $killed -eq 1 ] && rc=137
echo "peakrss: peak sampled RSS $((peak / 1024)) MiB, VmHWM $((hwm / 1024)) MiB, $(($(date +%s) - start)) s, exit $rc" >&2
exit $rc
