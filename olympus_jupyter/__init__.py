"""Jupyter inspection for Olympus: the ``%olympus_lower`` magic and stage reports."""
