#!/usr/bin/env bash
# The test command (README: `make test`): a private Elasticsearch node on its own port and
# data folder, the whole suite against it, the node stopped whatever the outcome.
set -uo pipefail
cd "$(dirname "$0")/.."
export BOOKDUP_ES_PORT="${BOOKDUP_TEST_ES_PORT:-9260}"
export BOOKDUP_ES_DATA="${BOOKDUP_TEST_ES_DATA:-${TMPDIR:-/tmp}/bookdup-test-es-$BOOKDUP_ES_PORT}"
export ELASTICSEARCH_URL="http://127.0.0.1:$BOOKDUP_ES_PORT"
bookdup es up || exit 1
python -m pytest -q -p no:cacheprovider "$@"
status=$?
bookdup es down || true
exit $status
