"""`weir-dump-module FILE`: what a module file holds, section by section, for people debugging the
compiler or a load failure: header and checksum, imports/exports with calling conventions,
functions with a disassembly, globals, rodata, executables and where each segment lies.

The file is fully verified first (`weir.format.module_file.deserialize_with_layout`, which also
says where each part lies); a bad file gets the loader's one-line error, exactly what the runtime
would say.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from weir.errors import ModuleFormatError, UsageError
from weir.format.image import ModuleImage
from weir.format.module_file import FileLayout, deserialize_with_layout
from weir.format.native_executable import FORMAT as NATIVE_FORMAT
from weir.format.native_executable import decode_native_executable
from weir.tools.cli import run_tool
from weir.tools.io.disassemble import function_lines
from weir.tools.io.flags import Flag, FlagParser

TOOL = "weir-dump-module"

PARSER = FlagParser(
    TOOL, "[flags] FILE",
    [Flag("summary", "bool", "Print function summaries without their instructions.",
          default=False)],
    positionals=(1, 1),
    description="Prints the sections of a weir module file (.wvm); FILE '-' reads stdin.",
)


def _segment_owners(image: ModuleImage) -> dict[int, str]:
    owners: dict[int, str] = {}
    for r in image.rodata:
        owners[r.segment] = f"rodata @{r.name}"
    for e in image.executables:
        for v in e.variants:
            owners[v.segment] = f"executable @{e.name} variant {v.target}"
    return owners


def dump(image: ModuleImage, layout: FileLayout, source: str, *, summary: bool = False) -> str:
    """The whole report as text."""
    size, area = layout.size, layout.area_offset
    out: list[str] = [
        f"module file: {source}",
        f"  size: {size} bytes",
        f"  format version: {layout.version}",
        f"  checksum: sha256 ok ({layout.digest.hex()[:16]}...)",
        f"  metadata: {layout.metadata_length} bytes at offset {layout.metadata_offset}",
        f"  segment area: offset {area}, {size - area} bytes",
        "",
        f"name: {image.name}",
        f"initializer: {('@' + image.initializer) if image.initializer else '(none)'}",
        f"devices ({len(image.devices)}): "
        + ", ".join(f"{d.name} ({d.kind})" for d in image.devices),
        f"dependencies ({len(image.dependencies)}): " + (", ".join(image.dependencies) or "(none)"),
        "",
        f"imports ({len(image.imports)}):",
    ]
    for i, imp in enumerate(image.imports):
        optional = "  optional" if imp.optional else ""
        out.append(f"  [{i}] @{imp.name}  cconv {imp.signature.cconv}  model {imp.model}{optional}")
    out += ["", f"exports ({len(image.exports)}):"]
    for i, exp in enumerate(image.exports):
        fn = image.functions[exp.function]
        out.append(f"  [{i}] @{exp.name} -> function {exp.function} (@{fn.name})  "
                   f"cconv {fn.signature.cconv}  model {exp.model}")
        out.extend(f"        {key} = {value}" for key, value in exp.reflection)
    out += ["", f"functions ({len(image.functions)}):"]
    for i, fn in enumerate(image.functions):
        count = sum(len(b.instructions) for b in fn.blocks)
        out.append(f"  [{i}] @{fn.name}  cconv {fn.signature.cconv}  registers {fn.num_registers}"
                   f"  blocks {len(fn.blocks)}  instructions {count}")
        if not summary:
            out.extend(function_lines(fn, image))
    out += ["", f"globals ({len(image.globals)}):"]
    for i, g in enumerate(image.globals):
        initial = "" if g.initial is None else f" = {g.initial!r}"
        out.append(f"  [{i}] @{g.name} : {g.type}{initial}")
    out += ["", f"rodata ({len(image.rodata)}):"]
    for i, r in enumerate(image.rodata):
        out.append(f"  [{i}] @{r.name}  {image.segments[r.segment].nbytes} bytes  "
                   f"segment {r.segment}  alignment {r.alignment}")
    out += ["", f"executables ({len(image.executables)}):"]
    for i, e in enumerate(image.executables):
        out.append(f"  [{i}] @{e.name}  entry points: " + (", ".join(e.entry_points) or "(none)"))
        for v in e.variants:
            out.append(f"        variant target {v.target}  format {v.format}  "
                       f"payload {image.segments[v.segment].nbytes} bytes  segment {v.segment}")
            if v.format == NATIVE_FORMAT:
                native = decode_native_executable(image.segments[v.segment])
                out.append(f"          cpu {native.cpu} ({native.triple}), needs "
                           f"{', '.join(native.features) or 'no extra features'}")
    owners = _segment_owners(image)
    out += ["", f"segments ({len(layout.segments)}):"]
    for i, (offset, length) in enumerate(layout.segments):
        owner = owners.get(i, "(unreferenced)")
        out.append(f"  [{i}] file offset {area + offset}  size {length}  {owner}")
    return "\n".join(out) + "\n"


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read '{path}': {error.strerror or error}") from None


def _body(argv: Sequence[str]) -> int:
    flags = PARSER.parse(argv)
    if flags.help_requested:
        sys.stdout.write(PARSER.help_text())
        return 0
    path = flags.positionals[0]
    data = _read(path)
    source = "<stdin>" if path == "-" else path
    try:
        image, layout = deserialize_with_layout(data)
    except ModuleFormatError as error:
        raise ModuleFormatError(f"{source}: {error}") from None
    sys.stdout.write(dump(image, layout, source, summary=flags.boolean("summary")))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (`weir-dump-module`); returns the exit code."""
    return run_tool(TOOL, lambda: _body(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
