"""Loads a module written in Python (a `NativeModule` subclass) from a `.py` file, as
`weir-run-module --module=python:path/to/file.py:ClassName` does:

    >>> from weir.runtime.vm.python_module_loader import load_python_module
    >>> module = load_python_module("python:my_ops.py:Doubler")        # doctest: +SKIP
    >>> context = Context(instance, devices=[device], modules=[module])  # doctest: +SKIP

The file is imported by path under a fresh, unique module name (each call imports it again; the
file's directory is not added to `sys.path`, and its `if __name__ == "__main__":` block does not
run), the class is looked up, checked to be a `NativeModule` subclass and instantiated with no
arguments. Every failure is one `LoadError` line that starts by naming the spec.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType, TracebackType

from weir.errors import LoadError
from weir.runtime.vm.native_module import NativeModule

PREFIX = "python:"
SPEC_FORM = "python:path/to/file.py:ClassName"

_counter = itertools.count()
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def split_spec(spec: str) -> tuple[str, str]:
    """`python:path/to/file.py:ClassName` (the `python:` prefix is optional here) ->
    (path, class name). The class name follows the last ':', so paths may contain ':'."""
    body = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    path, sep, class_name = body.rpartition(":")
    if not sep or not path or not class_name:
        missing = "':ClassName'" if not sep or not class_name else "the file path"
        raise LoadError(f"{_what(spec)}: expected {SPEC_FORM} ({missing} is missing)")
    if not _IDENTIFIER.match(class_name):
        raise LoadError(f"{_what(spec)}: expected {SPEC_FORM}; '{class_name}' is not a Python "
                        "class name")
    return path, class_name


def load_python_module(spec: str) -> NativeModule:
    """Imports the file named by `spec` (`python:path/to/file.py:ClassName`; the `python:`
    prefix may be left out) and returns an instance of its `ClassName`, a `NativeModule`
    subclass constructed with no arguments. Raises `LoadError` (one line naming `spec`) if the
    spec is malformed, the file is missing or not a `.py` file, importing it raises, the class
    is missing or not a `NativeModule` subclass, or constructing it raises."""
    path_text, class_name = split_spec(spec)
    what = _what(spec)
    path = Path(path_text)
    if path.suffix.lower() != ".py":
        raise LoadError(f"{what}: '{path_text}' is not a .py file (expected {SPEC_FORM})")
    if not path.exists():
        raise LoadError(f"{what}: no such file '{path_text}'")
    if not path.is_file():
        raise LoadError(f"{what}: '{path_text}' is not a file")
    resolved = path.resolve()
    py_module = _import_file(what, path_text, resolved)
    cls = getattr(py_module, class_name, None)
    if cls is None:
        defined = _native_module_classes(py_module)
        listing = (f"the NativeModule subclasses it defines: {', '.join(defined)}" if defined
                   else "it defines no NativeModule subclass")
        raise LoadError(f"{what}: '{path_text}' has no class '{class_name}'; {listing}")
    if not (isinstance(cls, type) and issubclass(cls, NativeModule)):
        kind = "is not" if isinstance(cls, type) else f"is {_describe(cls)}, not"
        raise LoadError(f"{what}: '{class_name}' {kind} a subclass of "
                        "weir.runtime.vm.native_module.NativeModule")
    return _instantiate(what, path_text, resolved, cls)


def _what(spec: str) -> str:
    return f"python module '{spec}'"


def _import_file(what: str, path_text: str, path: Path) -> ModuleType:
    name = f"weir_python_module_{next(_counter)}_{_safe_stem(path)}"
    module_spec = importlib.util.spec_from_file_location(name, str(path))
    if module_spec is None or module_spec.loader is None:  # pragma: no cover - .py always loads
        raise LoadError(f"{what}: cannot import '{path_text}'")
    py_module = importlib.util.module_from_spec(module_spec)
    # Registered before running, as `import` does: dataclasses, pickling and typing look it up.
    sys.modules[name] = py_module
    try:
        module_spec.loader.exec_module(py_module)
    except (Exception, SystemExit) as error:
        sys.modules.pop(name, None)
        raise LoadError(f"{what}: importing '{path_text}' raised "
                        f"{_describe_error(error, path, path_text)}") from error
    return py_module


def _instantiate(what: str, path_text: str, path: Path, cls: type[NativeModule]) -> NativeModule:
    try:
        module = cls()
    except (Exception, SystemExit) as error:
        hint = ""
        if isinstance(error, TypeError) and "__init__()" in str(error) and "argument" in str(error):
            hint = "; the class is constructed with no arguments"
        raise LoadError(f"{what}: {cls.__name__}() raised "
                        f"{_describe_error(error, path, path_text)}{hint}") from error
    try:
        module.name, module.exports  # noqa: B018 - set up by NativeModule.__init__
    except AttributeError:
        raise LoadError(f"{what}: {cls.__name__}.__init__ must call super().__init__()") from None
    return module


def _native_module_classes(py_module: ModuleType) -> list[str]:
    """The NativeModule subclasses defined in (not imported into) the file, in file order."""
    found = [cls for _, cls in inspect.getmembers(py_module, inspect.isclass)
             if issubclass(cls, NativeModule) and cls.__module__ == py_module.__name__]
    found.sort(key=lambda cls: _first_line(cls))
    return [cls.__name__ for cls in found]


def _first_line(cls: type) -> int:
    try:
        return inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return 0


def _describe(value: object) -> str:
    """`a function`, `a module`, `an int value`."""
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return "a function"
    if isinstance(value, ModuleType):
        return "a module"
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind} value"


def _describe_error(error: BaseException, path: Path, path_text: str) -> str:
    """`Type: message (at file.py:LINE)`, on one line; LINE is the last line of `path` on the
    traceback (or a SyntaxError's own line)."""
    if isinstance(error, SyntaxError) and error.filename and Path(error.filename) == path:
        message = error.msg
        line = error.lineno
    else:
        message = str(error)
        line = _line_in(error.__traceback__, path)
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    text = " ".join(text.split())
    return f"{text} (at {path_text}:{line})" if line else text


def _line_in(tb: TracebackType | None, path: Path) -> int | None:
    line = None
    for frame in traceback.extract_tb(tb):
        if frame.filename == str(path):
            line = frame.lineno
    return line


def _safe_stem(path: Path) -> str:
    return re.sub(r"\W", "_", path.stem) or "module"
