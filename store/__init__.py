"""The shared Elasticsearch layer: connection, retries, bulk, PIT iteration, msearch, index
names and schema, run records, and the candidate term queries both sides need."""
