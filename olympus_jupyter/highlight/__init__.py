"""Highlighting: Pygments lexers for olympuspr, StableHLO and HLO, and the report's
line-by-line highlighter. Imports nothing else of ``olympus_jupyter``.

>>> from olympus_jupyter.highlight.lexers import StableHLOLexer
>>> StableHLOLexer.aliases[0]
'stablehlo'
"""
