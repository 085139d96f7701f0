"""The shared flag parser and the one-line error wrapper every tool runs in."""

from __future__ import annotations

import pytest

from weir.errors import CompileError, InputError, UsageError
from weir.tools.cli import error_line, run_tool
from weir.tools.io.flags import Flag, FlagParser

PARSER = FlagParser("weir-test", "[flags] FILE", [
    Flag("input", "string", "An input.", repeated=True),
    Flag("function", "string", "A function."),
    Flag("output_max_element_count", "int", "Elements.", default=1024),
    Flag("threshold", "float", "A threshold.", default=0.5),
    Flag("print_statistics", "bool", "Stats.", default=False),
    Flag("output", "string", "Output file.", short="o"),
], positionals=(0, 1))


def test_equals_and_separate_values() -> None:
    flags = PARSER.parse(["--input=1", "--input", "2", "--function", "run", "--input=a=b"])
    assert flags.strings("input") == ["1", "2", "a=b"]
    assert flags.string("function") == "run"


def test_defaults() -> None:
    flags = PARSER.parse([])
    assert flags.strings("input") == []
    assert flags.string("function") is None
    assert flags.integer("output_max_element_count") == 1024
    assert flags.number("threshold") == 0.5
    assert flags.boolean("print_statistics") is False


def test_typed_values_and_dash_underscore_spellings() -> None:
    flags = PARSER.parse(["--output-max-element-count=5", "--threshold", "1e-3",
                          "--print_statistics"])
    assert flags.integer("output_max_element_count") == 5
    assert flags.number("threshold") == 0.001
    assert flags.boolean("print_statistics")
    assert PARSER.parse(["--print_statistics=false"]).boolean("print_statistics") is False


def test_short_flags() -> None:
    assert PARSER.parse(["-o=x.wvm"]).string("output") == "x.wvm"
    assert PARSER.parse(["-o", "x.wvm"]).string("output") == "x.wvm"
    assert PARSER.parse(["-ox.wvm"]).string("output") == "x.wvm"
    assert PARSER.parse(["-output=y"]).string("output") == "y"


def test_dash_values_and_positionals() -> None:
    flags = PARSER.parse(["--input", "-", "file.mlir"])
    assert flags.strings("input") == ["-"] and flags.positionals == ["file.mlir"]
    assert PARSER.parse(["-"]).positionals == ["-"]
    assert PARSER.parse(["--", "--input"]).positionals == ["--input"]


def test_flags_given_in_order_with_their_values() -> None:
    flags = PARSER.parse(["--print-statistics", "-o", "x", "--input=1", "--print_statistics=false"])
    assert flags.given == [("print_statistics", True), ("output", "x"), ("input", "1"),
                           ("print_statistics", False)]


def test_help() -> None:
    assert PARSER.parse(["--help"]).help_requested
    text = PARSER.help_text()
    assert text.startswith("usage: weir-test [flags] FILE")
    assert "--input=VALUE" in text and "(repeatable)" in text and "-o, --output" in text


@pytest.mark.parametrize("argv,message", [
    (["--x"], "unknown flag '--x'"),
    (["--inptu=1"], "unknown flag '--inptu' \\(did you mean '--input'\\?\\)"),
    (["--function"], "flag '--function' needs a value"),
    (["--output_max_element_count=many"], "needs an integer, not 'many'"),
    (["--threshold=x"], "needs a number, not 'x'"),
    (["--print_statistics=maybe"], "takes true or false, not 'maybe'"),
    (["a", "b"], "too many arguments"),
])
def test_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        PARSER.parse(argv)


def test_missing_positional() -> None:
    parser = FlagParser("t", "FILE", [], positionals=(1, 1))
    with pytest.raises(UsageError, match="missing argument; usage: t FILE"):
        parser.parse([])
    with pytest.raises(UsageError, match="unexpected argument 'x'"):
        FlagParser("t", "", []).parse(["x"])


def test_error_line() -> None:
    assert error_line("weir-x", "bad thing") == "weir-x: error: bad thing"
    assert error_line("weir-x", "a.mlir:3:7: error: oops") == "a.mlir:3:7: error: oops"
    assert error_line("weir-x", "first\n  second\n") == "weir-x: error: first; second"


def _raise(error: BaseException) -> int:
    raise error


@pytest.mark.parametrize("error,line", [
    (UsageError("unknown flag '--x'"), "weir-t: error: unknown flag '--x'"),
    (InputError("input 0: expected 4xf32, got 3xf32"),
     "weir-t: error: input 0: expected 4xf32, got 3xf32"),
    (CompileError("oops", "a.mlir", 3, 7), "a.mlir:3:7: error: oops"),
    (FileNotFoundError(2, "No such file or directory", "x.wvm"),
     "weir-t: error: 'x.wvm': No such file or directory"),
])
def test_run_tool_prints_one_line_and_exits_1(capsys, error: BaseException, line: str) -> None:  # type: ignore[no-untyped-def]
    assert run_tool("weir-t", lambda: _raise(error)) == 1
    captured = capsys.readouterr()
    assert captured.err == line + "\n"
    assert "Traceback" not in captured.err


def test_run_tool_interrupt_and_success(capsys) -> None:  # type: ignore[no-untyped-def]
    assert run_tool("weir-t", lambda: _raise(KeyboardInterrupt())) == 130
    assert capsys.readouterr().err == "weir-t: interrupted\n"
    assert run_tool("weir-t", lambda: 0) == 0


def test_a_bug_in_weir_is_still_one_line_and_names_itself(capsys) -> None:  # type: ignore[no-untyped-def]
    assert run_tool("weir-t", lambda: _raise(ZeroDivisionError("boom"))) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "internal error (ZeroDivisionError: boom)" in err and "bug in weir" in err
