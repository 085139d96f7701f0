"""The words a plan of one native batch is replayed with (`NativeBatch.run_words`), made by a
function written for that plan: every call of a small program checks its binding table and
builds these words, and straight-line code for a known number of slots, with each slot's needs
as constants, costs half of a loop that unpacks them (about 0.4 µs of a 10 µs call with two
slots). The source is made here from the slots' byte counts alone; nothing in it comes from a
module or a caller."""

from __future__ import annotations

import array
from typing import Callable, Sequence

from weir.runtime.executables.native_replay import NativeBatch
from weir.runtime.hal.buffer import Buffer

# The table's words for `run_words`, or None when some slot's buffer does not fit.
WordsFunction = Callable[[Sequence[Buffer]], "array.array[int] | None"]
# Appends the table's addresses to the words; False when some slot does not fit.
AppendAddresses = Callable[["array.array[int]", Sequence[Buffer]], bool]


def words_function(batch: NativeBatch, needs: Sequence[tuple[int, bool]],
                   append_addresses: AppendAddresses) -> WordsFunction:
    """For a table of `len(needs)` slots, slot i fitting when it holds a Buffer of at least
    `needs[i][0]` bytes, writable if `needs[i][1]`: the words of `batch.run_words`, or None.
    The caller checks the table's length first."""
    template = batch.words
    if not batch.words_hold_arrays:
        def with_addresses(table: Sequence[Buffer]) -> array.array[int] | None:
            words = template[:]
            return words if append_addresses(words, table) else None
        return with_addresses
    slots = [f"b{i}" for i in range(len(needs))]
    checks = [f"type({b}) is not Buffer or {b}.byte_length < {int(end)}"
              + (f" or {b}.read_only" if writes else "")
              for b, (end, writes) in zip(slots, needs)]
    source = "\n".join([
        "def words_if_fits(table):",
        f"    ({''.join(f'{b}, ' for b in slots)}) = table",
        f"    if {' or '.join(checks) or 'False'}:",
        "        return None",
        "    words = template[:]",
        *(f"    words.append(id({b}.data))" for b in slots),
        "    return words",
    ])
    namespace: dict[str, object] = {"Buffer": Buffer, "template": template}
    exec(compile(source, "<weir replay words>", "exec"), namespace)
    return namespace["words_if_fits"]  # type: ignore[return-value]
