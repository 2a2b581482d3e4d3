"""notebooks/03_passes.ipynb: what XLA's passes did to a line."""

import re

from notebook_outputs import MEDIA, bundles, report_of, text


def shows(nb, code):
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 2  # the layer, and the planted program with a pass filter
    for data in reports:
        assert "XLA passes" in data["text/html"] and "passes" in data[MEDIA]["stages"]
        assert data[MEDIA]["failure"] is None
    layer, filtered = (data[MEDIA]["passes"] for data in reports)
    assert layer["pass_re"] == ".*" and filtered["pass_re"] == "fusion|cse"
    assert any(r["kind"] == "changed" for r in layer["rows"])
    assert {r["kind"] for r in filtered["rows"]} <= {"start", "changed", "unchanged", "context"}
    assert all(
        re.search("fusion|cse", r["pass"]) for r in filtered["rows"] if r["kind"] == "changed"
    )
    outputs = "".join(text(c) for c in code)
    assert "removed by cse" in outputs  # the planted common subexpression
    assert re.search(r"\(tanh\) is in \S+, k[A-Z]\w+", outputs)  # the tanh's fusion and kind


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "removed_by": ("return 'cse'", "The def line made no instruction (its journey is None)"),
    "fusion_kind": ("return None", "ended in a fusion of the optimized program"),
}


def _removed_by(report, line):
    journey = report.journey(line)
    if not journey or journey["end"]:
        return None
    return next((e["pass"] for e in reversed(journey["events"]) if e["kind"] == "removed"), None)


def _fusion_kind(report, line):
    journey = report.journey(line)
    kinds = [c["fusion_kind"] for c in (journey or {}).get("end", []) if c["fusion"]]
    return kinds[0] if kinds else None


#: Other correct answers its checks accept.
RIGHT = [
    ("check_removed_by", _removed_by),
    ("check_fusion_kind", _fusion_kind),
]

#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    (
        "check_removed_by",
        lambda report, line: report.journey(line)["end"],
        "journey returns None for a line that made no instruction",
    ),
    ("check_fusion_kind", lambda report, line: "kOutput", "got 'kOutput'"),
]
