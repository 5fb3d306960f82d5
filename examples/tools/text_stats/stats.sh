#!/usr/bin/env bash
# text_stats: the simple protocol in Bash. The arguments arrive as JSON on
# stdin; "args: [{top}]" in tool.yaml also passes the "top" argument as $1
# (literally: no shell ever sees it). Runs in the sandbox: no network, a
# read-only system and a private /tmp.
set -euo pipefail
top=${1:-5}
[[ $top =~ ^[0-9]+$ ]] || { echo "top must be a number" >&2; exit 2; }
# Pull "text" out of the JSON with python-free tools: jq if present, else node.
input=$(cat)
if command -v jq >/dev/null; then
	text=$(jq -r .text <<<"$input")
else
	text=$(node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).text))' <<<"$input")
fi
echo "analysing ${#text} characters" >&2
tr -cs '[:alnum:]' '\n' <<<"$text" | tr '[:upper:]' '[:lower:]' | grep -v '^$' |
	sort | uniq -c | sort -k1,1nr -k2 | head -n "$top" |
	awk '{printf "%s %s\n", $1, $2}'
