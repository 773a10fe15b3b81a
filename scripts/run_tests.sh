#!/usr/bin/env bash
# The test command (README: `make test`): a private Elasticsearch 9 node on its own port and
# data folder, the whole suite against it; then a compatibility subset (below) against an
# Elasticsearch 8.19 node (both majors are supported); each node stopped whatever the outcome.
# Arguments are passed to the first pytest run only.
# BOOKDUP_TEST_ES8=0 skips the 8.19 pass (e.g. while iterating on one test).
set -uo pipefail
cd "$(dirname "$0")/.."
port="${BOOKDUP_TEST_ES_PORT:-9260}"
data="${BOOKDUP_TEST_ES_DATA:-${TMPDIR:-/tmp}/bookdup-test-es-$port}"
es8_version="${BOOKDUP_TEST_ES8_VERSION:-8.19.21}"
es8_port=$((port + 20))
# pytest-xdist workers: the suite mostly waits (node starts, retry budgets, jobs in
# subprocesses), so more workers than the 2 cores pay; BOOKDUP_TEST_WORKERS=0 runs in-process.
# --dist loadgroup: a module (or an index-sharing package) per worker, the heaviest groups
# first; the groups, their order and the scheduler that keeps them are in tests/conftest.py
workers="${BOOKDUP_TEST_WORKERS:-3}"

# Each pass: a node on one port (transport on port + 100), pytest against it, the node down.
run_pass() {  # version port data pytest-args...
  local version=$1 node_port=$2 node_data=$3
  shift 3
  local env=(BOOKDUP_ES_PORT="$node_port" BOOKDUP_ES_DATA="$node_data"
             ELASTICSEARCH_URL="http://127.0.0.1:$node_port")
  env "${env[@]}" bookdup es up ${version:+--version "$version"} || return 1
  env "${env[@]}" python -m pytest -q -p no:cacheprovider -n "$workers" --dist loadgroup "$@"
  local status=$?
  env "${env[@]}" bookdup es down || true
  return $status
}

# The 8.19 pass: a compatibility subset that calls every Elasticsearch API the project uses —
# index creation, mappings, aliases and migrations (schema), bulk with partial updates and 429s
# (bulk), point in time + search_after (iterate), _msearch and terms queries (candidates), the
# lock document's create/get/delete (locks), one index job and one dedup job with the refresh
# pause and cluster write-back, status, search with collapse and editions (cli jobs), related,
# explain and match on real books (read api), a catalog index's cluster sync (sync).
ES8_SUBSET=(
  tests/store/test_schema.py tests/store/test_bulk.py tests/store/test_iterate.py
  tests/store/test_candidates.py tests/store/test_locks.py tests/store/test_search_primitives.py
  tests/cli/test_cli_jobs.py tests/query/test_read_api.py tests/query/test_sync.py
)

run_pass "" "$port" "$data" "$@"
status=$?
if [ "${BOOKDUP_TEST_ES8:-1}" != 0 ] && [ $# -eq 0 ]; then
  echo "--- the same integration tests against Elasticsearch $es8_version ---"
  run_pass "$es8_version" "$es8_port" "${data}-es8" \
    "${ES8_SUBSET[@]}"
  es8_status=$?
  [ $status -eq 0 ] && status=$es8_status
fi
exit $status
