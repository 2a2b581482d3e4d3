"""notebooks/06_cost_and_memory.ipynb: flops, bytes and peak memory by line;
rematerialization and donation."""

import re

import olympus
import olympus.numpy as jnp
from notebook_outputs import MEDIA, bundles, report_of, text
from olympus_jupyter.teaching.exercises.costs import attention


def _number(pattern, outputs):
    return int(re.search(pattern, outputs).group(1).replace(",", ""))


def shows(nb, code):
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 1  # the MLP's, with the costs stage
    data = reports[0][MEDIA]
    assert "costs" in data["stages"] and data["failure"] is None and data["costs"]["lines"]
    outputs = "".join(text(c) for c in code)
    # The matrix product's line costs its 2·m·k·n flops (and the tanh's handful).
    flops = _number(r"x @ w1 then tanh: ([\d,]+) flops", outputs)
    assert abs(flops - 2 * 128 * 256 * 512) <= 0.01 * flops
    assert "the rows add up to XLA's total (within 1%): True" in outputs
    # Attention's peak holds the [1024, 1024] scores, and the buffers add up to it.
    assert _number(r"peak: ([\d,]+) bytes", outputs) >= 1024 * 1024 * 4 + 3 * 1024 * 32 * 4
    assert re.search(r"4,194,304 bytes  temporary f32\[1024,1024\]", outputs)
    assert "they add up: True" in outputs
    # Rematerialization: fewer stacked residuals, a lower peak, the same gradient.
    saved = re.search(r"without checkpoint: peak\s+([\d,]+) bytes, (\d+) stacked", outputs)
    remat = re.search(r"with checkpoint: peak\s+([\d,]+) bytes, (\d+) stacked", outputs)
    assert int(remat.group(1).replace(",", "")) < int(saved.group(1).replace(",", ""))
    assert int(remat.group(2)) < int(saved.group(2))
    assert "same gradient: True" in outputs
    # Donation: the output reuses argument 0's buffer, memory_analysis counts it once.
    assert "kept: output reuses argument None; memory_analysis: alias 0 bytes" in outputs
    donated = re.search(
        r"donated: output reuses argument 0; memory_analysis: alias ([\d,]+) "
        r"bytes, peak ([\d,]+)",
        outputs,
    )
    assert donated and int(donated.group(1).replace(",", "")) == 512 * 512 * 4
    # The costs stage counts the donated memory once too: one array less than kept.
    peaks = {
        name: int(v.replace(",", ""))
        for name, v in re.findall(r"(kept|donated): .*costs stage: peak ([\d,]+) bytes", outputs)
    }
    assert peaks["kept"] - peaks["donated"] == 512 * 512 * 4, peaks


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "heaviest_line": (
        "rows = [r for r in report.cost_by_line() if r['what'] == 'line']\n"
        "return max(rows, key=lambda r: r['transcendentals'])['line']",
        "has the most transcendentals",
    ),
    "lean_attention": ("return attention(q, k, v)", "not under 3,145,728 bytes"),
}


def _first_row(report):
    return report.cost_by_line()[0]["line"]  # rows come biggest flops first


def _by_row(q, k, v):
    return olympus.lax.map(lambda row: attention(row[None], k, v)[0], q)


def _sixteen_blocks(q, k, v):
    blocks = q.reshape(16, 64, q.shape[1])
    return jnp.concatenate(list(olympus.lax.map(lambda b: attention(b, k, v), blocks)))


def _unrolled(q, k, v):
    return jnp.concatenate([attention(q[i : i + 256], k, v) for i in range(0, 1024, 256)])


def _bfloat16(q, k, v):
    q, k, v = (a.astype(jnp.bfloat16) for a in (q, k, v))
    return attention(q, k, v).astype(jnp.float32)


#: Other correct answers its checks accept.
RIGHT = [
    ("check_heaviest_line", _first_row),
    ("check_lean_attention", _by_row),
    ("check_lean_attention", _sixteen_blocks),
]

#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    ("check_heaviest_line", lambda report: report.cost_by_line()[0], "returned a dict"),
    ("check_heaviest_line", lambda report: 0, "not a line of the program"),
    ("check_lean_attention", _unrolled, "A Python loop over blocks unrolls"),
    ("check_lean_attention", _bfloat16, "differs from attention's"),
]
