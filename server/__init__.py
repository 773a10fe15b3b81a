"""The read side over HTTP: a JSON API (``server.app``) and one review page (``server/static``)."""
