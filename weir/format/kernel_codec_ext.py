"""Encoding and verified decoding of the kernel ops of IREE's linalg extension ops (`Sort`,
`Scan`, `Scatter`, `Gather`), kept beside `kernel_codec` so that file stays about the linalg
ops. The decoder checks what the runtimes index with: operand ranks, dimensions, the body's
argument count and yields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from weir.format import json_fields as jf
from weir.format.kernel_description import Gather, KernelOp, MapLoad, MapStore, Scan, Scatter, Sort

if TYPE_CHECKING:
    from weir.format.kernel_codec import _EntryDecoder

OP_KEYS: dict[str, tuple[str, ...]] = {
    "sort": ("op", "operands", "dimension", "body", "yields", "prefix"),
    "scan": ("op", "input", "output", "accumulator", "dimension", "inclusive", "body", "yields"),
    "scatter": ("op", "updates", "indices", "mask", "original", "dimension_map", "batch_rank",
                "body", "yields"),
    "gather": ("op", "source", "indices", "mask", "init", "dimension_map", "batch_rank"),
    "map_load": ("op", "source", "init", "body", "yields"),
    "map_store": ("op", "input", "init", "body", "yields"),
}


def op_json(op: KernelOp, body_json: Any) -> dict[str, Any] | None:
    if isinstance(op, Sort):
        return {"op": "sort", "operands": list(op.operands), "dimension": op.dimension,
                "body": body_json(op.body), "yields": list(op.yields), "prefix": op.prefix}
    if isinstance(op, Scan):
        return {"op": "scan", "input": op.input, "output": op.output,
                "accumulator": op.accumulator, "dimension": op.dimension,
                "inclusive": op.inclusive, "body": body_json(op.body), "yields": list(op.yields)}
    if isinstance(op, Scatter):
        return {"op": "scatter", "updates": op.updates, "indices": op.indices, "mask": op.mask,
                "original": op.original, "dimension_map": list(op.dimension_map),
                "batch_rank": op.batch_rank, "body": body_json(op.body),
                "yields": list(op.yields)}
    if isinstance(op, Gather):
        return {"op": "gather", "source": op.source, "indices": op.indices, "mask": op.mask,
                "init": op.init, "dimension_map": list(op.dimension_map),
                "batch_rank": op.batch_rank}
    if isinstance(op, MapLoad):
        return {"op": "map_load", "source": op.source, "init": op.init,
                "body": body_json(op.body), "yields": list(op.yields)}
    if isinstance(op, MapStore):
        return {"op": "map_store", "input": op.input, "init": op.init,
                "body": body_json(op.body), "yields": list(op.yields)}
    return None


def value_uses(op: KernelOp) -> tuple[int, ...] | None:
    if isinstance(op, Sort):
        return op.operands
    if isinstance(op, Scan):
        return (op.input, op.output, op.accumulator)
    if isinstance(op, Scatter):
        return tuple(v for v in (op.updates, op.indices, op.mask, op.original) if v >= 0)
    if isinstance(op, Gather):
        return tuple(v for v in (op.source, op.indices, op.mask, op.init) if v >= 0)
    if isinstance(op, MapLoad):
        return (op.source, op.init)
    if isinstance(op, MapStore):
        return (op.input, op.init)
    return None


def _body(dec: _EntryDecoder, o: dict[str, Any], nargs: int, w: str,
          yield_dtype: str | None, nyields: int = 1) -> tuple[Any, tuple[int, ...]]:
    from weir.format.kernel_codec import _check_body_uses
    body = dec.body(jf.field(o, "body", w), nargs, None, w)
    for s in body:
        if s.op == "index":
            raise jf.fail(w, "'index' is not available in this body")
    yields = jf.as_int_list(jf.field(o, "yields", w), w + ".yields", limit=nargs + len(body))
    if len(yields) != nyields:
        raise jf.fail(w, f"the body must yield {nyields} value(s), got {len(yields)}")
    y = yields[-1]
    if yield_dtype is not None and y >= nargs and body[y - nargs].dtype != yield_dtype:
        raise jf.fail(w, f"the body must yield {yield_dtype}")
    _check_body_uses(body, nargs, nargs, yields, w)
    return body, yields


def _indexed(dec: _EntryDecoder, o: dict[str, Any], w: str, data_key: str,
             slices_key: str) -> tuple[int, int, int, int, tuple[int, ...], int]:
    """(data, indices, mask, slices, dimension_map, batch_rank) of a scatter/gather, checked."""
    n = len(dec.values)
    data = jf.as_int(jf.field(o, data_key, w), f"{w}.{data_key}", limit=n)
    indices = jf.as_int(jf.field(o, "indices", w), w + ".indices", limit=n)
    mask = jf.as_int(jf.field(o, "mask", w), w + ".mask", minimum=-1, limit=n)
    slices = jf.as_int(jf.field(o, slices_key, w), f"{w}.{slices_key}", limit=n)
    kd, ki, ks = dec.tensor(data, w), dec.tensor(indices, w), dec.tensor(slices, w)
    dims = jf.as_int_list(jf.field(o, "dimension_map", w), w + ".dimension_map", limit=kd[1])
    batch = jf.as_int(jf.field(o, "batch_rank", w), w + ".batch_rank", limit=ki[1] + 1)
    if not dims or len(set(dims)) != len(dims):
        raise jf.fail(w, f"dimension_map {list(dims)} must name distinct dimensions")
    if ki[0] not in ("i8", "i16", "i32", "i64", "index"):
        raise jf.fail(w, f"indices must be integers, not {ki[0]}")
    if ki[1] - batch not in (0, 1) or ki[1] == batch and len(dims) != 1:
        raise jf.fail(w, f"indices of rank {ki[1]} do not fit batch rank {batch}")
    if ks[1] < batch or ks[1] - batch > kd[1]:
        raise jf.fail(w, f"a rank-{ks[1]} {slices_key} does not fit batch rank {batch}")
    if mask >= 0 and dec.tensor(mask, w) != ("i1", batch):
        raise jf.fail(w, f"the mask must be i1 of rank {batch}")
    return data, indices, mask, slices, dims, batch


def decode(dec: _EntryDecoder, name: str, o: dict[str, Any], w: str) -> KernelOp:
    n = len(dec.values)
    if name == "sort":
        operands = jf.as_int_list(jf.field(o, "operands", w), w + ".operands", limit=n)
        if not operands:
            raise jf.fail(w, "sort needs an operand")
        kinds = [dec.tensor(v, w) for v in operands]
        rank = kinds[0][1]
        if any(r != rank for _, r in kinds):
            raise jf.fail(w, "sort operands must have one rank")
        dim = jf.as_int(jf.field(o, "dimension", w), w + ".dimension", limit=rank)
        body, yields = _body(dec, o, 2 * len(operands), w, "i1")
        prefix = o["prefix"]
        if prefix is not None:
            prefix = jf.as_int(prefix, w + ".prefix", minimum=1)
        dec.values.append(list(kinds))
        return Sort(operands, dim, body, yields, prefix)
    if name == "scan":
        inp, out, acc = (jf.as_int(jf.field(o, key, w), f"{w}.{key}", limit=n)
                         for key in ("input", "output", "accumulator"))
        ki, ko, ka = dec.tensor(inp, w), dec.tensor(out, w), dec.tensor(acc, w)
        if ki != ko or ka != (ko[0], ko[1] - 1):
            raise jf.fail(w, "scan: the output must match the input and the accumulator have "
                             "one dimension less")
        dim = jf.as_int(jf.field(o, "dimension", w), w + ".dimension", limit=ki[1])
        inclusive = jf.as_bool(jf.field(o, "inclusive", w), w + ".inclusive")
        body, yields = _body(dec, o, 2, w, None)
        dec.values.append([ko, ka])
        return Scan(inp, out, acc, dim, inclusive, body, yields)
    if name == "scatter":
        original, indices, mask, updates, dims, batch = _indexed(dec, o, w, "original", "updates")
        body, yields = _body(dec, o, 2, w, None)
        dec.values.append(dec.tensor(original, w))
        return Scatter(updates, indices, mask, original, dims, batch, body, yields)
    if name == "gather":
        source, indices, mask, init, dims, batch = _indexed(dec, o, w, "source", "init")
        if dec.tensor(source, w)[0] != dec.tensor(init, w)[0]:
            raise jf.fail(w, "gather: source and init must have one element type")
        dec.values.append(dec.tensor(init, w))
        return Gather(source, indices, mask, init, dims, batch)
    if name in ("map_load", "map_store"):
        data_key = "source" if name == "map_load" else "input"
        data, init = (jf.as_int(jf.field(o, key, w), f"{w}.{key}", limit=n)
                      for key in (data_key, "init"))
        kd, ki = dec.tensor(data, w), dec.tensor(init, w)
        if kd[0] != ki[0]:
            raise jf.fail(w, f"{name}: {data_key} and init must have one element type")
        space, target = (ki, kd) if name == "map_load" else (kd, ki)
        body, yields = _body(dec, o, space[1], w, "i1" if name == "map_store" else None,
                             target[1] + 1)
        for y in yields[:-1]:
            if y >= space[1] and body[y - space[1]].dtype != "index":
                raise jf.fail(w, f"{name}: the body's coordinates must be index values")
        dec.values.append(ki)
        return (MapLoad if name == "map_load" else MapStore)(data, init, body, yields)
    raise AssertionError(name)
