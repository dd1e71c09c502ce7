"""Mutations of the other inputs the same engine serves: MMV files (word-aware: the header,
TOC and entries are 4- and 8-byte aligned fields) and derived-metric config files
(grammar-aware: tokens of the expression language, deep nesting, long names)."""

from __future__ import annotations

import random
import re

from pcpconform.fuzz.values import boundaries

__all__ = ["mutate_mmv", "mutate_config"]


def mutate_mmv(data: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    """A field (aligned 4- or 8-byte word) set to a boundary value, a section cut, or bytes flipped."""
    out = bytearray(data)
    notes = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        if not out:
            break
        choice = rng.randrange(5)
        if choice <= 2:
            size = rng.choice((4, 8))
            # the header and TOC are dense with counts and offsets: bias towards them
            limit = len(out) if rng.random() < 0.5 else min(len(out), 256)
            at = rng.randrange(0, max(1, limit - size + 1), size)
            old = int.from_bytes(out[at:at + size], "little")
            new = rng.choice(boundaries(old) + [len(out), len(out) - 1, at]) % (1 << (8 * size))
            out[at:at + size] = new.to_bytes(size, "little")
            notes.append(f"word at {at} ({size} bytes) {old} -> {new}")
        elif choice == 3:
            cut = rng.randrange(len(out))
            del out[cut:]
            notes.append(f"cut at {cut}")
        else:
            at = rng.randrange(len(out))
            out[at] ^= 1 << rng.randrange(8)
            notes.append(f"byte {at} bit flipped")
    return bytes(out), notes


_TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_.]*|\d+(?:\.\d+)?|\"[^\"]*\"|/[^/\n]*/|==|!=|<=|>=|&&|\|\||.", re.S)
_VOCAB = ("+", "-", "*", "/", "(", ")", "?", ":", ",", "!", "<", ">=", "==", "&&", "||",
          "rate(", "delta(", "instant(", "avg(", "sum(", "count(", "min(", "max(", "rescale(",
          "scalar(", "matchinst(", "defined(", "anon(", "mkconst(", "0", "-1", "1e308", "4294967296",
          "18446744073709551616", "0.0", "\"Kbyte\"", "\"count/sec\"", "/x/", "/[/", "=", "\n", "#",
          "disk.dev.read_bytes", "kernel.all.load", "hinv.ncpu", "no.such.metric", "d.sum")


def mutate_config(text: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    """Grammar-aware mutations of a pmLoadDerivedConfig file: a token replaced, deleted or
    duplicated; an expression nested deeply; a name or constant made extreme."""
    src = text.decode("utf-8", "replace")
    tokens = _TOKEN.findall(src)
    notes = []
    for _ in range(rng.choice((1, 1, 2))):
        if not tokens:
            tokens = ["x"]
        i = rng.randrange(len(tokens))
        choice = rng.randrange(6)
        if choice == 0:
            tokens[i] = rng.choice(_VOCAB)
            notes.append(f"token {i} replaced by {tokens[i]!r}")
        elif choice == 1:
            notes.append(f"token {i} {tokens.pop(i)!r} deleted")
        elif choice == 2:
            tokens.insert(i, tokens[i])
            notes.append(f"token {i} duplicated")
        elif choice == 3:
            depth = rng.choice((10, 100, 1000, 10000))
            tokens[i] = "(" * depth + tokens[i] + ")" * depth
            notes.append(f"token {i} nested {depth} deep")
        elif choice == 4:
            tokens[i] = rng.choice(("m" * 5000, "9" * 400, "a." * 2000 + "b", "\"" + "x" * 5000 + "\""))
            notes.append(f"token {i} made {len(tokens[i])} characters long")
        else:
            tokens.insert(i, rng.choice(_VOCAB))
            notes.append(f"token inserted before {i}")
    return "".join(tokens).encode("utf-8", "surrogateescape"), notes
