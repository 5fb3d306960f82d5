#!/usr/bin/env bash
# List the commits of a range as TSV: short hash, author, subject.
set -euo pipefail
repo=${1:?usage: commits.sh REPO FROM [TO]}
from=${2:?usage: commits.sh REPO FROM [TO]}
to=${3:-HEAD}
git -C "$repo" log --no-merges --format='%h%x09%an%x09%s' "$from..$to"
