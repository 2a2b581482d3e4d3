"""notebooks/09_will_it_fit.ipynb: a train step compiled for a v5e:4x4 this machine does
not have, whether it fits, and the all-gathers a sharding costs.

It compiles for a TPU slice, with libtpu: its tests that run it (in a kernel, with
nbgrader, its checks called here) are marked ``targets`` (``TARGETS``), and run in the
targets environment (run.sh's ``.venvs/targets-<JAX>``), where libtpu is.
"""

import re

from notebook_outputs import MEDIA, bundles, report_of, text
from olympus.sharding import PartitionSpec as P

#: Its tests that run the lesson need libtpu: test_course.py marks them ``targets``.
TARGETS = True

ALL = ("data", "model")


def shows(nb, code):
    outputs = "".join(text(c) for c in code)
    assert "TPU v5e (TPU v5 lite), 16 chips, compiled here without one" in outputs
    assert "16 devices, 16 GiB of memory each" in outputs
    assert "w, m, v: f32[4096, 262144], 4 GiB each" in outputs
    assert "the logits: f32[65536, 262144], 64 GiB" in outputs
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 1  # the replicated step's, from %olympus_lower
    data = reports[0][MEDIA]
    assert data["failure"] is not None and data["failure"]["stage"] == "compile"
    assert data["target"]["name"] == "v5e:4x4"
    # Replicated: the weights and their Adam state do not fit, whatever the batch.
    assert "fits: False" in outputs
    assert re.search(
        r"needs \d+\.\d GiB a chip, 15\.\d GiB available \(XLA out of memory\)", outputs
    )
    assert re.search(r"4\.0 GiB  argument [wmv]\n", outputs)
    # The weights split: the logits' block, from its line, is the biggest buffer.
    assert re.search(
        r"16\.0 GiB  temporary f32\[65536,65536\] made by line \d+: logits = h @ w", outputs
    )
    # FSDP: one all-gather per weight, on its line, in bfloat16 (or float32).
    gathers = re.findall(
        r"all-gather on line \[(\d)\] of mlp \(def \+ k\): ([\d,]+) bytes per device, "
        r"~[\d,]+ sent by each of 16",
        outputs,
    )
    sizes = {int(line): int(size.replace(",", "")) for line, size in gathers}
    assert sorted(sizes) == [1, 2, 3], gathers
    for line, (rows, columns) in zip((1, 2, 3), ((512, 2048), (2048, 4096), (4096, 256))):
        assert sizes[line] in (rows * columns * 2, rows * columns * 4), (line, sizes)


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "fit_on_pod": (
        'return 65_536, (P(None, "model"),) * 3 + (P(), P())',
        "made by `logits = h @ w`",
    ),
    "dominant_gather_line": (
        "rows = report.collectives()\n"
        'return max(rows, key=lambda c: c["moved_bytes"] or 0)["lines"][0][1]',
        "not an all-gather",
    ),
}


def _sum_by_line(report, what=("all-gather",), field="moved_bytes"):
    sent = {}
    for c in report.collectives():
        if c["opcode"].startswith(what):
            for _, line in c["lines"]:
                sent[line] = sent.get(line, 0) + (c[field] or 0)
    return sent


def _dominant(report):
    sent = _sum_by_line(report)
    return max(sent, key=sent.get)


def _biggest_single_gather(report):
    gathers = [c for c in report.collectives() if c["opcode"].startswith("all-gather")]
    return max(gathers, key=lambda c: c["moved_bytes"])["lines"][0][1]


def _relative(report):  # a count from the def, not the file's line
    from olympus_jupyter.teaching.exercises.will_it_fit import _gather_report

    for k in range(3):
        if _gather_report(k)[0] is report:
            return _dominant(report) - _gather_report(k)[1]
    raise AssertionError("not a report of the check's")


#: Other correct answers its checks accept.
RIGHT = [
    # The tokens over all 16 chips, the vocabulary too: twice the tokens.
    ("check_fit_on_pod", lambda: (131_072, (P(None, ALL),) * 3 + (P(ALL), P(ALL)))),
    # The tokens whole on every chip, the vocabulary split 16 ways.
    ("check_fit_on_pod", lambda: [65_536, [P(None, ALL)] * 3 + [None, P()]]),
    ("check_dominant_gather_line", _dominant),
]

#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    ("check_fit_on_pod", lambda: 65_536, "return a pair, (tokens, shardings)"),
    (
        "check_fit_on_pod",
        lambda: (1_024, (P(None, ALL),) * 3 + (P(), P())),
        "The task asks for at least 65,536 tokens",
    ),
    (
        "check_fit_on_pod",
        lambda: (65_536, (P(), P(None, ALL), P(None, ALL), P(ALL), P(ALL))),
        "w, f32[4096,262144], is whole on every chip",
    ),
    (
        "check_fit_on_pod",
        lambda: (65_538, (P(None, ALL),) * 3 + (P("data"), P("data"))),
        "65,538 is not a multiple of 4",
    ),
    (
        "check_fit_on_pod",
        lambda: (65_536, (P(None, "vocab"),) * 3 + (P(), P())),
        "names the mesh axis 'vocab'",
    ),
    ("check_dominant_gather_line", _biggest_single_gather, "add up each line's all-gathers"),
    ("check_dominant_gather_line", _relative, "a count from the def"),
    (
        "check_dominant_gather_line",
        lambda report: report.collectives()[0]["lines"][0],
        "return the line number alone",
    ),
]
