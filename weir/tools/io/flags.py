"""An IREE-style command-line flag parser shared by weir's tools.

IREE's tools spell flags `--name=value`; weir also takes `--name value` for flags that need a
value, `-o=x`/`-o x` for short aliases, `-`/`_` interchangeably inside names (IREE uses `_`:
`--output_max_element_count`), bare `--flag`/`--flag=true|false` for booleans, repeated flags
for lists, and `--` to end flags. Anything unknown is a UsageError naming it, with a suggestion.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from weir.errors import UsageError

FlagKind = Literal["string", "int", "float", "bool"]
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


@dataclass(frozen=True)
class Flag:
    """One flag: `name` without dashes (`input`), its value kind, whether it may repeat."""

    name: str
    kind: FlagKind
    help: str
    repeated: bool = False
    default: object = None
    short: str | None = None  # e.g. "o" for `-o`
    metavar: str = "VALUE"

    @property
    def key(self) -> str:
        return _normalize(self.name)


@dataclass
class ParsedFlags:
    """Flag values by normalized name (repeated flags as lists), positionals, and `--help`."""

    values: dict[str, object]
    positionals: list[str] = field(default_factory=list)
    help_requested: bool = False
    # Each flag given, as (`Flag.name`, its value there), in command-line order, for tools where
    # order matters: weir-opt runs its passes in the order they are named.
    given: list[tuple[str, object]] = field(default_factory=list)

    def get(self, name: str) -> object:
        return self.values[_normalize(name)]

    def string(self, name: str) -> str | None:
        value = self.get(name)
        return value if isinstance(value, str) else None

    def strings(self, name: str) -> list[str]:
        value = self.get(name)
        return list(value) if isinstance(value, list) else []

    def integer(self, name: str) -> int:
        value = self.get(name)
        if not isinstance(value, int):
            raise TypeError(f"flag --{name} is not an int flag")
        return value

    def number(self, name: str) -> float:
        value = self.get(name)
        if not isinstance(value, (int, float)):
            raise TypeError(f"flag --{name} is not a float flag")
        return float(value)

    def boolean(self, name: str) -> bool:
        return bool(self.get(name))


def _normalize(name: str) -> str:
    return name.replace("-", "_")


class FlagParser:
    """Parses argv against a fixed list of flags; `--help` is always understood."""

    def __init__(self, tool: str, usage: str, flags: Sequence[Flag], *,
                 positionals: tuple[int, int] = (0, 0), description: str = "") -> None:
        self.tool = tool
        self.usage = usage
        self.description = description
        self.flags = tuple(flags)
        self.positionals = positionals  # (fewest, most) positional arguments
        self._by_key = {f.key: f for f in self.flags}
        self._by_short = {f.short: f for f in self.flags if f.short}

    def help_text(self) -> str:
        lines = [f"usage: {self.tool} {self.usage}"]
        if self.description:
            lines += ["", self.description]
        lines += ["", "flags:"]
        for flag in self.flags:
            spelling = f"--{flag.name}" if flag.kind == "bool" else f"--{flag.name}={flag.metavar}"
            if flag.short:
                spelling = f"-{flag.short}, {spelling}"
            extra = " (repeatable)" if flag.repeated else ""
            if flag.default not in (None, False) and not flag.repeated:
                extra += f" (default: {flag.default})"
            lines.append(f"  {spelling}")
            lines.append(f"      {flag.help}{extra}")
        lines.append("  --help")
        lines.append("      Print this help and exit.")
        return "\n".join(lines) + "\n"

    def parse(self, argv: Sequence[str]) -> ParsedFlags:
        values: dict[str, object] = {
            f.key: ([] if f.repeated else f.default) for f in self.flags
        }
        parsed = ParsedFlags(values)
        args = list(argv)
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                parsed.positionals.extend(args[i:])
                break
            if arg in ("--help", "-help", "-h", "--helpfull"):
                parsed.help_requested = True
                continue
            if not arg.startswith("-") or arg == "-":
                parsed.positionals.append(arg)
                continue
            flag, spelled, inline = self._lookup(arg)
            if inline is None and flag.kind != "bool":
                if i >= len(args):
                    raise UsageError(f"flag '{spelled}' needs a value ({spelled}=...)")
                inline = args[i]
                i += 1
            value = self._convert(flag, spelled, inline)
            parsed.given.append((flag.name, value))
            if flag.repeated:
                values[flag.key].append(value)  # type: ignore[attr-defined]
            else:
                values[flag.key] = value
        low, high = self.positionals
        if not parsed.help_requested:
            if len(parsed.positionals) > high:
                extra = parsed.positionals[high]
                raise UsageError(f"unexpected argument '{extra}'" if high == 0 else
                                 f"too many arguments (from '{extra}'); usage: {self.tool} "
                                 f"{self.usage}")
            if len(parsed.positionals) < low:
                raise UsageError(f"missing argument; usage: {self.tool} {self.usage}")
        return parsed

    def _lookup(self, arg: str) -> tuple[Flag, str, str | None]:
        """The flag an argument names, how it was spelled, and its `=value` if any."""
        body, eq, inline = arg.partition("=")
        value = inline if eq else None
        if body.startswith("--"):
            flag = self._by_key.get(_normalize(body[2:]))
        else:
            name = body[1:]
            flag = self._by_short.get(name) or self._by_key.get(_normalize(name))
            if flag is None and name[:1] in self._by_short and not eq and len(name) > 1:
                # `-ofile`: a short flag glued to its value.
                flag, value = self._by_short[name[0]], name[1:]
                body = "-" + name[0]
        if flag is None:
            raise UsageError(self._unknown(body))
        return flag, body, value

    def _unknown(self, spelled: str) -> str:
        names = [f"--{f.name}" for f in self.flags] + ["--help"]
        close = difflib.get_close_matches("--" + spelled.lstrip("-"), names, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f"; see '{self.tool} --help'"
        return f"unknown flag '{spelled}'{hint}"

    @staticmethod
    def _convert(flag: Flag, spelled: str, text: str | None) -> object:
        if flag.kind == "bool":
            if text is None or text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
            raise UsageError(f"flag '{spelled}' takes true or false, not '{text}'")
        assert text is not None
        if flag.kind == "int":
            try:
                return int(text, 10)
            except ValueError:
                raise UsageError(f"flag '{spelled}' needs an integer, not '{text}'") from None
        if flag.kind == "float":
            try:
                return float(text)
            except ValueError:
                raise UsageError(f"flag '{spelled}' needs a number, not '{text}'") from None
        return text
