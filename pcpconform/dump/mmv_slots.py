"""String slots for the MMV dump: the text one slot serves (``slot_text``), and by columns
where each slot ends, the text each serves, and which slots of a strings section are clean.
Each of the three is a registered fast pair: the code here is the reference, the compiled
kernel (``mmv_kernel``) the fast side; the PathStats the dump passes count which answered."""

from __future__ import annotations

from typing import Any

import numpy as np

from pcpconform.dump.mmv_kernel import KernelReason, kernel_slot_ends, kernel_slot_texts, kernel_string_clean
from pcpconform.fastpath import register
from pcpconform.mmv.schema import HEADER_SIZE, STRING_SIZE

__all__ = ["SLOT_ENDS", "SLOT_TEXTS", "STRING_CLEAN", "slot_text", "reference_slot_ends", "reference_slot_texts",
           "reference_string_clean"]


def slot_text(data: bytes, offset: int) -> tuple[bytes | None, bool]:
    """The text the PMDA serves from the slot at offset (None: no slot in the file), and
    whether the slot has no NUL."""
    if offset < HEADER_SIZE or offset + STRING_SIZE > len(data):
        return None, False
    end = data.find(b"\0", offset, offset + STRING_SIZE)
    if end < 0:
        return data[offset:offset + STRING_SIZE - 1], True
    return data[offset:end], False


def reference_slot_ends(data: bytes, offsets: Any) -> Any:
    """For each offset, where the slot there has its NUL (from the slot's start), -1 where
    it has none, -2 where it is no slot in the file: ``slot_text`` by columns."""
    offsets = np.asarray(offsets, np.int64)
    ends = np.full(len(offsets), -2, np.int64)
    inside = np.nonzero((offsets >= HEADER_SIZE) & (offsets <= len(data) - STRING_SIZE))[0]
    if not len(inside):
        return ends
    # every 256-byte window of the file, as a view: a slot is one row of it, copied whole
    windows = np.lib.stride_tricks.sliding_window_view(np.frombuffer(data, np.uint8), STRING_SIZE)
    for lo in range(0, len(inside), 4096):         # 1 MB of slots at a time: memory stays flat
        rows = inside[lo:lo + 4096]
        nul = windows[offsets[rows]] == 0
        ends[rows] = np.where(nul.any(axis=1), nul.argmax(axis=1), -1)
    return ends


def reference_slot_texts(data: bytes, offsets: Any) -> list[bytes | None]:
    """For each offset, the text the PMDA serves from the slot there (``slot_text``): the
    bytes before its NUL, the first 255 where it has none, None where it is no slot in the
    file."""
    return [slot_text(data, at)[0] for at in np.asarray(offsets, np.int64).tolist()]


def reference_string_clean(data: bytes, base: int, count: int) -> Any:
    """Which slots of the strings section at base are clean: a NUL, and only zeros after
    it (a slot's nonzero bytes are then exactly those before its first NUL)."""
    if base < 0 or count < 0 or base + STRING_SIZE * count > len(data):
        raise ValueError("slots outside the data")
    clean = np.zeros(count, bool)
    for lo in range(0, count, 4096):        # 1 MB of slots at a time: memory stays flat
        n = min(4096, count - lo)
        slots = np.frombuffer(data, np.uint8, STRING_SIZE * n, base + STRING_SIZE * lo).reshape(n, STRING_SIZE)
        nonzero = slots != 0
        clean[lo:lo + n] = np.count_nonzero(nonzero, axis=1) == np.argmin(nonzero, axis=1)
    return clean


def _same_column(a: Any, b: Any) -> bool:
    return a.dtype == b.dtype and bool(np.array_equal(a, b))


SLOT_ENDS = register("dump.mmv-slot-ends", reference=reference_slot_ends, fast=kernel_slot_ends,
                     reasons=KernelReason, inputs="mmv-slot-offsets", same=_same_column)
SLOT_TEXTS = register("dump.mmv-slot-texts", reference=reference_slot_texts, fast=kernel_slot_texts,
                      reasons=KernelReason, inputs="mmv-slot-offsets")
STRING_CLEAN = register("dump.mmv-string-clean", reference=reference_string_clean, fast=kernel_string_clean,
                        reasons=KernelReason, inputs="mmv-string-section", same=_same_column)
