#!/usr/bin/env bash
# test.sh is skillgate's test command: it installs the test dependencies
# (scripts/test-deps.sh), then vets and tests the root module and the plugin SDK
# module (plugins/sdk) with the race detector, checks that the SDK does not
# import the gateway, and that everything still builds for macOS and Windows
# (scripts/crossbuild.sh).
#
#   ./scripts/test.sh                     everything (what CI runs)
#   ./scripts/test.sh -run TestX ./pkg/   only `go test` in the root module, with these arguments
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
MODULE=github.com/skillgate/skillgate
SDK=plugins/sdk
TEST_FLAGS=(-race -count=1 -timeout 20m)

say() { printf 'test: %s\n' "$*" >&2; }

start=$SECONDS
bash scripts/test-deps.sh
say "dependencies ready in $((SECONDS - start)) s"

# Read by internal/testenv.
export SKILLGATE_NPM_DIR=$ROOT/test/npm/node_modules
export SKILLGATE_CONFORMANCE_SERVER=$ROOT/.cache/bin/conformance-server
export SKILLGATE_NODE22=$SKILLGATE_NPM_DIR/node/bin/node

if (($# > 0)); then
	exec go test "${TEST_FLAGS[@]}" "$@"
fi

have_sdk=0
if [[ -f $SDK/go.mod ]]; then
	have_sdk=1
else
	say "no $SDK/go.mod yet: skipping the SDK module"
fi

say "go vet (root module)"
go vet ./...
say "go vet and go build for other systems (scripts/crossbuild.sh)"
./scripts/crossbuild.sh
if ((have_sdk)); then
	say "go vet ($SDK)"
	(cd "$SDK" && go vet ./...)

	say "checking that $SDK does not import the gateway"
	# Packages of the root module among the SDK's dependencies, tests included.
	leaks=$(cd "$SDK" && go list -deps -test \
		-f '{{with .Module}}{{if eq .Path "'"$MODULE"'"}}{{$.ImportPath}}{{end}}{{end}}' ./... | sort -u)
	if [[ -n $leaks ]]; then
		say "FAIL: $SDK must not depend on the gateway module; it imports:"
		sed 's/^/  /' <<<"$leaks" >&2
		exit 1
	fi

	say "go test ($SDK)"
	(cd "$SDK" && go test "${TEST_FLAGS[@]}" ./...)
fi
say "go test (examples/executor-hello, built on the SDK alone)"
(cd examples/executor-hello && go vet ./... && go test "${TEST_FLAGS[@]}" ./...)

say "go test (root module)"
go test "${TEST_FLAGS[@]}" ./...
