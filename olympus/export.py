"""Serialized, portable artifacts of staged functions (see ``olympus.export.export``)."""
