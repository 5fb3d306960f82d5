#!/usr/bin/env bash
set -euo pipefail
limit=${1:-20}
[[ $limit =~ ^[0-9]+$ ]] || { echo "limit must be a number" >&2; exit 2; }
psql -X -A -F $'\t' -c "
  select relname as table, pg_size_pretty(pg_table_size(relid)) as table_size,
         pg_size_pretty(pg_indexes_size(relid)) as index_size,
         pg_size_pretty(pg_total_relation_size(relid)) as total
  from pg_catalog.pg_statio_user_tables
  order by pg_total_relation_size(relid) desc limit $limit"
