#!/usr/bin/env bash
# Measures extraction at scale: generates 1 and 10 million Reddit comments
# (zstd), extracts each with default flags under /usr/bin/time, and prints
# wall time, peak RSS and the ratio of the peaks. Needs about 2 GB of disk
# for the inputs and 6 GB for the outputs and spill files.
#   scripts/scale.sh [DIR]      (default: a temporary directory, removed)
set -euo pipefail
cd "$(dirname "$0")/.."
make build >/dev/null
dir=${1:-$(mktemp -d)}
[ -n "${1:-}" ] || trap 'rm -rf "$dir"' EXIT
declare -A rss
for n in 1000000 10000000; do
  in="$dir/RC_$n.zst"
  [ -f "$in" ] || ./parastream gen reddit --rows "$n" --out "$in" --compress zstd 2>/dev/null
  /usr/bin/time -f "%e %M" -o "$dir/time-$n" ./parastream extract --quiet --corpus reddit --input "$in" --out "$dir/out-$n" >/dev/null
  read -r wall kb < "$dir/time-$n"
  rss[$n]=$kb
  printf '%9d comments: %7.1f s, peak RSS %6.0f MB\n' "$n" "$wall" "$(echo "$kb/1024" | bc -l)"
  rm -rf "$dir/out-$n"
done
printf 'peak RSS at 10M / at 1M = %.2f\n' "$(echo "${rss[10000000]}/${rss[1000000]}" | bc -l)"
