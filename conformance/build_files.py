"""Reads the BUILD.bazel file of an IREE e2e folder: which files IREE's own build runs on which
backend and driver, and with which compiler flags.

BUILD files are Starlark, whose syntax is a subset of Python's, so Python's `ast` parses them and
a small evaluator walks the few constructs these files use: string and list literals, `+`, `%`,
list comprehensions, conditional expressions, comparisons and `enforce_glob`. Nothing is
executed. Any other construct is a BuildFileError naming the file and line, so that a new
construct upstream is noticed instead of being misread into a wrong list of files.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# The rules that make `check` tests; the second takes (backend, driver) pairs.
SINGLE_BACKEND_RULE = "iree_check_single_backend_test_suite"
MULTI_BACKEND_RULE = "iree_check_test_suite"
LIT_RULE = "iree_lit_test_suite"


class BuildFileError(Exception):
    """A BUILD file this reader does not understand, located as `path:line`."""


@dataclass(frozen=True)
class Suite:
    """One test target of IREE's build. `kind` is "check" (compiled, then run by
    iree-check-module on `driver`; no driver: compiled only) or "lit" (a lit test)."""

    name: str
    kind: str
    srcs: tuple[str, ...]
    backend: str | None
    driver: str | None
    compiler_flags: tuple[str, ...]
    runner_args: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class BuildFile:
    """The suites of one folder's BUILD.bazel, in file order."""

    path: Path
    suites: tuple[Suite, ...]

    def check_suites(self, filename: str, backend: str) -> list[Suite]:
        """The check suites that compile `filename` for `backend`, in file order."""
        return [s for s in self.suites
                if s.kind == "check" and s.backend == backend and filename in s.srcs]

    def lit_suites(self, filename: str) -> list[Suite]:
        return [s for s in self.suites if s.kind == "lit" and filename in s.srcs]

    def files_run_on(self, backend: str) -> set[str]:
        """Files some check suite runs (not only compiles) on `backend`."""
        return {f for s in self.suites if s.kind == "check" and s.backend == backend
                and s.driver is not None for f in s.srcs}


def read_build_file(path: Path) -> BuildFile:
    """Parses and evaluates `path`; raises BuildFileError for anything outside the subset."""
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as error:
        raise BuildFileError(f"{path}:{error.lineno}: not Starlark: {error.msg}") from None
    evaluator = _Evaluator(path)
    evaluator.run(tree)
    return BuildFile(path, tuple(evaluator.suites))


def file_of_label(label: str) -> str:
    """`//tests/e2e/math:math_ops_llvm-cpu.mlir` and `:x.mlir` name files of this folder."""
    return label.rsplit(":", 1)[-1] if ":" in label else label


Scope = dict[str, object]


class _Evaluator:
    """Evaluates the statements of one BUILD file, collecting the test suites its rules make."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.globals: Scope = {}
        self.suites: list[Suite] = []
        self._calls: dict[str, Callable[[ast.Call, Scope], object]] = {
            SINGLE_BACKEND_RULE: self._single_backend_rule,
            MULTI_BACKEND_RULE: self._multi_backend_rule,
            LIT_RULE: self._lit_rule,
            "enforce_glob": self._enforce_glob,
        }

    def error(self, node: ast.AST, message: str) -> BuildFileError:
        return BuildFileError(f"{self.path}:{getattr(node, 'lineno', 0)}: {message}")

    def run(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                self.globals[stmt.targets[0].id] = self.eval(stmt.value, self.globals)
            elif isinstance(stmt, ast.Expr):
                self.eval(stmt.value, self.globals)
            else:
                raise self.error(stmt, f"unsupported statement ({type(stmt).__name__})")

    def eval(self, node: ast.expr, scope: Scope) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List):
            return [self.eval(e, scope) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.eval(e, scope) for e in node.elts)
        if isinstance(node, ast.Name):
            if node.id not in scope:
                raise self.error(node, f"'{node.id}' is not defined")
            return scope[node.id]
        if isinstance(node, ast.BinOp):
            return self._binop(node, scope)
        if isinstance(node, ast.IfExp):
            test = self.eval(node.test, scope)
            return self.eval(node.body if test else node.orelse, scope)
        if isinstance(node, ast.Compare):
            return self._compare(node, scope)
        if isinstance(node, ast.ListComp):
            return self._comprehension(node, scope)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        raise self.error(node, f"unsupported expression ({type(node).__name__})")

    def _binop(self, node: ast.BinOp, scope: Scope) -> object:
        left, right = self.eval(node.left, scope), self.eval(node.right, scope)
        if isinstance(node.op, ast.Add) and type(left) is type(right) \
                and isinstance(left, (str, list, tuple)):
            return left + right  # type: ignore[operator]
        if isinstance(node.op, ast.Mod) and isinstance(left, str):
            try:
                return left % right
            except (TypeError, ValueError) as error:
                raise self.error(node, f"bad string format: {error}") from None
        raise self.error(node, f"unsupported operation {type(node.op).__name__} on "
                               f"{type(left).__name__} and {type(right).__name__}")

    def _compare(self, node: ast.Compare, scope: Scope) -> bool:
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons are not supported")
        left, right = self.eval(node.left, scope), self.eval(node.comparators[0], scope)
        op = node.ops[0]
        if isinstance(op, ast.Eq):
            return left == right
        if isinstance(op, ast.NotEq):
            return left != right
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (list, tuple, str)):
            return (left in right) == isinstance(op, ast.In)
        raise self.error(node, f"unsupported comparison ({type(op).__name__})")

    def _comprehension(self, node: ast.ListComp, scope: Scope) -> list[object]:
        results: list[object] = []

        def loop(index: int, inner: Scope) -> None:
            if index == len(node.generators):
                results.append(self.eval(node.elt, inner))
                return
            gen = node.generators[index]
            iterable = self.eval(gen.iter, inner)
            if not isinstance(iterable, (list, tuple)):
                raise self.error(gen.iter, "a comprehension must iterate over a list")
            for item in iterable:
                bound = dict(inner)
                self._bind(gen.target, item, bound)
                if all(self.eval(cond, bound) for cond in gen.ifs):
                    loop(index + 1, bound)

        loop(0, dict(scope))
        return results

    def _bind(self, target: ast.expr, value: object, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(value, (list, tuple)) \
                and len(target.elts) == len(value):
            for t, v in zip(target.elts, value):
                self._bind(t, v, scope)
        else:
            raise self.error(target, "unsupported comprehension target")

    def _call(self, node: ast.Call, scope: Scope) -> object:
        if not isinstance(node.func, ast.Name):
            raise self.error(node, "only calls of plain names are supported")
        handler = self._calls.get(node.func.id)
        # load(), package(), test_suite(), iree_genrule()...: nothing IREE runs comes from them,
        # and their arguments are not evaluated.
        return handler(node, scope) if handler is not None else None

    def _kwargs(self, node: ast.Call, scope: Scope) -> dict[str, object]:
        if node.args:
            raise self.error(node, f"{_name(node)}: positional arguments are not supported")
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.error(node, f"{_name(node)}: **kwargs is not supported")
            kwargs[keyword.arg] = self.eval(keyword.value, scope)
        return kwargs

    def _strings(self, node: ast.Call, kwargs: dict[str, object], key: str) -> tuple[str, ...]:
        value = kwargs.get(key, [])
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise self.error(node, f"{_name(node)}: '{key}' must be a list of strings")
        return tuple(value)  # type: ignore[arg-type]

    def _string(self, node: ast.Call, kwargs: dict[str, object], key: str) -> str | None:
        value = kwargs.get(key)
        if value is not None and not isinstance(value, str):
            raise self.error(node, f"{_name(node)}: '{key}' must be a string")
        return value

    def _suite(self, node: ast.Call, kwargs: dict[str, object], name: str,
               backend: str | None, driver: str | None, kind: str = "check") -> Suite:
        return Suite(name=name, kind=kind,
                     srcs=tuple(file_of_label(s) for s in self._strings(node, kwargs, "srcs")),
                     backend=backend, driver=driver,
                     compiler_flags=self._strings(node, kwargs, "compiler_flags"),
                     runner_args=self._strings(node, kwargs, "runner_args"),
                     line=node.lineno)

    def _single_backend_rule(self, node: ast.Call, scope: Scope) -> None:
        kwargs = self._kwargs(node, scope)
        backend = self._string(node, kwargs, "target_backend")
        if backend is None:
            raise self.error(node, f"{_name(node)}: no target_backend")
        self.suites.append(self._suite(node, kwargs, self._string(node, kwargs, "name") or "",
                                       backend, self._string(node, kwargs, "driver")))

    def _multi_backend_rule(self, node: ast.Call, scope: Scope) -> None:
        kwargs = self._kwargs(node, scope)
        pairs = kwargs.get("target_backends_and_drivers")
        if not isinstance(pairs, (list, tuple)) or not all(
                isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, str) for x in p)
                for p in pairs):
            raise self.error(node, f"{_name(node)}: 'target_backends_and_drivers' must be a "
                                   "list of (backend, driver) pairs")
        name = self._string(node, kwargs, "name") or ""
        for backend, driver in pairs:
            self.suites.append(self._suite(node, kwargs, f"{name}_{backend}_{driver}",
                                           backend, driver))

    def _lit_rule(self, node: ast.Call, scope: Scope) -> None:
        kwargs = self._kwargs(node, scope)
        self.suites.append(self._suite(node, kwargs, self._string(node, kwargs, "name") or "",
                                       None, None, kind="lit"))

    def _enforce_glob(self, node: ast.Call, scope: Scope) -> object:
        """IREE's enforce_glob(files, include=, exclude=) checks `files` against a glob at build
        time and returns them: the listed files are what the build uses."""
        if not node.args:
            raise self.error(node, "enforce_glob: no file list")
        files = self.eval(node.args[0], scope)
        if not isinstance(files, list):
            raise self.error(node, "enforce_glob: the first argument must be a list")
        return files


def _name(node: ast.Call) -> str:
    return node.func.id if isinstance(node.func, ast.Name) else "call"
