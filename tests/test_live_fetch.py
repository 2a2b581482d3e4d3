"""Details past the cap, fetched from the live kernel (issue 33): a capped output
carries its report's token; the kernel's comm target ``olympus.live`` answers a
view's requests with pages of the uncapped data, says what was wrong with a bad
request (the comm and the kernel go on), and keeps only the last few reports."""

import json
import time
import uuid

import pytest

from deadlines import deadline
from ipc_kernel import started_kernel
from olympus_jupyter.report import live_reports
from olympus_jupyter.report.data import MEDIA_TYPE
from olympus_jupyter.report.validate import check_bundle

#: The cap the kernel's outputs get here (small, so that a small program is capped).
LIMIT = 160_000

#: Source lines of the program (each its own cost row).
LINES = 120

SETUP = f"""\
%load_ext olympus_jupyter
import importlib.util, pathlib, tempfile
import numpy as np
from IPython.display import display
from olympus_jupyter import inspect
from olympus_jupyter.report import output_cap, live_reports
output_cap.MAX_OUTPUT_BYTES = {LIMIT}
ops = ["jnp.sin", "jnp.tanh", "jnp.cos", "jnp.exp"]
body = [f"    x = {{ops[i % 4]}}(x) * {{1 + i / {LINES}:.6f}} + {{i % 7}}.0" for i in range({LINES})]
path = pathlib.Path(tempfile.mkdtemp()) / "live_program.py"
path.write_text("import olympus.numpy as jnp\\n\\n\\ndef big(x):\\n" + "\\n".join(body) + "\\n    return x\\n")
spec = importlib.util.spec_from_file_location("live_program", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
x = np.ones((4, 4), np.float32)
report = inspect(module.big, x, costs=True, passes=True, cache=None)
"""


@pytest.fixture(scope="module")
def kernel():
    with started_kernel() as (_, kc):
        messages = run(kc, SETUP)
        assert not errors(messages), errors(messages)
        yield kc


def _iopub_until(kc, done, timeout):
    start, messages = time.monotonic(), []
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=0.2)
        except Exception:  # noqa: BLE001 - no message yet (a timeout)
            assert time.monotonic() - start < deadline(timeout), "the kernel did not answer"
            continue
        messages.append(msg)
        if done(msg):
            return messages


def run(kc, code, timeout=240):
    """Executes ``code``; its iopub messages."""
    msg_id = kc.execute(code)
    messages = _iopub_until(
        kc,
        lambda m: (
            m["parent_header"].get("msg_id") == msg_id
            and m["msg_type"] == "status"
            and m["content"]["execution_state"] == "idle"
        ),
        timeout,
    )
    return [m for m in messages if m["parent_header"].get("msg_id") == msg_id]


def errors(messages):
    return [m["content"] for m in messages if m["msg_type"] == "error"]


def shown(kc, code):
    """The report data ``code`` displays."""
    messages = run(kc, code)
    assert not errors(messages), errors(messages)
    data = [
        m["content"]["data"][MEDIA_TYPE]
        for m in messages
        if m["msg_type"] == "display_data" and MEDIA_TYPE in m["content"]["data"]
    ]
    assert len(data) == 1
    return data[0]


def ask(kc, data):
    """Opens a comm to ``olympus.live`` with ``data``, as the view does: the messages
    the kernel sends on it, and whether it closed it."""
    comm_id = uuid.uuid4().hex
    kc.shell_channel.send(
        kc.session.msg(
            "comm_open", {"comm_id": comm_id, "target_name": "olympus.live", "data": data}
        )
    )
    messages = _iopub_until(
        kc,
        lambda m: m["msg_type"] == "comm_close" and m["content"].get("comm_id") == comm_id,
        60,
    )
    sent = [
        m["content"]["data"]
        for m in messages
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id
    ]
    return sent


def ask_one(kc, data):
    sent = ask(kc, data)
    assert len(sent) == 1, sent
    return sent[0]


@pytest.fixture(scope="module")
def capped(kernel):
    return shown(kernel, "display(report)")


def test_a_capped_output_carries_its_token_and_what_it_cut(capped):
    check_bundle(json.loads(json.dumps(capped)))  # the schema knows the field
    live = capped["live"]
    assert len(live["report"]) >= 16
    parts = {(p["kind"], p["part"]): p for p in live["parts"]}
    lines = parts[("costs", "lines")]
    shown_rows = [r for r in capped["costs"]["lines"] if r["what"] == "line"]
    assert lines["total"] == LINES and 0 < lines["shown"] == len(shown_rows) < LINES
    journeys = parts[("passes", "journeys")]
    assert journeys["shown"] == len(capped["passes"]["journeys"]) < journeys["total"]


def test_the_kernel_pages_through_what_the_cap_left_out(kernel, capped):
    token = capped["live"]["report"]
    kept = [r for r in capped["costs"]["lines"] if r["what"] == "line"]
    rows, offset = [], len(kept)
    while offset is not None:
        page = ask_one(
            kernel,
            {"report": token, "kind": "costs", "part": "lines", "offset": offset, "limit": 25},
        )
        assert page["ok"] and page["offset"] == offset and len(page["items"]) <= 25
        assert page["total"] == LINES
        rows += page["items"]
        offset = page["next"]
    every = kept + rows
    assert len(every) == LINES
    # The same rows the report object gives, costliest first, each a source line once.
    assert len({(r["file"], r["line"]) for r in every}) == LINES
    flops = [r["flops"] for r in every]
    assert flops == sorted(flops, reverse=True)
    # A stage's text past the cap, line by line.
    cut = next(p for p in capped["live"]["parts"] if p["kind"] == "stage")
    page = ask_one(
        kernel,
        {"report": token, "kind": "stage", "part": cut["part"], "offset": cut["shown"], "limit": 5},
    )
    assert page["ok"] and page["total"] == cut["total"] and len(page["items"]) == 5
    assert all(isinstance(line, str) for line in page["items"])


@pytest.mark.parametrize(
    "request_, said",
    [
        (
            {"report": "no-such-report", "kind": "costs", "part": "lines", "offset": 0, "limit": 5},
            "no longer held by the kernel",
        ),
        ({"kind": "costs", "part": "lines", "offset": 0, "limit": 5}, "lacks report"),
        (
            {"report": "x", "kind": "weights", "part": "lines", "offset": 0, "limit": 5},
            "Unknown kind 'weights'",
        ),
        (
            {"report": "x", "kind": "costs", "part": "lines", "offset": -1, "limit": 5},
            "'offset' is a whole number of at least 0",
        ),
        (
            {"report": "x", "kind": "costs", "part": "secrets", "offset": 0, "limit": 5},
            "Unknown part 'secrets' of costs",
        ),
        ("lines please", "A request is an object"),
    ],
)
def test_a_bad_request_is_answered_with_what_was_wrong(kernel, request_, said):
    reply = ask_one(kernel, request_)
    assert reply["ok"] is False and said in reply["error"]


def test_the_comm_and_the_kernel_go_on_after_a_bad_request(kernel, capped):
    ask_one(kernel, None)
    token = capped["live"]["report"]
    page = ask_one(
        kernel, {"report": token, "kind": "passes", "part": "journeys", "offset": 0, "limit": 2}
    )
    assert page["ok"] and len(page["items"]) == 2
    assert not errors(run(kernel, "1 + 1"))


def test_the_kernel_keeps_only_its_last_few_reports(kernel, capped):
    first = capped["live"]["report"]
    tokens = []
    for _ in range(live_reports.KEEP + 2):  # a new report shown each time
        data = shown(kernel, "display(inspect(module.big, x, costs=True, cache=None))")
        tokens.append(data["live"]["report"])
    assert len(set(tokens)) == len(tokens)
    messages = run(kernel, "print(len(live_reports.LIVE))")
    printed = "".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")
    assert printed.strip() == str(live_reports.KEEP)
    gone = ask_one(
        kernel, {"report": first, "kind": "costs", "part": "lines", "offset": 0, "limit": 1}
    )
    assert gone["ok"] is False and "no longer held" in gone["error"]
    last = ask_one(
        kernel, {"report": tokens[-1], "kind": "costs", "part": "lines", "offset": 0, "limit": 1}
    )
    assert last["ok"] is True


def test_a_report_shown_outside_a_kernel_keeps_nothing():
    # This process has not loaded the extension in a kernel: nothing is kept.
    assert live_reports.LIVE.enabled is False
    assert live_reports.LIVE.offer(object()) is None


def _long(x):
    import olympus.numpy as jnp

    for _ in range(200):
        x = jnp.sin(x)
    return x


def test_only_a_cut_output_asks_for_a_token_and_it_stays_under_its_cap():
    from olympus_jupyter import inspect
    from olympus_jupyter.report.output_cap import capped_forms, output_size

    asked = []

    def live(report):
        asked.append(report)
        return "token"

    small = inspect(lambda x: x * 2.0, 1.0, cache=None)
    assert "live" not in capped_forms(small, live=live)[MEDIA_TYPE] and asked == []
    report = inspect(_long, 1.0, cache=None)
    forms = capped_forms(report, limit=60_000, live=live)
    assert output_size(forms) <= 60_000 and asked == [report]
    held = forms[MEDIA_TYPE]["live"]
    assert held["report"] == "token"
    stage = {p["part"]: p for p in held["parts"] if p["kind"] == "stage"}["olympuspr"]
    assert 0 < stage["shown"] < stage["total"] == len(report.stage_text("olympuspr").splitlines())
    check_bundle(json.loads(json.dumps(forms[MEDIA_TYPE])))
