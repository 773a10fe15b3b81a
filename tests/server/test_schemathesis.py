"""Issue 30: the API against its own OpenAPI document, checked by schemathesis with every check
(its ``--checks all``), positive and negative inputs, over a real uvicorn server (the protocol
and limits ``bookdup serve`` runs) and a real node with six indexed books. No code of ours
checks the document against the server; this does. Bounded: a few examples per operation,
derandomized, so the module takes well under a minute and fails the same way twice."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import CHECKS, is_check_class
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from server.app import create_app
from server.protocol import GuardedH11Protocol
from tests.server.conftest import serving

#: Examples per operation and generation mode: enough to reach every parameter's edges (empty,
#: too long, wrong type, missing) in a bounded run; the issue's unbounded probe sent ~30,000.
EXAMPLES = 100


#: Refusals of schema-valid requests that are the API's design, each a constraint no OpenAPI
#: document can state: the rest of positive_data_acceptance stays on.
BY_DESIGN = (
    # the last page depends on the index's contents (README: 400 past the last page, issue 26)
    "is past the last page",
    # page x per_page over Elasticsearch's 10,000-hit window: a product of two parameters
    "page must be between",
    # a == b: JSON Schema cannot say that two parameters differ
    "are the same book",
    # a match needs 50 words, of a text or an uploaded file: JSON Schema counts no words
    "too short to match",
    "too little text to match",
    "empty file",
    # an uploaded file is any bytes to the document (format: binary); a reader must read it
    "binary file, not text",
    "the file could not be read",
)


def accepts_valid_data(ctx: Any, response: Any, case: Any) -> bool | None:
    """positive_data_acceptance, except for a 400 that names a BY_DESIGN refusal."""
    if response.status_code == 400 and any(reason in response.text for reason in BY_DESIGN):
        return None
    return positive_data_acceptance(ctx, response, case)


def all_checks() -> list[Any]:
    """Every response check schemathesis registers (what ``--checks all`` runs), with
    positive_data_acceptance narrowed by BY_DESIGN; the class checks are stateful-run checks,
    which need links between operations (this API has none)."""
    checks = [check for check in CHECKS.get_all() if not is_check_class(check)]
    assert positive_data_acceptance in checks
    return [accepts_valid_data if c is positive_data_acceptance else c for c in checks]


@pytest.fixture(scope="module")
def base_url(served) -> Iterator[str]:
    """``bookdup serve``'s app on a free loopback port, with its guarded HTTP protocol."""
    config = uvicorn.Config(
        create_app(served[1], max_body=1_000_000),
        host="127.0.0.1",
        port=0,
        log_level="critical",
        server_header=False,
        http=GuardedH11Protocol.configured(10.0, 64 * 1024),
        h11_max_incomplete_event_size=64 * 1024,
        lifespan="off",
    )
    with serving(config) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def api_schema(base_url: str) -> Any:
    """The document the server publishes, as schemathesis reads it."""
    return schemathesis.openapi.from_url(f"{base_url}/openapi.json")


#: Every operation the document lists (a test below keeps this list complete).
OPERATIONS = (
    "GET /api/search",
    "GET /api/books/{book_id}/related",
    "GET /api/explain",
    "GET /api/explain/plot",
    "POST /api/match",
)


def test_every_operation_is_fuzzed(api_schema: Any) -> None:
    """An operation added to the API is added to OPERATIONS, or it goes unchecked."""
    listed = {result.ok().label for result in api_schema.get_all_operations()}
    assert listed == set(OPERATIONS)


# schemathesis.pytest.from_fixture fails on pytest 9.2 (it sets Function._nodeid, which pytest
# no longer has): the same cases come from each operation's Hypothesis strategy instead.
@pytest.mark.parametrize("mode", list(GenerationMode), ids=str)
@pytest.mark.parametrize("label", OPERATIONS)
def test_the_api_keeps_its_openapi_document(api_schema: Any, label: str, mode: Any) -> None:
    operation = api_schema.find_operation_by_label(label)
    checks = all_checks()

    @given(operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any) -> None:
        case.call_and_validate(checks=checks, timeout=30)

    check()
