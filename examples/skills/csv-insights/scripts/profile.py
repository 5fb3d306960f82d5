"""Profile a CSV file: column types, empty cells, ranges and top values."""
import argparse
import collections
import csv
import datetime
import json
import os
import sys


def kind(value):
    for k, conv in (("integer", int), ("number", float)):
        try:
            conv(value)
            return k
        except ValueError:
            pass
    for fmt in ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%d/%m/%Y"):
        try:
            datetime.datetime.strptime(value, fmt)
            return "date"
        except ValueError:
            pass
    return "text"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--delimiter", default=",")
    ap.add_argument("--top", type=int, default=3)
    a = ap.parse_args()
    path = a.path if os.path.isabs(a.path) else os.path.join(os.getcwd(), a.path)
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f, delimiter=a.delimiter)
        cols = {name: {"kinds": collections.Counter(), "empty": 0, "values": collections.Counter(),
                       "range": {}} for name in reader.fieldnames or []}
        rows = 0
        for row in reader:
            rows += 1
            for name, c in cols.items():
                v = (row.get(name) or "").strip()
                if not v:
                    c["empty"] += 1
                    continue
                k = kind(v)
                c["kinds"][k] += 1
                c["values"][v] += 1
                if k == "text":
                    continue
                group = "date" if k == "date" else "number"
                key = v if group == "date" else float(v)
                lo, hi = c["range"].get(group, (key, key))
                c["range"][group] = (min(lo, key), max(hi, key))
    budget = int(os.environ.get("SKILLGATE_OUTPUT_BUDGET", "0") or 0)
    top = a.top
    if budget and len(cols) * top * 40 > budget:
        top = max(1, budget // (len(cols) * 40 + 1))
        print(f"listing {top} top values per column to fit the budget", file=sys.stderr)
    out = {"file": os.path.basename(path), "rows": rows, "columns": {}}
    for name, c in cols.items():
        kinds = c["kinds"]
        main_kind = "integer" if set(kinds) == {"integer"} else kinds.most_common(1)[0][0] if kinds else "empty"
        if set(kinds) <= {"integer", "number"} and kinds:
            main_kind = "integer" if "number" not in kinds else "number"
        col = {"type": main_kind, "empty": c["empty"], "top": [v for v, _ in c["values"].most_common(top)]}
        if len(kinds) > 1 and not set(kinds) <= {"integer", "number"}:
            col["mixed"] = dict(kinds)
        group = "date" if main_kind == "date" else "number"
        if main_kind in ("integer", "number", "date") and group in c["range"]:
            col["min"], col["max"] = c["range"][group]
        out["columns"][name] = col
    print(json.dumps(out))


if __name__ == "__main__":
    main()
