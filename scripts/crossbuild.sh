#!/usr/bin/env bash
# crossbuild.sh checks that skillgate still compiles for the systems its users
# run it on, though its tests run on Linux only (CONTRIBUTING.md, Platforms):
# `go vet` (which compiles the tests too) of the root module, the SDK module
# and the example executor for macOS and Windows, and `go build` of the same
# for Linux on arm64.
#
#   ./scripts/crossbuild.sh                             the targets below
#   ./scripts/crossbuild.sh darwin/amd64 windows/arm64  vet these GOOS/GOARCH pairs instead
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# One architecture per system is enough: no file of ours is specific to an
# architecture on macOS or Windows. Each pair costs a compile of every
# dependency when the build cache is cold (CONTRIBUTING.md, Platforms).
VET=(darwin/arm64 windows/amd64)
# The Linux files that are specific to an architecture (skills/stat_*.go).
BUILD=(linux/arm64)
if (($# > 0)); then
	VET=("$@")
	BUILD=()
fi
MODULES=(. plugins/sdk examples/executor-hello)

say() { printf 'crossbuild: %s\n' "$*" >&2; }

check() { # check vet|build GOOS/GOARCH
	local what=$1 goos=${2%/*} goarch=${2#*/} start=$SECONDS
	for m in "${MODULES[@]}"; do
		[[ -f $m/go.mod ]] || continue
		if ! (cd "$m" && GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go "$what" ./...); then
			say "FAIL: go $what ./... in $m for GOOS=$goos GOARCH=$goarch; put the platform-specific part in a _unix.go / _linux.go / _windows.go file (CONTRIBUTING.md, Platforms)"
			exit 1
		fi
	done
	say "go $what $2: ok in $((SECONDS - start)) s"
}

for t in "${VET[@]}"; do check vet "$t"; done
for t in "${BUILD[@]}"; do check build "$t"; done
