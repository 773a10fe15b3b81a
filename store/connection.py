"""Connection settings and a client that fails with one clear line.

Settings come from flags or the environment (``ELASTICSEARCH_URL``, ``ELASTICSEARCH_API_KEY``,
``ELASTICSEARCH_USERNAME`` / ``ELASTICSEARCH_PASSWORD``, ``ELASTICSEARCH_CA_CERTS``,
``ELASTICSEARCH_TIMEOUT``). Secrets are never put into messages or logs: ``__repr__`` hides them.
"""

from __future__ import annotations

import os
import re
import weakref
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import (
    ApiError,
    AuthenticationException,
    AuthorizationException,
    Elasticsearch,
    SSLError,
    TransportError,
    UnsupportedProductError,
)
from elasticsearch import (
    ConnectionError as ESConnectionError,
)

from store.deadline import DeadlineTransport
from store.retry import POLICY

DEFAULT_URL = "http://127.0.0.1:9200"
MIN_MAJOR_VERSION = 8


class ElasticsearchUnavailable(RuntimeError):
    """The node cannot be used; the message is one line that says what to do."""


@dataclass(frozen=True)
class ConnectionSettings:
    """Where the cluster is and how to authenticate; secrets excluded from repr."""

    url: str = field(default=DEFAULT_URL, repr=False)
    api_key: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_certs: str | None = None
    timeout: float = 30.0

    @classmethod
    def from_env(cls, **overrides: object) -> ConnectionSettings:
        """Environment first, explicit (non-None) overrides win."""
        env = os.environ
        values: dict[str, object] = {
            "url": env.get("ELASTICSEARCH_URL", DEFAULT_URL),
            "api_key": env.get("ELASTICSEARCH_API_KEY") or None,
            "username": env.get("ELASTICSEARCH_USERNAME") or None,
            "password": env.get("ELASTICSEARCH_PASSWORD") or None,
            "ca_certs": env.get("ELASTICSEARCH_CA_CERTS") or None,
            "timeout": float(env.get("ELASTICSEARCH_TIMEOUT", "30")),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        auth = "api_key" if self.api_key else ("basic" if self.username else "none")
        return f"ConnectionSettings(url={self.safe_url!r}, auth={auth}, timeout={self.timeout})"

    @property
    def safe_url(self) -> str:
        """The URL with any embedded user:password removed, for messages."""
        scheme, sep, rest = self.url.partition("://")
        if not sep:
            return self.url
        return f"{scheme}://{rest.rpartition('@')[2]}"


def make_client(settings: ConnectionSettings, **overrides: Any) -> Elasticsearch:
    """A client with sane retry/timeouts (``overrides`` replace them); does not contact the
    node."""
    kwargs: dict[str, Any] = {
        "request_timeout": settings.timeout,
        "retry_on_timeout": True,
        "max_retries": POLICY.transport_retries,
        # A 429 means "slow down": it is retried after a backoff (`store.retry`) or answered with
        # smaller bulk requests (`store.bulk`), never at once by the transport.
        "retry_on_status": (502, 503, 504),
    }
    if settings.api_key:
        kwargs["api_key"] = settings.api_key
    elif settings.username:
        kwargs["basic_auth"] = (settings.username, settings.password or "")
    if settings.ca_certs:
        kwargs["ca_certs"] = settings.ca_certs
    kwargs.update(overrides)
    return Elasticsearch(settings.url, **kwargs)


def serving_client(settings: ConnectionSettings, request_timeout: float) -> Elasticsearch:
    """A client for a server that answers people: each call waits at most ``request_timeout``
    (less when the request's ``store.deadline`` is nearer), one immediate transport retry for a
    dropped connection, none on a timeout (the deadline, not the client, decides)."""
    return make_client(
        settings,
        transport_class=DeadlineTransport,
        request_timeout=min(settings.timeout, request_timeout),
        max_retries=1,
        retry_on_timeout=False,
    )


_MISSING_OK: weakref.WeakKeyDictionary[Elasticsearch, Elasticsearch] = weakref.WeakKeyDictionary()


def missing_ok(client: Elasticsearch) -> Elasticsearch:
    """``client.options(ignore_status=404)``, made once per client: each ``options()`` builds a
    new client with its ~40 API namespaces, each reading the environment (OpenTelemetry's
    settings), ~4 % of ``bookdup serve``'s time under load when made for every read (issue 30).
    Shares ``client``'s transport, so its deadlines and retries too."""
    found = _MISSING_OK.get(client)
    if found is None:
        found = _MISSING_OK[client] = client.options(ignore_status=404)
    return found


def _what_answered(exc: ApiError) -> str:
    """Status and media type (Content-Type without parameters), never the body."""
    meta = exc.meta
    headers = meta.headers if meta is not None else None
    value = str(headers.get("Content-Type") or "") if headers is not None else ""
    media = value.split(";")[0].strip()[:60]
    media = media if media and media.isprintable() else "no content type"
    status = meta.status if meta is not None else "?"
    return f"HTTP {status}, {media}"


def _one_line(text: str, limit: int = 200) -> str:
    """Whitespace collapsed and cut: an error message never spreads over lines."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _not_elasticsearch(exc: ApiError) -> bool:
    """Elasticsearch marks every answer (errors too) with X-Elastic-Product; without it the
    answer came from something else, whose body (an HTML page, say) means nothing here."""
    headers = exc.meta.headers if exc.meta is not None else None
    return headers is None or headers.get("X-Elastic-Product") != "Elasticsearch"


def _tls_reason(exc: SSLError) -> str:
    """The innermost TLS failure (``certificate verify failed: ...``), without the wrappers."""
    inner: Any = exc
    while getattr(inner, "errors", None):
        inner = inner.errors[-1]
    text = str(getattr(inner, "message", inner))
    return " ".join(re.sub(r"^\[[A-Z0-9_: ]+\]\s*|\s*\(_ssl\.c:\d+\)", "", text).split())


def explain_error(exc: Exception, settings: ConnectionSettings) -> str:
    """Turn a client exception into one line that tells the user what to do."""
    url = settings.safe_url
    if isinstance(exc, SSLError):  # before ConnectionError, its base: the node did answer
        fix = (
            f"check the CA file {settings.ca_certs} (--ca-certs / ELASTICSEARCH_CA_CERTS)"
            if settings.ca_certs
            else "pass the cluster's CA certificate with --ca-certs / ELASTICSEARCH_CA_CERTS"
        )
        return f"TLS with Elasticsearch at {url} failed ({_tls_reason(exc)}): {fix}"
    if isinstance(exc, ESConnectionError):
        return (
            f"cannot reach Elasticsearch at {url}: start a local node with `bookdup es up` "
            "or set ELASTICSEARCH_URL / --es-url"
        )
    if isinstance(exc, AuthenticationException):
        return (
            f"Elasticsearch at {url} rejected the credentials (401): check ELASTICSEARCH_API_KEY "
            "or ELASTICSEARCH_USERNAME / ELASTICSEARCH_PASSWORD"
        )
    if isinstance(exc, AuthorizationException):
        return f"Elasticsearch at {url} refused the request (403): the user lacks index privileges"
    if isinstance(exc, ApiError) and (
        isinstance(exc, UnsupportedProductError) or _not_elasticsearch(exc)
    ):
        return (
            f"the server at {url} is not Elasticsearch (it answered {_what_answered(exc)}): "
            "check ELASTICSEARCH_URL / --es-url"
        )
    if isinstance(exc, ApiError):
        return f"Elasticsearch at {url} answered {exc.meta.status}: {_one_line(exc.message)}"
    if isinstance(exc, TransportError):
        return f"talking to Elasticsearch at {url} failed: {_one_line(exc.message)}"
    return f"Elasticsearch at {url}: {_one_line(str(exc))}"


def connect(settings: ConnectionSettings | None = None) -> Elasticsearch:
    """Connect and check the node is a usable Elasticsearch (8.x or 9.x).

    ``GET /`` is not used: the integ-test distribution has no info endpoint, so the version
    comes from the local node's info instead.
    """
    settings = settings or ConnectionSettings.from_env()
    try:
        client = make_client(settings)
    except ValueError as exc:  # the client's message may quote the URL, password and all
        reason = " ".join(re.sub(r"(\w+://)[^\s'\"]*@", r"\1", str(exc)).split())
        raise ElasticsearchUnavailable(
            f"cannot use {settings.safe_url}: {reason} (check --es-url / ELASTICSEARCH_URL)"
        ) from None
    try:
        info = client.nodes.info(node_id="_local", metric="_none", filter_path="nodes.*.version")
    except Exception as exc:  # noqa: BLE001 - every failure becomes one clear line
        raise ElasticsearchUnavailable(explain_error(exc, settings)) from exc
    versions = [n.get("version", "0") for n in info.body.get("nodes", {}).values()]
    major = int(versions[0].split(".")[0]) if versions else 0
    if major < MIN_MAJOR_VERSION:
        raise ElasticsearchUnavailable(
            f"Elasticsearch at {settings.safe_url} is version {versions[0] if versions else '?'}; "
            f"bookdup needs {MIN_MAJOR_VERSION}.x or 9.x"
        )
    return client
