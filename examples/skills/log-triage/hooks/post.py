"""Redact secrets (bearer tokens, passwords, keys) from a script's result."""
import json
import re
import sys

SECRET = re.compile(r"(?i)(bearer\s+|password=|passwd=|api[_-]?key=|token=)[^\s\"',;]+")

event = json.load(sys.stdin)
result = json.dumps(event.get("result") or {})
clean = SECRET.sub(lambda m: m.group(1) + "[redacted]", result)
if clean != result:
    print(json.dumps({"result": json.loads(clean)}))
else:
    print("{}")
