"""A local Elasticsearch node for development and tests (`bookdup es up/down/status`)."""
