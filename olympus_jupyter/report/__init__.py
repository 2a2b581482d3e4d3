"""Reports: the model of what each stage made of a function, and its forms.

A :class:`StageReport` is built once from staged stages (``build_report``) and
rendered as a JSON bundle (:mod:`.bundle`), static HTML (:mod:`.html`) and text
(:mod:`.text`); :mod:`.compare` diffs two reports. This layer imports the staging
and highlighting layers, never the frontends.

>>> from olympus_jupyter.staging import run_stages
>>> build_report(run_stages(lambda x: x + 1, (1.0,))).ok
True
"""

from olympus_jupyter.report.stage_report import MEDIA_TYPE, StageReport, build_report

__all__ = ["StageReport", "build_report", "MEDIA_TYPE"]
