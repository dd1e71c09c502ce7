"""The registered fast paths of the MMV dump's value rows and string slots: a compiled kernel.

A file at the PMDA's limits has tens of thousands of values; even made by columns
(``mmv_blocks``), their lines cost a Python string or more each, more than mmvdump's whole
run. The kernel (``_mmvrows.c``, built by setup.py) writes a run of clean rows' lines from
the file's bytes in one pass, as JSON Lines or as the listing; ``_Values.jsonl`` and
``_Values.text`` of ``mmv_blocks`` stay the reference. Where the kernel is not built or does
not import, every run is declined with ``KernelReason.NOT_BUILT`` and counted, never
silently (the tests require the kernel where CI builds it). The string slots' lines
(``string_lines``, 16 000 slots in a file at the limits) are the kernel's other job; their
pair ``dump.mmv-strings`` is registered beside its reference in ``mmv_blocks``; where each
slot ends, its text and which slots are clean (``slot_ends``, ``slot_texts``,
``clean_slots``) are three more pairs, in ``mmv_slots``; lines made of columns
(``interleave``: the instances' and metrics' lines) one more, ``dump.mmv-interleave`` in
``mmv_blocks``.
"""

from __future__ import annotations

import enum
from typing import Any

from pcpconform.fastpath import Declined, import_kernel, register

__all__ = ["KernelReason", "KERNEL_ERROR", "VALUE_LINES", "kernel_lines", "reference_lines", "same_lines",
           "kernel_string_lines", "kernel_slot_ends", "kernel_slot_texts", "kernel_string_clean",
           "kernel_interleave"]

_kernel, KERNEL_ERROR = import_kernel("pcpconform.dump._mmvrows")


class KernelReason(enum.Enum):
    NOT_BUILT = "the compiled kernel pcpconform.dump._mmvrows is not built or does not import"
    NOT_ASCII = "a text of the lines is not ASCII, or a JSON text not printable ASCII"


def reference_lines(values: Any, lo: int, hi: int, fmt: str) -> list[str]:
    """The lines of the clean value rows lo..hi, made by columns in Python (the reference),
    in chunks of lines joined by newlines without a final one; ``fmt`` is jsonl or text."""
    chunks: list[str] = values.jsonl(lo, hi) if fmt == "jsonl" else values.text(lo, hi)
    return chunks


def kernel_lines(values: Any, lo: int, hi: int, fmt: str) -> list[str]:
    """``reference_lines`` by the compiled kernel (chunks of about 256 KB)."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    keys, ids, names, texts = values.kernel_instances(fmt == "text")
    chunks: list[str] = _kernel.value_lines(fmt == "text", values.data, values.base, lo, hi, values.sentinel,
                                            values.positions, values.kernel_metrics(fmt == "text"), keys, ids, names,
                                            texts)
    return chunks


def kernel_string_lines(data: bytes, base: int, lo: int, hi: int, fmt: str) -> list[str]:
    """The lines of the string slots lo..hi of the strings section at base by the compiled
    kernel (the fast side of ``mmv_blocks.STRING_LINES``)."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    chunks: list[str] = _kernel.string_lines(fmt == "text", data, base, lo, hi)
    return chunks


def kernel_interleave(rows: int, pieces: tuple[Any, ...]) -> list[str]:
    """``mmv_blocks.reference_interleave`` by the compiled kernel (chunks of about 32 KB)."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    chunks: list[str] | None = _kernel.interleave(rows, pieces)
    if chunks is None:
        raise Declined(KernelReason.NOT_ASCII)
    return chunks


def kernel_slot_ends(data: bytes, offsets: Any) -> Any:
    """``mmv_slots.reference_slot_ends`` by the compiled kernel."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    import numpy as np  # here: the module imports without numpy's cost until a dump runs

    return np.frombuffer(_kernel.slot_ends(data, np.ascontiguousarray(offsets, np.int64)), np.int64)


def kernel_slot_texts(data: bytes, offsets: Any) -> list[bytes | None]:
    """``mmv_slots.reference_slot_texts`` by the compiled kernel."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    import numpy as np

    texts: list[bytes | None] = _kernel.slot_texts(data, np.ascontiguousarray(offsets, np.int64))
    return texts


def kernel_string_clean(data: bytes, base: int, count: int) -> Any:
    """``mmv_slots.reference_string_clean`` by the compiled kernel."""
    if _kernel is None:
        raise Declined(KernelReason.NOT_BUILT)
    import numpy as np

    return np.frombuffer(_kernel.clean_slots(data, base, count), bool)


def same_lines(a: list[str], b: list[str]) -> bool:
    """The same lines, however they are cut into chunks."""
    return "\n".join(a) == "\n".join(b)


VALUE_LINES = register("dump.mmv-values", reference=reference_lines, fast=kernel_lines,
                       reasons=KernelReason, inputs="mmv-values", same=same_lines)
