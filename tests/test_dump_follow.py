"""Per-pass dumps read while XLA writes them (olympus.dump_follow), and where they
are written (olympus.passes.dump_parent): what a report reads beside the compile
is what it would read after it, and a dump in memory that may have run short of
room is made again on disk (issue 33's 2x budget for passes and costs)."""

import json
import os
import re
import tempfile
import threading
import time

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import passes
from olympus.dump_follow import DumpFollower
from olympus.passes import (
    PassPipeline,
    dumped_compile,
    journey_index,
    pass_pipeline,
    read_dump,
)
from olympus.stages import Lowered
from olympus_jupyter import inspect
from olympus_jupyter.frontends import inspection
from olympus_jupyter.report.passes_view import passes_json, step_deltas

X = np.ones((16, 32), np.float32)
W = np.ones((32, 8), np.float32)


def mlp(x, w):
    y = jnp.tanh(x @ w)
    return (jnp.sort(y, axis=0)[0] * 2.0).sum()


@pytest.fixture(scope="module")
def lowered():
    return olympus.jit(mlp).trace(X, W).lower()


def _name(step: int, after: str, before: str) -> str:
    return f"module_0003.jit_f.{step:04d}.simplification.after_{after}.before_{before}.txt"


def _wait(condition, seconds: float = 30.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.005)
    return False


def test_each_file_is_read_once_the_next_is_begun_and_handed_on_in_order(tmp_path):
    heard: list[tuple[str | None, str]] = []
    follower = DumpFollower([lambda memo, previous, text: heard.append((previous, text))])
    files = [
        ("module_0003.jit_f.before_optimizations.txt", "m0"),
        (_name(0, "pipeline-start", "algsimp"), "m0"),
        (_name(1, "algsimp", "dce"), "m1"),
        (_name(2, "dce", "pipeline-end"), "m2"),
    ]
    with follower.following(str(tmp_path)):
        for name, text in files[:3]:
            (tmp_path / name).write_text(text)
        # The module before the passes and step 0 are whole: XLA has begun step 1.
        assert _wait(lambda: len(heard) == 2), heard
        (tmp_path / files[3][0]).write_text(files[3][1])
        assert _wait(lambda: len(heard) == 3), heard
    # Step 2 is the last: nothing vouches that XLA finished it, so it is left.
    assert heard == [(None, "m0"), ("m0", "m0"), ("m0", "m1")]
    assert follower.take(str(tmp_path), files[2][0]) == "m1"
    assert follower.take(str(tmp_path), files[3][0]) is None  # never read
    assert follower.take("/elsewhere", files[1][0]) is None  # another folder's


def test_the_last_module_is_read_once_the_passes_have_ended(tmp_path):
    heard: list[str] = []
    follower = DumpFollower([lambda memo, previous, text: heard.append(text)])
    (tmp_path / "module_0003.jit_f.before_optimizations.txt").write_text("m0")
    (tmp_path / _name(0, "pipeline-start", "algsimp")).write_text("m0")
    (tmp_path / _name(1, "algsimp", "pipeline-end")).write_text("m1")
    with follower.following(str(tmp_path)):
        assert _wait(lambda: len(heard) == 2), heard  # not the last: it may be unfinished
        # The optimized module comes after every pass: the last one is whole.
        (tmp_path / "module_0003.jit_f.cpu_after_optimizations.txt").write_text("m1")
        assert _wait(lambda: len(heard) == 3), heard
        # ... and nothing more will come: the follower stops looking.
        (tmp_path / _name(2, "dce", "pipeline-end")).write_text("m2")
        time.sleep(0.1)
    assert heard == ["m0", "m0", "m1"]


def test_a_file_that_changed_since_it_was_read_is_read_again(tmp_path):
    follower = DumpFollower()
    before = "module_0003.jit_f.before_optimizations.txt"
    (tmp_path / before).write_text("HloModule m")
    (tmp_path / _name(0, "pipeline-start", "algsimp")).write_text("HloModule m")
    with follower.following(str(tmp_path)):
        assert _wait(lambda: before in follower.texts)
    (tmp_path / before).write_text("HloModule m, changed")
    assert follower.take(str(tmp_path), before) is None


def test_the_pipeline_read_beside_the_compile_is_the_one_read_after_it(lowered):
    plain = pass_pipeline(lowered)
    read: list[str] = []
    follower = DumpFollower([lambda memo, previous, text: read.append(text)])
    with dumped_compile(lowered, pass_re=".*", follower=follower) as (folder, _):
        pipeline = read_dump(folder, ".*", follower)
    assert pipeline.memo is follower.memo
    assert [s.text for s in pipeline.steps] == [s.text for s in plain.steps]
    assert pipeline.before == plain.before and pipeline.after == plain.after
    # What the readers saw (best effort: all, some or none of them) came in order.
    texts = [pipeline.before] + [s.text for s in pipeline.steps]
    assert read == texts[: len(read)]
    # Each text read is the pipeline's now, not held twice; so are the counts.
    assert follower.texts == {} and follower.counts == {}
    assert [s.instructions for s in pipeline.steps] == [s.instructions for s in plain.steps]


def test_a_reader_that_fails_leaves_the_pipeline_as_without_one(lowered):
    def fails(memo, previous, text):
        raise RuntimeError("a reader's bug")

    follower = DumpFollower([fails, passes.journey_reader()])
    with dumped_compile(lowered, pass_re=".*", follower=follower) as (folder, _):
        pipeline = read_dump(folder, ".*", follower)
    plain = pass_pipeline(lowered)
    assert [s.text for s in pipeline.steps] == [s.text for s in plain.steps]
    ours, theirs = journey_index(pipeline).charged(), journey_index(plain).charged()
    assert ours.keys() == theirs.keys()
    assert all(ours[k].events == theirs[k].events for k in ours)


def test_the_deltas_made_beside_the_compile_are_those_made_after_it(lowered):
    pipeline = pass_pipeline(lowered)
    texts = [pipeline.before] + [s.text for s in pipeline.steps]
    ahead = step_deltas(pipeline.memo)  # where read_deltas keeps them
    for previous, text in zip(texts, texts[1:]):
        ahead.delta(previous, text)
    made = passes_json(pipeline, files=())
    # The same modules, nothing read ahead (not a second compile: from JAX 0.12 XLA
    # numbers some passes by the process's compiles).
    again = PassPipeline(pipeline.module, pipeline.before, pipeline.after, pipeline.steps)
    fresh = passes_json(again, files=())
    assert made["deltas"] == fresh["deltas"] and made["rows"] == fresh["rows"]
    assert ahead not in pipeline.memo.values()  # let go of once used


def _data(report) -> str:
    """The report's passes and costs data, less the numbers XLA appends to some pass
    names counting the process's compiles."""
    text = json.dumps([report.passes, report.costs], sort_keys=True, default=str)
    return re.sub(r"(apply-xla-transforms)-\d+", r"\1-N", text)


def test_a_report_read_beside_its_compile_is_the_report_read_after_it(monkeypatch):
    made: list[DumpFollower | None] = []
    follower_of = inspection._follower

    def spied(stages, options):
        made.append(follower_of(stages, options))
        return made[-1]

    data = []
    for follow in (True, False):
        monkeypatch.setattr(
            inspection, "_follower", spied if follow else (lambda stages, options: None)
        )
        data.append(_data(inspect(mlp, X, W, passes=True, costs=True, cache=False)))
    assert data[0] == data[1]
    assert len(made) == 1 and made[0] is not None and len(made[0].readers) == 2


def test_a_report_without_the_passes_stage_follows_no_dump(monkeypatch):
    made = []
    follower_of = inspection._follower
    monkeypatch.setattr(
        inspection, "_follower", lambda s, o: made.append(follower_of(s, o)) or made[-1]
    )
    inspect(mlp, X, W, costs=True, cache=False)
    assert made == [None]


# -- where the dump goes ------------------------------------------------------------------


@pytest.fixture
def system_temp(monkeypatch):
    """The temporary folder as nobody chose one (the system's), for the test."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    return os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK)


def test_per_pass_dumps_go_to_memory_only_where_there_is_room(system_temp, monkeypatch):
    expected = "/dev/shm" if system_temp else None
    monkeypatch.setattr(passes, "_free_bytes", lambda folder: passes.PASS_DUMP_ROOM)
    assert passes.dump_parent(passes.PASS_DUMP_ROOM) == expected
    monkeypatch.setattr(passes, "_free_bytes", lambda folder: passes.PASS_DUMP_ROOM - 1)
    assert passes.dump_parent(passes.PASS_DUMP_ROOM) is None
    assert passes.dump_parent() == expected  # a dump of a few files needs no room said


def test_a_dump_in_memory_that_ran_short_of_room_is_made_again_on_disk(
    system_temp, monkeypatch, lowered
):
    folders: list[str] = []
    compile_ = Lowered.compile

    def counted(self, compiler_options=None):
        folders.append(os.path.dirname((compiler_options or {}).get("xla_dump_to", "")))
        return compile_(self, compiler_options)

    monkeypatch.setattr(Lowered, "compile", counted)
    asked = threading.local()

    def free(folder):  # room before the compile, none after it
        asked.n = getattr(asked, "n", 0) + 1
        return passes.PASS_DUMP_ROOM if asked.n == 1 else 0

    monkeypatch.setattr(passes, "_free_bytes", free)
    with dumped_compile(lowered, pass_re=".*") as (folder, _):
        pipeline = read_dump(folder, ".*")
    if system_temp:
        assert folders == ["/dev/shm", "/tmp"] and folder.startswith("/tmp/")
    else:
        assert folders == ["/tmp"]
    assert [s.text for s in pipeline.steps] == [s.text for s in pass_pipeline(lowered).steps]
    assert not os.path.exists(folder)
