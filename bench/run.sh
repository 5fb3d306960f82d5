#!/usr/bin/env bash
# run.sh runs the benchmark harness behind docs/PERFORMANCE.md: it builds
# skillgate and the benchmark upstream into a temporary folder, measures
# the gateway against baselines taken in the same run (bounded in time,
# loopback only) and prints a markdown table. Flags go to skillbench:
#
#   bash bench/run.sh                                # print the table
#   bash bench/run.sh -write docs/PERFORMANCE.md     # and store it there
#   bash bench/run.sh -only list,call -d 3s          # a quicker subset
#   bash bench/run.sh -profile /tmp/prof             # plus CPU profiles
#   go run ./bench/cmd/skillbench -h                 # every flag
#
# It needs wrk (or hey): bash scripts/test-deps.sh --bench installs both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v wrk >/dev/null 2>&1 && ! command -v hey >/dev/null 2>&1; then
	echo "bench/run.sh: neither wrk nor hey is installed; run: bash scripts/test-deps.sh --bench" >&2
	exit 1
fi
exec go run ./bench/cmd/skillbench "$@"
