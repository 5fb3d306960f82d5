"""Print the first error lines of a log with context, as JSON."""
import argparse
import json
import re

PATTERN = re.compile(r"\b(ERROR|FATAL|CRITICAL|Traceback|panic:|Exception)\b")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--context", type=int, default=3)
    ap.add_argument("--max", type=int, default=3)
    a = ap.parse_args()
    with open(a.path, errors="replace") as f:
        lines = f.read().splitlines()
    found = []
    for i, line in enumerate(lines):
        if PATTERN.search(line):
            lo, hi = max(0, i - a.context), min(len(lines), i + a.context + 1)
            found.append({"line": i + 1, "text": line, "context": lines[lo:hi]})
            if len(found) >= a.max:
                break
    print(json.dumps({"path": a.path, "lines": len(lines), "errors": found}))


if __name__ == "__main__":
    main()
