"""The DirectMLX way, in Python: build a graph of expressions whose output tensors are inferred, compile it once,
dispatch it many times.

The same graph in DirectMLX (C++):

    dml::Graph graph(dmlDevice.Get());
    auto scores = dml::InputTensor(graph, 0, dml::TensorDesc(DML_TENSOR_DATA_TYPE_FLOAT32, {4, 6}));
    auto parts  = dml::Split(scores, 1, {2, 4});
    auto sums   = dml::Reduce(parts[0], DML_REDUCE_FUNCTION_SUM, {1});
    auto best   = dml::Reduce(parts[1], DML_REDUCE_FUNCTION_ARGMAX, {1});           // UINT32 indices
    auto onehot = dml::OneHot(best, offOn, 4, 1);
    auto normed = dml::MeanVarianceNormalization(scores, dml::NullOpt, dml::NullOpt, {1}, true, 1e-5f,
                                                 dml::FusedActivation::Relu());
    auto rows   = dml::GatherND(scores, rowIndices, 2, 2, 0);
    auto op     = graph.Compile(DML_EXECUTION_FLAG_NONE, {sums, onehot, normed, rows});
"""

from __future__ import annotations

import numpy as np

import opendml as dml


def main() -> None:
    device = dml.Device(feature_level="6_4")
    graph = dml.Graph(device)

    scores = graph.input([4, 6], dml.DataType.FLOAT32, name="scores")
    off_on = graph.constant(np.array([[0, 1]], np.float32), name="off_on")      # OWNED_BY_DML, uploaded once
    row_indices = graph.constant(np.array([[3], [0]], np.uint32), name="row_indices")

    parts = dml.split(scores, axis=1, sizes=[2, 4])
    sums = dml.reduce(parts[0], "SUM", axes=[1])
    best = dml.reduce(parts[1], dml.ReduceFunction.ARGMAX, axes=[1])
    onehot = dml.one_hot(best, off_on, output_length=4, axis=1)
    normed = dml.mean_variance_normalization(scores, axes=[1], epsilon=1e-5,
                                             fused_activation=dml.FusedActivation.relu())
    rows = dml.gather_nd(scores, row_indices, input_dimension_count=2, indices_dimension_count=2)

    for label, expression in [("sums", sums), ("best", best), ("onehot", onehot), ("normed", normed),
                              ("rows", rows)]:
        print(f"{label:>7}: {expression.dtype.name} {list(expression.sizes)}")

    compiled = graph.compile([sums, onehot, normed, rows])
    print(f"\ncompiled: {len(compiled.steps)} operators, one {compiled.arena.size}-byte arena for every dispatch")

    rng = np.random.default_rng(0)
    for dispatch in range(2):
        data = rng.integers(-5, 6, size=(4, 6)).astype(np.float32)
        sums_out, onehot_out, normed_out, rows_out = compiled({"scores": data})
        print(f"\ndispatch {dispatch}: scores =\n{data}")
        print(f"sums of the first 2 columns: {sums_out.reshape(-1)}")
        print(f"argmax of the last 4, one-hot:\n{onehot_out}")
        print(f"normalized rows, ReLU:\n{np.round(normed_out, 3)}")
        print(f"rows 3 and 0:\n{rows_out}")

    # Each function checks its descriptor where it is called, with the messages create_operator gives.
    try:
        dml.reduce(scores, "SUM", axes=[2])
    except dml.ValidationError as error:
        print(f"\n{type(error).__name__}: {error}")


if __name__ == "__main__":
    main()
