"""Whether the gpu backend builds its shaders for each descriptor (issue 29), and how.

Specialized (the default): `compile_operator` knows the descriptor, so a shader is built for its sizes and strides as
WGSL constants (dimensions contiguous in every tensor merged first), and its pipeline is cached by that source.
Generic: the shapes travel in the parameter buffer `P` and one pipeline serves every shape, the path a descriptor
too irregular to specialize usefully keeps.

`ENABLED` is read when an operator is compiled; set `OPENDML_GPU_SPECIALIZE=0` in the environment (or assign
`ENABLED = False` before compiling) to force the generic path, as the tests do to keep both paths correct.

The mechanism every kernel shares (`render`, applied by kernel.compile_pass to each pass's WGSL): a kernel writes
its shader once, over elementwise.COMMON's helpers called with literal layout blocks (`offset_of(17u, o)`, as the
templates' `{BLOCK}u` placeholders give) and over `P[<word>u]` reads, and builds its `Params`. Params knows every
layout block and every word added with `add_constant` at compile time, so, when specialized:
- `offset_of(Bu, o)` becomes a call of `offset_of_B(o)`, a function of that block's sizes and strides as literals,
  its dimensions merged where they are contiguous (size-1 ones dropped): a rank-1 contiguous block is `o % size`,
  and every division is by a constant (a multiply and a shift once compiled);
- `coord_of(Bu, o, d)` becomes `coord_of_B(o, d)` (a switch over the dimension, constant divisors);
- `rank_of(Bu)`, `size_of(Bu, Du)` and `stride_of(Bu, Du)` with literal arguments become literals;
- `P[Wu]` for a constant word W becomes its value.
Calls with a block or dimension known only at run time keep COMMON's generic functions, which read `P`; `P` keeps
its generic layout (each binding's base element first, written per dispatch), so both paths bind alike. Every
rewritten function computes exactly what the generic one does (u32 arithmetic, the outermost coordinate taken
modulo its size too), so a shader is correct on either path.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .elementwise import Params

#: Build shaders specialized to each descriptor (read at compile time).
ENABLED: bool = os.environ.get("OPENDML_GPU_SPECIALIZE", "1") != "0"

_U32 = 1 << 32
#: What render rewrites, in one pass: rank_of / size_of / stride_of with literal arguments (groups 1-4), an
#: offset_of / coord_of call's head with a literal block (5-6), a `P[Wu]` read (7).
_TOKEN = re.compile(r"\brank_of\((\d+)u\)|\b(size_of|stride_of)\((\d+)u,\s*(\d+)u\)"
                    r"|\b(offset_of|coord_of)\((\d+)u,\s*|\bP\[(\d+)u\]")

#: A template's pieces: the source's text between tokens (str) and its tokens, ("rank", block, 0, text),
#: ("size_of" or "stride_of", block, dim, text), ("offset_of" or "coord_of", block, 0, text) or ("P", word, 0, text),
#: `text` the token as written (kept where the block or word is not a constant).
_Token = tuple[str, int, int, str]


@functools.lru_cache(maxsize=512)
def template(source: str) -> tuple[str | _Token, ...]:
    """`source` cut at what render rewrites, once per source (a graph's nodes of one kind share a source: only their
    params differ), so that rendering is a walk over the tokens rather than regular expressions over the source."""
    pieces: list[str | _Token] = []
    end = 0
    for match in _TOKEN.finditer(source):
        pieces.append(source[end:match.start()])
        end = match.end()
        rank, query, block, dim, function, call_block, word = match.groups()
        if rank is not None:
            pieces.append(("rank", int(rank), 0, match.group(0)))
        elif query is not None:
            pieces.append((query, int(block), int(dim), match.group(0)))
        elif function is not None:
            pieces.append((function, int(call_block), 0, match.group(0)))
        else:
            pieces.append(("P", int(word), 0, match.group(0)))
    pieces.append(source[end:])
    return tuple(pieces)


def render(source: str, params: Params) -> str:
    """`source` specialized to `params` (see the module docstring); unchanged where specialization is off."""
    if not ENABLED:
        return source
    blocks, words, constants = params.blocks, params.words, params.constants
    out: list[str] = []
    used: dict[tuple[str, int], None] = {}
    for piece in template(source):
        if isinstance(piece, str):
            out.append(piece)
            continue
        kind, number, dim, text = piece
        if kind == "P":
            out.append(f"{words[number]}u" if number in constants else text)
        elif number not in blocks:
            out.append(text)
        elif kind == "rank":
            out.append(f"{len(blocks[number][0])}u")
        elif kind in ("size_of", "stride_of"):
            values = blocks[number][0 if kind == "size_of" else 1]
            out.append(f"{values[dim] if dim < len(values) else int(kind == 'size_of')}u")
        else:
            used[(kind, number)] = None
            out.append(f"{kind}_{number}(")
    out += [offset_function(f"offset_of_{block}", *blocks[block]) if function == "offset_of" else
            coord_function(f"coord_of_{block}", blocks[block][0]) for function, block in used]
    return "".join(out)


def merged(sizes: Sequence[int], strides: Sequence[int]) -> list[tuple[int, int]]:
    """(size, stride) of one block's dimensions, outermost first, size-1 ones dropped and neighbours merged where the
    outer stride is the inner stride times the inner size (modulo 2^32, as the shader computes) and the merged size
    fits a u32: the same offset for every logical index."""
    dims: list[tuple[int, int]] = []
    for size, stride in zip(sizes, strides, strict=True):
        stride %= _U32
        if size == 1:
            continue
        if dims and (dims[-1][1] - stride * size) % _U32 == 0 and dims[-1][0] * size < _U32:
            dims[-1] = (dims[-1][0] * size, stride)
        else:
            dims.append((size, stride))
    return dims


def offset_function(name: str, sizes: Sequence[int], strides: Sequence[int]) -> str:
    """`fn name(o: u32) -> u32`: COMMON's offset_of for one block, its sizes and strides as literals."""
    dims = merged(sizes, strides)
    lines = [f"fn {name}(o: u32) -> u32 {{\n    let q0 = o;\n"]
    terms: list[str] = []
    for k, (size, stride) in enumerate(reversed(dims)):
        coordinate = f"(q{k} % {size}u)"
        if stride:
            terms.append(coordinate if stride == 1 else f"{coordinate} * {stride}u")
        if k < len(dims) - 1:
            lines.append(f"    let q{k + 1} = q{k} / {size}u;\n")
    lines.append(f"    return {' + '.join(terms) or '0u'};\n}}\n")
    return "".join(lines)


def coord_function(name: str, sizes: Sequence[int]) -> str:
    """`fn name(o: u32, dim: u32) -> u32`: COMMON's coord_of for one block, its sizes as literals (a dimension past
    the rank has coordinate 0, as its padded size 1 gives)."""
    cases: list[str] = []
    inner = 1
    for dim in range(len(sizes) - 1, -1, -1):
        quotient = "o" if inner == 1 else (f"(o / {inner}u)" if inner < _U32 else "0u")
        cases.append(f"        case {dim}u: {{ return {quotient} % {sizes[dim]}u; }}\n")
        inner *= sizes[dim]
    return (f"fn {name}(o: u32, dim: u32) -> u32 {{\n    switch (dim) {{\n{''.join(reversed(cases))}"
            f"        default: {{ return 0u; }}\n    }}\n}}\n")
