#!/usr/bin/env bash
# The test targets (issue 17): `make test` runs scripts/gotest.sh short,
# `make test-long` runs scripts/gotest.sh long; CI (.ci/run) runs both, so
# every test runs there.
#
#   short  go test -short over every package: a test that skips itself
#          under testing.Short() is a long test and waits for `long`.
#   long   only the long tests: every Test function whose body calls
#          testing.Short() (found in the *_test.go files), without -short,
#          but the fault probes (TestFault*), which `make test-faults` runs
#          before it.
#
# Either way the output is kept in out/test/<mode>.log, and the slowest
# packages and the total time are printed at the end. GO and PKGS come from
# the Makefile; GOTEST_FLAGS adds flags (say -v, or -run X for `short`).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:?usage: scripts/gotest.sh short|long}
GO=${GO:-go}
PKGS=${PKGS:-./...}
read -r -a extra <<<"${GOTEST_FLAGS:-}"
mkdir -p out/test
log=out/test/$mode.log

# longTests prints "-run" patterns and package directories of the long
# tests: the Test functions whose body calls testing.Short().
longTests() {
	git ls-files -co --exclude-standard '*_test.go' | xargs awk '
		FNR == 1 { fn = "" }
		/^func / { fn = ""; if (match($0, /^func Test[A-Za-z0-9_]*\(/)) fn = substr($0, 6, RLENGTH - 6) }
		/testing\.Short\(\)/ && fn != "" && fn !~ /^TestFault/ { print FILENAME "\t" fn }
	' | sort -u
}

case $mode in
short)
	args=(-short -count=1 -timeout 30m "${extra[@]}" $PKGS) ;;
long)
	found=$(longTests)
	if [ -z "$found" ]; then
		echo "gotest: no long tests (no Test function calls testing.Short())"
		exit 0
	fi
	names=$(cut -f2 <<<"$found" | sort -u | paste -sd'|' -)
	dirs=$(cut -f1 <<<"$found" | xargs -n1 dirname | sort -u | sed 's|^|./|')
	echo "gotest: long tests: $(cut -f2 <<<"$found" | sort -u | paste -sd' ' -)"
	# shellcheck disable=SC2086
	args=(-count=1 -timeout 60m -run "^($names)\$" "${extra[@]}" $dirs) ;;
*)
	echo "usage: scripts/gotest.sh short|long" >&2
	exit 2 ;;
esac

start=$(date +%s)
set +e
"$GO" test "${args[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
end=$(date +%s)

echo
echo "slowest packages ($mode):"
awk -F'\t' '($1 ~ /^ok/ || $1 ~ /^FAIL/) && $3 ~ /s$/ { t = $3; sub(/s$/, "", t); printf "  %8.1fs  %s\n", t, $2 }' "$log" |
	sort -rn | head -n 10
echo "make test ($mode): $((end - start))s in all, go test exit status $rc (log: $log)"
exit "$rc"
