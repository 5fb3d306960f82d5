"""word_count: the simple protocol in Python.

The arguments arrive as one JSON object on stdin; the JSON object printed on
stdout becomes the tool's structured result. Lines on stderr reach the
client as log messages.
"""
import json
import sys

args = json.load(sys.stdin)
text = args.get("text", "")
print(f"counting {len(text)} characters", file=sys.stderr)
print(json.dumps({
    "words": len(text.split()),
    "lines": len(text.splitlines()),
    "chars": len(text),
}))
