"""The convolution's register-blocked micro-kernel (the MICRO method of convolution.py), in LLVM IR through numba.

C[R rows, 16 V columns] += sum over j < K of W[j, r] x S[offset_j + column]: R output channels by 16 V consecutive
wide-grid positions held in R x V vector registers for the whole sum; each step loads V vectors of one source row
(the source grid's row for (tap, channel) j starts at offset_j: no im2col, no packing) and broadcasts R weights
(packed [K, R]). FLOAT32, fused multiply-adds (each product rounded once into its register's running sum).
"""

from __future__ import annotations

import importlib
from typing import Any

import numba

ir: Any = importlib.import_module("llvmlite.ir")
_types: Any = numba.types
_intrinsic: Any = numba.extending.intrinsic

#: The blocks the kernel is compiled for: R output channels x V vectors of 16 positions.
ROWS, VECTORS, LANES = 8, 2, 16
COLUMNS = VECTORS * LANES


def _micro_typer(typingctx: Any, c: Any, ldc: Any, w: Any, s: Any, offsets: Any, k: Any) -> Any:
    i64 = _types.int64
    signature = _types.void(i64, i64, i64, i64, i64, i64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        f32 = ir.FloatType()
        int64 = ir.IntType(64)
        vector = ir.VectorType(f32, LANES)
        c_address, ldc_value, w_address, s_address, offsets_address, count = args
        float_pointer = f32.as_pointer()
        vector_pointer = vector.as_pointer()
        name = f"llvm.fma.v{LANES}f32"
        fma = builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(vector, [vector] * 3),
                                                               name)

        def c_pointer(r: int, v: int) -> Any:
            element = builder.add(builder.mul(ir.Constant(int64, r), ldc_value), ir.Constant(int64, v * LANES))
            address = builder.add(c_address, builder.mul(element, ir.Constant(int64, 4)))
            return builder.inttoptr(address, vector_pointer)

        initial = [[builder.load(c_pointer(r, v), align=4) for v in range(VECTORS)] for r in range(ROWS)]
        entry = builder.block
        loop = builder.append_basic_block("micro.loop")
        body = builder.append_basic_block("micro.body")
        done = builder.append_basic_block("micro.done")
        builder.branch(loop)
        builder.position_at_end(loop)
        j = builder.phi(int64)
        j.add_incoming(ir.Constant(int64, 0), entry)
        sums = [[builder.phi(vector) for _ in range(VECTORS)] for _ in range(ROWS)]
        for r in range(ROWS):
            for v in range(VECTORS):
                sums[r][v].add_incoming(initial[r][v], entry)
        builder.cbranch(builder.icmp_signed("<", j, count), body, done)
        builder.position_at_end(body)
        offset = builder.load(builder.inttoptr(builder.add(offsets_address, builder.mul(j, ir.Constant(int64, 8))),
                                               int64.as_pointer()))
        row = builder.add(s_address, builder.mul(offset, ir.Constant(int64, 4)))
        loads = [builder.load(builder.inttoptr(builder.add(row, ir.Constant(int64, v * LANES * 4)), vector_pointer),
                              align=4) for v in range(VECTORS)]
        weights = builder.add(w_address, builder.mul(j, ir.Constant(int64, ROWS * 4)))
        updated = []
        for r in range(ROWS):
            scalar = builder.load(builder.inttoptr(builder.add(weights, ir.Constant(int64, r * 4)), float_pointer),
                                  align=4)
            broadcast = builder.insert_element(ir.Constant(vector, ir.Undefined), scalar,
                                               ir.Constant(ir.IntType(32), 0))
            broadcast = builder.shuffle_vector(broadcast, ir.Constant(vector, ir.Undefined),
                                               ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES))
            updated.append([builder.call(fma, [broadcast, loads[v], sums[r][v]]) for v in range(VECTORS)])
        next_j = builder.add(j, ir.Constant(int64, 1))
        latch = builder.block
        j.add_incoming(next_j, latch)
        for r in range(ROWS):
            for v in range(VECTORS):
                sums[r][v].add_incoming(updated[r][v], latch)
        builder.branch(loop)
        builder.position_at_end(done)
        for r in range(ROWS):
            for v in range(VECTORS):
                builder.store(sums[r][v], c_pointer(r, v), align=4)
        return context.get_dummy_value()

    return signature, codegen


#: micro(c, ldc, w, s, offsets, k): addresses c (FLOAT32 [ROWS, ldc], read and written), w (FLOAT32 [k, ROWS]),
#: s (FLOAT32 source), offsets (int64 [k]); C[r, i] += sum_j w[j, r] s[offsets[j] + i] for i < COLUMNS.
micro: Any = _intrinsic(_micro_typer)
