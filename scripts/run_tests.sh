#!/usr/bin/env bash
# The test command (README: `make test`): a private Elasticsearch 9 node on its own port and
# data folder, the whole suite against it; then the integration tests of the shared layer and
# the jobs again against an Elasticsearch 8.19 node (both majors are supported); each node
# stopped whatever the outcome. Arguments are passed to the first pytest run only.
# BOOKDUP_TEST_ES8=0 skips the 8.19 pass (e.g. while iterating on one test).
set -uo pipefail
cd "$(dirname "$0")/.."
port="${BOOKDUP_TEST_ES_PORT:-9260}"
data="${BOOKDUP_TEST_ES_DATA:-${TMPDIR:-/tmp}/bookdup-test-es-$port}"
es8_version="${BOOKDUP_TEST_ES8_VERSION:-8.19.21}"
es8_port=$((port + 20))

# Each pass: a node on one port (transport on port + 100), pytest against it, the node down.
run_pass() {  # version port data pytest-args...
  local version=$1 node_port=$2 node_data=$3
  shift 3
  local env=(BOOKDUP_ES_PORT="$node_port" BOOKDUP_ES_DATA="$node_data"
             ELASTICSEARCH_URL="http://127.0.0.1:$node_port")
  env "${env[@]}" bookdup es up ${version:+--version "$version"} || return 1
  env "${env[@]}" python -m pytest -q -p no:cacheprovider "$@"
  local status=$?
  env "${env[@]}" bookdup es down || true
  return $status
}

run_pass "" "$port" "$data" "$@"
status=$?
if [ "${BOOKDUP_TEST_ES8:-1}" != 0 ] && [ $# -eq 0 ]; then
  echo "--- the same integration tests against Elasticsearch $es8_version ---"
  run_pass "$es8_version" "$es8_port" "${data}-es8" \
    tests/store tests/indexer/test_dedup_job.py tests/indexer/test_dedup_stages.py \
    tests/indexer/test_index_job.py tests/indexer/test_remove_job.py tests/cli/test_cli_jobs.py \
    tests/query
  es8_status=$?
  [ $status -eq 0 ] && status=$es8_status
fi
exit $status
