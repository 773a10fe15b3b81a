"""Index definitions as JSON (books, relations, runs), shipped as package data."""
