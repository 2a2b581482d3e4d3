"""The provenance model: every op of every stage tied to the Python source it came from."""
