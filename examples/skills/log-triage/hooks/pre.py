"""Refuse logs outside the allowed folders before errors.py runs."""
import json
import os
import sys

ALLOWED = ["/var/log", "/tmp"]

event = json.load(sys.stdin)
args = event.get("args") or []
if args:
    path = os.path.realpath(args[0])
    if not any(path == d or path.startswith(d.rstrip("/") + "/") for d in ALLOWED):
        print(json.dumps({"decision": "deny",
                          "reason": f"{args[0]} is outside the log folders this skill may read (/var/log, /tmp)"}))
        sys.exit(0)
print("{}")
