"""The words a plan of one native batch is replayed with (`NativeBatch.run_words`), made by a
function bound to that plan: every call of a small program checks its binding table and builds
these words, so what the check needs (the batch's header words, each slot's byte count and
whether it is written) is held by the function itself rather than looked up per call."""

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
                   append_addresses: AppendAddresses, fixed: Sequence[Buffer] = ()
                   ) -> WordsFunction:
    """For a table of `len(needs)` slots, slot i fitting when it holds a Buffer of at least
    `needs[i][0]` bytes, writable if `needs[i][1]`: the words of `batch.run_words`, or None.
    The caller checks the table's length first. Where the executor reads each array's data
    pointer itself, a slot's word is its array's `id` (the table holds the arrays meanwhile):
    a fresh buffer's address costs more in Python than the rest of a replay. The `fixed`
    buffers (the command buffer's own, already checked) take the slots after the table's."""
    template = batch.words
    if not batch.words_hold_arrays:
        tail = array.array("q", (b.address for b in fixed))

        def with_addresses(table: Sequence[Buffer]) -> array.array[int] | None:
            words = template[:]
            if not append_addresses(words, table):
                return None
            words.extend(tail)
            return words
        return with_addresses
    needs = tuple(needs)
    # The plan holds the fixed buffers, and so their arrays, as long as these words are made.
    arrays = array.array("q", (id(b.data) for b in fixed))

    def with_arrays(table: Sequence[Buffer]) -> array.array[int] | None:
        words = template[:]
        append = words.append
        for buffer, (end, writes) in zip(table, needs):
            if type(buffer) is not Buffer or buffer.byte_length < end or (
                    writes and buffer.read_only):
                return None
            append(id(buffer.data))
        words.extend(arrays)
        return words
    return with_arrays
