"""Frontends: what users touch. The ``%olympus_lower`` magics and their options, the
Python entry point ``inspect`` with its report cache, the inspector and stepper
widgets, and the command line. The top layer: it may import every layer below.
"""
