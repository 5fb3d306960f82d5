"""counter: the jsonrpc protocol in Python, persistent mode.

One warm process serves every call: it reads JSON-RPC messages from stdin,
one per line, and writes its own to stdout. Counters live in the tool's
state (state/get, state/set), which the gateway keeps in the tool's state
directory, so they survive restarts.
"""
import itertools
import json
import sys

ids = itertools.count(1)


def send(msg):
    msg["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def request(method, params):
    """Send a request to the gateway and wait for its answer."""
    rid = f"c{next(ids)}"
    send({"id": rid, "method": method, "params": params})
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("id") == rid:
            if "error" in msg:
                raise RuntimeError(msg["error"]["message"])
            return msg["result"]
    raise EOFError("the gateway closed stdin")


def handle(params):
    args = params["arguments"]
    key = "counter:" + args["name"]
    value = (request("state/get", {"key": key})["value"] or 0) + int(args.get("by", 1))
    request("state/set", {"key": key, "value": value})
    send({"method": "notifications/message",
          "params": {"level": "debug", "data": f"{args['name']} is now {value}"}})
    result = {"name": args["name"], "value": value}
    return {"content": [{"type": "text", "text": json.dumps(result)}], "structuredContent": result}


for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") != "tools/call":
        continue
    try:
        send({"id": msg["id"], "result": handle(msg["params"])})
    except Exception as exc:  # a tool error, not a protocol error
        send({"id": msg["id"], "result": {"content": [{"type": "text", "text": str(exc)}], "isError": True}})
