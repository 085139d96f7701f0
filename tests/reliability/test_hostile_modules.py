"""The module file is read, never executed (issue 7, item 7): hand-crafted module files with a
valid checksum around hostile content (docs/threat_model.md). Each is rejected with one line
(ModuleFormatError, LoadError) or runs harmlessly; none reaches `compile`/`exec` unverified,
none makes weir allocate without bound, none hangs a call that has a deadline."""

from __future__ import annotations

import io
import json
import keyword
import re
import tokenize
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from fuzz_corpus import CONTROL_FLOW_PROGRAM, CONSTANT_PROGRAM, SAMPLES
from fuzz_layout import (
    body_with_metadata,
    body_with_segment,
    compact,
    join_descriptor,
    parse_layout,
    reseal,
    split_descriptor,
)

import weir.api as weir
from weir.errors import DeadlineExceeded, LoadError, ModuleFormatError, WeirError
from weir.format.image import Block, ExportDef, FunctionDef, ModuleImage, Signature
from weir.format.module_file import deserialize
from weir.format.function_verify import MAX_BLOCKS
from weir.format.vm_isa import Binary, Branch, CondBranch, Const, Return
from weir.runtime.api import BytecodeModule, Context, Instance, load_module_bytes
from weir.runtime.hal.deadline import deadline
from weir.runtime.vm import translator

ROOT = Path(__file__).resolve().parents[2]
SIMPLE_MUL = (SAMPLES / "simple_mul" / "simple_mul.mlir").read_text()
A = np.array([1, 2, 3, 4], np.float32)
B = np.array([5, 6, 7, 8], np.float32)

_compiled: dict[tuple[str, str], bytes] = {}


def compiled(source: str, target: str = "reference", stem: str = "simple_mul") -> bytes:
    if (source, target) not in _compiled:
        options = weir.CompilerOptions(target_backends=(target,))
        _compiled[(source, target)] = weir.compile_string(source, f"{stem}.mlir", options)
    return _compiled[(source, target)]


def with_metadata(data: bytes, change: Callable[[dict[str, Any]], Any]) -> bytes:
    """The file with its metadata changed and resealed (length and checksum valid)."""
    layout = parse_layout(data)
    meta = json.loads(compact(layout.metadata))
    change(meta)
    return reseal(body_with_metadata(data, layout, compact(meta)))


def with_metadata_text(data: bytes, text: bytes) -> bytes:
    return reseal(body_with_metadata(data, parse_layout(data), text))


def with_payload(data: bytes, change: Callable[[Any], Any]) -> bytes:
    """The file with the JSON of its first executable payload changed (a reference kernel, or
    an llvm-cpu descriptor with its object code left as it was)."""
    layout = parse_layout(data)
    index = next(k for k, s in enumerate(layout.segments) if s.kind in ("reference", "llvm-cpu"))
    seg = layout.segments[index]
    payload = data[seg.start:seg.end]
    if seg.kind == "llvm-cpu":
        text, objects = split_descriptor(payload)
        doc = json.loads(text)
        new = change(doc)
        raw = new if isinstance(new, bytes) else compact(doc)
        return reseal(body_with_segment(data, layout, index, join_descriptor(raw, objects)))
    doc = json.loads(payload)
    new = change(doc)
    raw = new if isinstance(new, bytes) else compact(doc)
    return reseal(body_with_segment(data, layout, index, raw))


def run(data: bytes, function: str = "simple_mul", *args: Any,
        timeout_s: float | None = 10.0) -> Any:
    instance = Instance()
    with deadline(timeout_s, "hostile module"):
        context = Context(instance, devices=[instance.create_device("local-sync")],
                          modules=[load_module_bytes(data)])
        return context.lookup_function(function)(*(args or (A, B)))


def rejected(data: bytes, match: str, *args: Any) -> str:
    with pytest.raises((ModuleFormatError, LoadError), match=match) as info:
        run(data, "simple_mul", *args)
    message = str(info.value)
    assert message and "\n" not in message
    return message


def harmless(data: bytes, constant_changed: bool = False) -> str:
    """Loads and runs to the unmutated results (any results when a constant's value changed:
    the program computes something else), or stops with one clear line."""
    try:
        out = run(data, "simple_mul")
    except WeirError as e:
        assert str(e) and "\n" not in str(e), repr(str(e))
        return type(e).__name__
    if not constant_changed:
        np.testing.assert_array_equal(out, A * B)
    return "ran"


def _instructions(meta: dict[str, Any]) -> list[list[Any]]:
    return meta["functions"][0]["blocks"][0]["instructions"]  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------------- names


CODE_NAMES = ["__import__('os').system('touch PWNED')", "x) or (lambda: open('PWNED', 'w'))() #",
              "a'b\"c", "blk", "r1", "k0", "f0", "H_fail", "__make", "tick"]


@pytest.mark.parametrize("name", CODE_NAMES)
def test_names_holding_python_code_are_only_names(name: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Function, export and initializer names are looked up, never spliced into code."""
    monkeypatch.chdir(tmp_path)
    data = compiled(SIMPLE_MUL)

    def rename(meta: dict[str, Any]) -> None:
        meta["functions"][0]["name"] = name
        meta["exports"][0]["name"] = name
        meta["functions"][1]["name"] = name + "_init"
        meta["initializer"] = name + "_init"

    hostile = with_metadata(data, rename)
    module = load_module_bytes(hostile)
    # Names never reach the generated source: it is the unrenamed module's, character for character.
    assert module.translated.source == load_module_bytes(data).translated.source
    instance = Instance()
    context = Context(instance, devices=[instance.create_device("local-sync")], modules=[module])
    np.testing.assert_array_equal(context.lookup(f"simple_mul.{name}")(A, B), A * B)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("path", [
    ("name",), ("functions", 0, "name"), ("exports", 0, "name"), ("imports", 0, "name"),
    ("globals", 0, "name"), ("executables", 0, "name"), ("executables", 0, "entry_points", 0),
    ("devices", 0, "name"), ("dependencies",),
])
@pytest.mark.parametrize("text", ["multi\nline", "tab\there", "nul\0", "bell\a", "line\u2028sep"])
def test_names_with_control_characters_are_one_line_errors(path: tuple[Any, ...],
                                                           text: str) -> None:
    def change(meta: dict[str, Any]) -> None:
        target = meta
        for key in path[:-1]:
            target = target[key]
        if path == ("dependencies",):
            meta["dependencies"] = [text]
        else:
            target[path[-1]] = text

    rejected(with_metadata(compiled(SIMPLE_MUL), change), "unprintable|not a non-empty printable")


def test_constant_strings_with_control_characters_are_refused() -> None:
    """Input names and element types reach messages (an input of the wrong shape names it)."""
    def change(meta: dict[str, Any]) -> None:
        for ins in _instructions(meta):
            if ins[0] == "const" and ins[2] == "input0":
                ins[2] = "input0\nTraceback (most recent call last):"

    rejected(with_metadata(compiled(SIMPLE_MUL), change), "unprintable characters")


# ----------------------------------------------------------------------------------- sizes


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(meta: dict[str, Any]) -> None:
        target = meta
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


@pytest.mark.parametrize("change, message", [
    (_set(("functions", 0, "blocks", 0, "instructions", 0, 1), 10**12), "out of range"),
    (_set(("functions", 0, "blocks", 0, "instructions", 0, 1), 2**64), "out of range"),
    (_set(("functions", 0, "num_registers"), 10**12), "num_registers .* out of range"),
    (_set(("functions", 0, "num_registers"), -1), "below 0"),
    (_set(("exports", 0, "function"), 10**12), "function index .* out of range"),
    (_set(("executables", 0, "variants", 0, "segment"), 10**12), "segment .* out of range"),
    (_set(("segments", 0), [0, 10**12]), "truncated module file: segments\\[0\\] ends at"),
    (_set(("segments", 0), [-64, 16]), "non-negative ints"),
    (_set(("segments", 0), [1 << 70, 16]), "non-negative ints|out of range|truncated"),
    (lambda meta: meta["segments"].append(meta["segments"][0]),
     "segments\\[1\\]: not used by any rodata or executable"),
])
def test_huge_counts_indices_and_bad_segments(change: Callable[[dict[str, Any]], None],
                                              message: str) -> None:
    rejected(with_metadata(compiled(SIMPLE_MUL), change), message)


def test_too_many_blocks_is_refused_before_translation() -> None:
    block = {"params": [], "instructions": [["return", [0]]]}

    def change(meta: dict[str, Any]) -> None:
        meta["functions"][0]["blocks"].extend([block] * MAX_BLOCKS)

    rejected(with_metadata(compiled(SIMPLE_MUL), change), f"blocks \\(at most {MAX_BLOCKS}\\)")


def test_registers_times_blocks_beyond_the_verifier_bound_is_refused() -> None:
    """The definite-assignment sets would cost blocks x registers bits: bounded, not allocated."""
    def change(meta: dict[str, Any]) -> None:
        fn = meta["functions"][0]
        fn["num_registers"] = 1 << 20
        fn["blocks"][0]["instructions"][-1:-1] = [["branch", 1, []]]
        tail = fn["blocks"][0]["instructions"].pop()
        fn["blocks"] += [{"params": [], "instructions": [["branch", k + 2, []]]}
                         for k in range(299)] + [{"params": [], "instructions": [tail]}]

    rejected(with_metadata(compiled(SIMPLE_MUL), change), "too large to verify")


def test_huge_allocation_sizes_are_a_fault_not_an_allocation() -> None:
    data = compiled(SIMPLE_MUL)
    meta = parse_layout(data).metadata
    size_reg = next(ins[3][1] for ins in _instructions(meta)
                    if ins[0] == "call" and ins[2] == "hal.allocator.allocate")

    def change(meta: dict[str, Any]) -> None:
        for ins in _instructions(meta):
            if ins[0] == "const" and ins[1] == size_reg:
                ins[2] = 2**62

    with pytest.raises(WeirError, match="Unable to allocate|cannot allocate"):
        run(with_metadata(data, change))


# ----------------------------------------------------------------------------------- JSON


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_deeply_nested_json_is_one_error_everywhere() -> None:
    data = compiled(SIMPLE_MUL)
    rejected(with_metadata_text(data, _nested(200_000)), "not valid JSON")
    rejected(with_metadata_text(data, b'{"name": ' + _nested(200_000) + b"}"), "not valid JSON")
    rejected(with_payload(data, lambda doc: _nested(200_000)), "not valid JSON")
    native = compiled(SIMPLE_MUL, "llvm-cpu")
    rejected(with_payload(native, lambda doc: _nested(200_000)), "not JSON")


def test_integers_too_long_for_python_are_one_error() -> None:
    """json.loads raises ValueError (not JSONDecodeError) for integers over 4,300 digits."""
    data = compiled(SIMPLE_MUL)
    rejected(with_metadata_text(data, b'{"name": ' + b"9" * 5000 + b"}"), "not valid JSON")
    rejected(with_payload(data, lambda doc: b'{"format": ' + b"9" * 5000 + b"}"), "not valid JSON")
    rejected(with_payload(compiled(SIMPLE_MUL, "llvm-cpu"),
                          lambda doc: b'{"triple": ' + b"9" * 5000 + b"}"), "not JSON")


def _leaves(tree: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(tree, dict):
        return [p for k, v in tree.items() for p in _leaves(v, (*path, k))] or [path]
    if isinstance(tree, list):
        return [p for i, v in enumerate(tree) for p in _leaves(v, (*path, i))] or [path]
    return [path]


WRONG_TYPES = [None, True, -1, 2**63, 1.5, "x", [], {}]


def _every_wrong_type(doc: Any) -> list[tuple[tuple[Any, ...], Any]]:
    cases = []
    for path in _leaves(doc):
        leaf = doc
        for key in path:
            leaf = leaf[key]
        for value in WRONG_TYPES:
            if type(value) is not type(leaf):
                cases.append((path, value))
    return cases


def _replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    if path:
        target[path[-1]] = value
        return doc
    return value


def test_wrong_types_in_every_metadata_field() -> None:
    """Every leaf of the metadata, replaced by a value of each other JSON type."""
    data = compiled(SIMPLE_MUL)
    layout = parse_layout(data)
    outcomes: dict[str, int] = {}
    for path, value in _every_wrong_type(layout.metadata):
        text = compact(_replaced(layout.metadata, path, value))
        constant = len(path) == 7 and path[-1] == 2 and path[1] == 0 and \
            _instructions(layout.metadata)[path[5]][0] == "const"
        outcome = harmless(reseal(body_with_metadata(data, layout, text)), constant)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes.get("ModuleFormatError", 0) > 0.9 * sum(outcomes.values()), outcomes


@pytest.mark.parametrize("target", ["reference", "llvm-cpu"])
def test_wrong_types_in_every_payload_field(target: str) -> None:
    """Every leaf of a reference kernel or an llvm-cpu descriptor, each other JSON type."""
    data = compiled(SIMPLE_MUL, target)
    layout = parse_layout(data)
    payload = data[layout.segments[0].start:layout.segments[0].end]
    doc = json.loads(split_descriptor(payload)[0] if target == "llvm-cpu" else payload)
    for path, value in _every_wrong_type(doc):
        hostile = with_payload(data, lambda d: compact(_replaced(doc, path, value)))
        with pytest.raises(ModuleFormatError) as info:
            run(hostile)
        assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------------- VM code


def test_branch_to_a_block_that_does_not_exist() -> None:
    data = with_metadata(compiled(SIMPLE_MUL),
                         lambda m: _instructions(m).__setitem__(-1, ["branch", 7, []]))
    rejected(data, "branch to block 7 out of range")


def test_reading_a_register_never_written() -> None:
    def change(meta: dict[str, Any]) -> None:
        fn = meta["functions"][0]
        fn["num_registers"] += 1
        _instructions(meta)[-1] = ["return", [fn["num_registers"] - 1]]

    rejected(with_metadata(compiled(SIMPLE_MUL), change), "reads register .* before it is written")


def test_writing_a_register_twice() -> None:
    def change(meta: dict[str, Any]) -> None:
        consts = [ins for ins in _instructions(meta) if ins[0] == "const"]
        consts[1][1] = consts[0][1]

    rejected(with_metadata(compiled(SIMPLE_MUL), change), "already written by")


def test_a_float_where_a_byte_offset_goes() -> None:
    def change(meta: dict[str, Any]) -> None:
        create = next(ins for ins in _instructions(meta)
                      if ins[0] == "call" and ins[2] == "hal.buffer_view.create")
        for ins in _instructions(meta):
            if ins[0] == "const" and ins[1] == create[3][1]:
                ins[2] = 0.0

    rejected(with_metadata(compiled(SIMPLE_MUL), change),
             "argument 1 of 'hal.buffer_view.create' must be an integer")


def test_a_loop_that_never_ends_stops_at_the_deadline() -> None:
    """A host loop with its step made 0 ends with DeadlineExceeded naming the function."""
    data = compiled(CONTROL_FLOW_PROGRAM, stem="control")

    def change(meta: dict[str, Any]) -> None:
        for ins in _instructions(meta):
            if ins[0] == "const" and ins[2] == 1:
                ins[2] = 0

    with pytest.raises(DeadlineExceeded, match="running function 'loop' of module 'control'"):
        run(with_metadata(data, change), "loop", np.ones(8, np.float32), 3, timeout_s=0.0)


def test_a_hand_written_infinite_loop_stops_at_the_deadline() -> None:
    spin = FunctionDef("spin", Signature.parse("0_"), 2, (
        Block((), (Const(0, 0), Branch(1, (0,)))),
        Block((1,), (Branch(1, (1,)),)),
    ))
    module = BytecodeModule(ModuleImage("m", (), (), (ExportDef("spin", 0),), (spin,),
                                        devices=()))
    instance = Instance()
    function = Context(instance, modules=[module]).lookup("m.spin")
    with deadline(0.0, "spin call"), pytest.raises(DeadlineExceeded, match="'spin' of module 'm'"):
        function()


# ----------------------------------------------------------------------------------- exec


def _allowed_name(name: str) -> bool:
    return bool(keyword.iskeyword(name) or re.fullmatch(r"[rkcf]\d+|H_[a-z]+", name)
                or name in {"blk", "tick", "G", "R", "K", "C", "__make", "float", "None"})


def _check_source(source: str) -> None:
    """Generated code holds only the instruction set's own text: no string literal, no name
    that is not a register, table entry, function, dispatcher variable or helper."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        assert tok.type != tokenize.STRING, tok
        if tok.type == tokenize.NAME:
            assert _allowed_name(tok.string), tok


@pytest.mark.parametrize("source, stem", [(SIMPLE_MUL, "simple_mul"),
                                          (CONTROL_FLOW_PROGRAM, "control"),
                                          (CONSTANT_PROGRAM, "constant")])
def test_generated_code_holds_no_text_from_the_file(source: str, stem: str) -> None:
    _check_source(load_module_bytes(compiled(source, stem=stem)).translated.source)
    hostile = with_metadata(compiled(SIMPLE_MUL), _set(("functions", 0, "name"), CODE_NAMES[0]))
    _check_source(load_module_bytes(hostile).translated.source)


def test_translate_module_verifies_before_it_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """An image that never went through `deserialize` (built in memory, handed straight to the
    translator) is verified before any source is compiled."""
    compiled_sources: list[str] = []
    real_compile = compile

    def spy(source: str, *args: Any) -> Any:
        compiled_sources.append(source)
        return real_compile(source, *args)

    monkeypatch.setattr(translator, "compile", spy, raising=False)
    bad = FunctionDef("f", Signature.parse("0_I"), 2, (
        Block((), (Const(0, 1), Binary(1, "add", 0, 5), Return((1,)))),))
    image = ModuleImage("m", (), (), (ExportDef("f", 0),), (bad,))
    with pytest.raises(ModuleFormatError, match="register 5 out of range"):
        translator.translate_module(image)
    with pytest.raises(ModuleFormatError, match="register 5 out of range"):
        BytecodeModule(image)
    assert compiled_sources == []
    good = FunctionDef("f", Signature.parse("0_I"), 2, (
        Block((), (Const(0, 1), CondBranch(0, 1, (), 1, ()))),
        Block((), (Binary(1, "add", 0, 0), Return((1,)))),))
    translator.translate_module(ModuleImage("m", (), (), (ExportDef("f", 0),), (good,)))
    assert len(compiled_sources) == 1


# The only places in the runtime and the format that generate or run code, and why each is safe.
CODE_SITES = {
    ("weir/runtime/vm/translator.py", "compile"): "source from verified integers (tested above)",
    ("weir/runtime/vm/translator.py", "exec"): "runs what translator.compile built",
    ("weir/runtime/vm/native_module.py", "compile"): "call wrappers from two integers (arity)",
    ("weir/runtime/vm/native_module.py", "exec"): "runs those wrappers",
    ("weir/runtime/executables/llvm_cpu.py", "parse_assembly"): "an empty LLVM module, no text",
    ("weir/runtime/jit.py", "parse_assembly"): "the replay executors weir builds "
                                                            "itself, no text",
    ("weir/runtime/vm/python_module_loader.py", "importlib"): "a Python file the user names, "
                                                              "never one from a module file",
}


def test_every_code_generation_site_is_known() -> None:
    found = set()
    pattern = re.compile(r"\b(exec|eval|compile|parse_assembly|importlib)\b\s*[.(]")
    for folder in ("weir/runtime", "weir/format"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text()
            for line in text.splitlines():
                if line.lstrip().startswith(("#", "import", "from")) or "re.compile" in line:
                    continue
                for match in pattern.finditer(line):
                    found.add((str(path.relative_to(ROOT)), match.group(1)))
    assert found == set(CODE_SITES)


def test_every_rejection_above_left_the_unmutated_module_working() -> None:
    """The hostile modules were all built from this file; it still loads and runs."""
    np.testing.assert_array_equal(run(compiled(SIMPLE_MUL)), A * B)
    assert deserialize(compiled(SIMPLE_MUL)).name == "simple_mul"
