#!/usr/bin/env bash
# conformance-report.sh runs the MCP conformance suite (active server
# scenarios) RUNS times against mcp-go's conformance server, bare and behind
# skillgate (no prefix), and prints docs/CONFORMANCE.md's tables as markdown.
#
#   ./scripts/conformance-report.sh [RUNS]     (default 5)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=${1:-5}
bash scripts/test-deps.sh
NPM=$PWD/test/npm/node_modules
NODE22=$NPM/node/bin/node
SUITE=$NPM/.bin/conformance
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 200); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "no answer from $1" >&2; exit 1; }

go build -o "$work/skillgate" ./cmd/skillgate
up=$(free_port)
setsid env CONFORMANCE_ADDR=127.0.0.1:$up .cache/bin/conformance-server >"$work/upstream.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$up/health"
gw=$(free_port)
cat >"$work/skillgate.yaml" <<YAML
listen: {http: 127.0.0.1:$gw}
servers:
  conformance: {url: "http://127.0.0.1:$up/mcp", namespace: ""}
YAML
setsid "$work/skillgate" run -c "$work/skillgate.yaml" >"$work/gateway.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$gw/readyz"

for target in bare gateway; do
	url=http://127.0.0.1:$up/mcp
	[[ $target == gateway ]] && url=http://127.0.0.1:$gw/mcp
	for i in $(seq "$RUNS"); do
		"$NODE22" "$SUITE" server --url "$url" --suite active -o "$work/$target/$i" >/dev/null 2>&1 || true
	done
done

python3 - "$work" "$RUNS" <<'PY'
import json, os, re, sys
work, runs = sys.argv[1], int(sys.argv[2])
def load(target):
    per = {}
    for i in range(1, runs + 1):
        d = os.path.join(work, target, str(i))
        for name in sorted(os.listdir(d)):
            m = re.match(r'^server-(.+)-\d{4}-\d{2}-\d{2}T', name)
            if not m: continue
            checks = json.load(open(os.path.join(d, name, 'checks.json')))
            ok = all(c.get('status') != 'FAILURE' for c in checks)
            s = per.setdefault(m.group(1), [0, sum(c.get('status') in ('SUCCESS', 'FAILURE') for c in checks)])
            s[0] += ok
    return per
bare, gw = load('bare'), load('gateway')
print(f"| scenario | checks | bare mcp-go: runs passed | through skillgate: runs passed |")
print(f"|---|---|---|---|")
tot_b = tot_g = 0
for sc in sorted(bare):
    b, n = bare[sc]; g = gw.get(sc, [0, n])[0]
    tot_b += b == runs; tot_g += g == runs
    print(f"| {sc} | {n} | {b}/{runs} | {g}/{runs} |")
checks = sum(v[1] for v in bare.values())
print(f"\n{len(bare)} scenarios, {checks} checks; every run passed: bare {tot_b}/{len(bare)} scenarios, through skillgate {tot_g}/{len(bare)}.")
PY
