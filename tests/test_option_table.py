"""Every frontend offers exactly the options of the one table, as the table declares them.

The table (:mod:`olympus_jupyter.report.option_table`) declares each option once: its
name and keyword, flags, default, help, what it takes, its check and how the
Inspector shows it. Here the magic's parser, the CLI's, ``inspect()``'s and the
Inspector's keywords, the Inspector's controls, ``ReportOptions`` and the cache key
are compared with it, both ways (every row appears, nothing appears that the table
lacks); and a row registered at run time shows up in each of them.
"""

import argparse
import contextlib
import html
import inspect as pyinspect
import io

import pytest

import olympus.numpy as jnp
from olympus_jupyter import Inspector
from olympus_jupyter import inspect as olympus_inspect
from olympus_jupyter.frontends import cli, inspection
from olympus_jupyter.frontends.options import (
    Control,
    Option,
    OptionError,
    OptionTypeError,
    ReportOptions,
    build_parser,
    check_option,
    key_options,
    options,
    parse_options,
    register_option,
    split_line,
    unregister_option,
)
from olympus_jupyter.report.option_table import FRONTENDS, OPTIONS


def quietly(thunk):
    with contextlib.redirect_stdout(io.StringIO()):
        return thunk()


def layer(w, x):
    return jnp.tanh(x @ w)


def actions(parser: argparse.ArgumentParser, *, skip=()) -> dict[str, argparse.Action]:
    """The parser's options by destination (not its help, nor the names in ``skip``)."""
    return {
        a.dest: a
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction) and a.dest not in skip
    }


def assert_declared_as_in_the_table(found: dict[str, argparse.Action], frontend: str):
    rows = options(frontend)
    assert list(found) == [row.name for row in rows], frontend
    for row in rows:
        action = found[row.name]
        assert tuple(action.option_strings) == row.flags, row.name
        assert action.help == row.help_text() and action.help, row.name
        assert action.required == row.required, row.name
        if row.takes == "switch":
            assert action.nargs == 0 and action.const is (not row.default), row.name
            assert action.default == row.default, row.name
        else:
            assert action.metavar == row.metavar and action.metavar, row.name
            assert action.default == ([] if row.takes == "repeat" else None), row.name
            assert action.nargs == ("?" if row.takes == "optional" else None), row.name
            assert action.const == row.const, row.name


def keyword_parameters(function, *, skip) -> dict[str, object]:
    return {
        p.name: p.default
        for p in pyinspect.signature(function).parameters.values()
        if p.name not in skip and p.kind is not p.VAR_KEYWORD
    }


# --- each frontend against the table --------------------------------------------------


def test_the_magic_parser_is_the_table():
    assert_declared_as_in_the_table(actions(build_parser()), "magic")


def test_the_magic_parser_defaults_are_the_table_defaults():
    assert parse_options("") == ReportOptions() == split_line("f(x)")[0]


def cli_command(command: str) -> argparse.ArgumentParser:
    return next(
        a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices[command]


@pytest.mark.parametrize("command", ["report", "demo"])
def test_the_cli_parser_is_the_table(command):
    assert_declared_as_in_the_table(actions(cli_command(command), skip=("arg",)), f"cli {command}")


def test_one_help_wording_per_option_in_the_magic_and_the_cli():
    magic = actions(build_parser())
    for command in ("report", "demo"):
        for name, action in actions(cli_command(command), skip=("arg",)).items():
            if name in magic:
                assert action.help == magic[name].help, name


def test_inspect_takes_the_table_options_by_their_keywords_and_defaults():
    declared = keyword_parameters(inspection.inspect, skip=("fn_or_stage", "args"))
    rows = options("inspect")
    assert set(declared) == {row.keyword for row in rows}
    for row in rows:
        assert declared[row.keyword] == row.default, row.keyword


def test_the_inspector_takes_the_table_options_by_their_keywords_and_defaults():
    declared = keyword_parameters(Inspector.__init__, skip=("self", "fun", "example_args"))
    rows = options("inspector")
    assert set(declared) == {row.keyword for row in rows}
    for row in rows:
        assert declared[row.keyword] == row.default, row.keyword


def widgets_of_the_form(widget, skip):
    """The controls under ``widget``: a row of checkboxes counts as one."""
    import ipywidgets as W
    from olympus_jupyter.frontends.inspector import Choices

    if widget in skip:
        return
    if isinstance(widget, (Choices, W.Text, W.Checkbox, W.ToggleButtons, W.Dropdown)):
        yield widget
        return
    for child in getattr(widget, "children", ()):
        yield from widgets_of_the_form(child, skip)


def test_the_inspector_shows_each_option_as_the_table_says_and_no_other():
    from olympus_jupyter.frontends.inspector import Choices

    ins = quietly(lambda: Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4))))
    shown = [row for row in options("inspector") if row.control is not None]
    assert set(ins.controls) == {row.name for row in shown}
    for row in shown:
        widget = ins.controls[row.name]
        assert widget is getattr(ins, row.control.attribute), row.name
        if isinstance(widget, Choices):
            assert row.control.label in widget.label.value, row.name
            assert f'title="{html.escape(row.control.tooltip)}"' in widget.label.value
        else:
            assert (widget.description, widget.tooltip) == (
                row.control.label,
                row.control.tooltip,
            ), row.name
    # Beside the argument editors, the form holds the options' controls and the
    # StableHLO/HLO toggle (which of the stages' forms to show), nothing else.
    form = ins.children[0]
    found = set(widgets_of_the_form(form, skip=set(ins.editors)))
    assert found == set(ins.controls.values()) | {ins.dialect}


def test_report_options_hold_the_table_options_with_their_defaults():
    rows = options("report")
    assert list(ReportOptions.__annotations__) == [row.name for row in rows]
    made = ReportOptions()
    assert list(made.values()) == [row.name for row in rows]
    for row in rows:
        assert getattr(made, row.name) == check_option(row.name, row.default), row.name
    with pytest.raises(OptionTypeError, match="ReportOptions takes no option 'platform'"):
        ReportOptions(platform="cpu")


def test_the_cache_key_holds_the_options_the_table_marks():
    assert list(key_options(ReportOptions())) == [row.name for row in options() if row.in_key]


def test_every_option_is_described_and_refuses_with_what_it_takes():
    for row in options():
        assert row.help_text() and row.accepts_words(), row.name
        assert row.frontends and row.frontends <= set(FRONTENDS), row.name
        if row.on_command_line and row.takes != "switch":
            assert row.accepts_words(text=True) or row.parse_text, row.name
        value = object()
        with pytest.raises(OptionError) as raised:
            check_option(row.name, value)
        assert str(raised.value) == (
            f"{row.keyword} must be {row.accepts_words()}; got {value!r} (object)."
        ), row.name


def test_the_choices_an_option_offers_are_the_values_it_takes():
    for row in options():
        for choice in row.choices() if row.choices else ():
            check_option(row.name, choice)
            check_option(row.name, choice, text=True)


# --- a row added at run time -----------------------------------------------------------


def _loud(value, text):
    if isinstance(value, bool):
        return value
    from olympus_jupyter.report.option_table import Rejected

    raise Rejected(type_error=True)


@pytest.fixture
def loud():
    row = register_option(
        Option(
            "loud",
            _loud,
            default=False,
            flags=("--loud",),
            takes="switch",
            frontends=set(FRONTENDS),
            accepts="True or False",
            help="say it louder",
        )
    )
    yield row
    unregister_option("loud")


def test_a_registered_option_is_offered_everywhere_at_once(loud, monkeypatch):
    assert OPTIONS["loud"] is loud
    assert "--loud" in build_parser().format_help()
    assert split_line("--loud f(x)")[0].loud is True
    assert ReportOptions().loud is False
    for command in ("report", "demo"):
        assert "loud" in actions(cli_command(command))
    assert "loud" in actions(build_parser())
    # inspect() takes it by keyword (not passed to the function), checked first.
    monkeypatch.setattr(inspection, "run_stages", lambda *a, **k: pytest.fail("staged"))
    with pytest.raises(OptionTypeError, match="loud must be True or False; got 'yes'"):
        olympus_inspect(layer, jnp.ones((4, 4)), jnp.ones((2, 4)), loud="yes")


def test_a_registered_option_is_gone_when_unregistered(loud):
    unregister_option("loud")
    try:
        assert "--loud" not in build_parser().format_help()
        assert "loud" not in ReportOptions().values()
    finally:
        register_option(loud)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(name="stages"), "its name 'stages' is taken by option 'stages'"),
        (
            dict(name="plat", keyword="platform"),
            "its keyword 'platform' is taken by option 'platforms'",
        ),
        (dict(name="new", flags=("--full",)), "its flag '--full' is taken by option 'full'"),
    ],
)
def test_a_row_that_clashes_is_refused(changes, message):
    row = Option(
        **{
            **dict(
                name="x",
                check=_loud,
                default=False,
                flags=("--x",),
                takes="switch",
                frontends={"magic"},
                accepts="True or False",
                help="x",
            ),
            **changes,
        }
    )
    with pytest.raises(OptionError, match=message):
        register_option(row)
    assert row.name not in OPTIONS or OPTIONS[row.name] is not row


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(frontends={"magic"}, flags=()), "needs its flags"),
        (dict(frontends={"widget"}), "unknown frontend 'widget'"),
        (dict(takes="many"), "takes='many'"),
        (dict(name="not a name"), "must be Python identifiers"),
        (dict(control=Control("x", "x", "x"), frontends={"magic"}), "add 'inspector'"),
    ],
)
def test_a_row_that_cannot_be_used_is_refused_when_declared(changes, message):
    fields = {
        **dict(
            name="x",
            check=_loud,
            flags=("--x",),
            frontends={"magic"},
            accepts="True or False",
            help="x",
        ),
        **changes,
    }
    with pytest.raises(OptionError, match=message):
        Option(**fields)


def test_a_control_the_inspector_does_not_draw_is_a_clear_error():
    register_option(
        Option(
            "glow",
            _loud,
            default=False,
            frontends={"inspector"},
            accepts="True or False",
            help="glow",
            control=Control("glow_box", "glow", "glow"),
        )
    )
    try:
        with pytest.raises(
            OptionError,
            match="option 'glow' asks for the Inspector's "
            "control 'glow_box', which it does not draw",
        ):
            quietly(lambda: Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4))))
    finally:
        unregister_option("glow")
