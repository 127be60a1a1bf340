"""opendml: DirectML's operator model in Python, on every machine.

    >>> import numpy as np, opendml as dml
    >>> device = dml.Device()
    >>> x = dml.TensorDesc(dml.DataType.FLOAT32, [3, 3])
    >>> desc = dml.ReduceOperatorDesc(dml.ReduceFunction.SUM, x, dml.TensorDesc(dml.DataType.FLOAT32, [1, 3]), [0])
    >>> op = device.compile_operator(device.create_operator(desc))
    >>> op(np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32))[0]
    array([[6., 6., 9.]], dtype=float32)
"""

from .device import Binding, CompiledOperator, Device, Operator, list_adapters
from .errors import BindingError, DmlError, UnsupportedError, ValidationError
from .graph import (
    ELEMENT_WISE_FUNCTIONS,
    Expression,
    FusedActivation,
    Graph,
    activation_celu,
    activation_elu,
    activation_gelu,
    activation_hard_sigmoid,
    activation_identity,
    activation_leaky_relu,
    activation_linear,
    activation_parametric_softplus,
    activation_relu,
    activation_scaled_elu,
    activation_scaled_tanh,
    activation_shrink,
    activation_sigmoid,
    activation_softplus,
    activation_softsign,
    activation_tanh,
    activation_thresholded_relu,
    arg_max,
    arg_min,
    broadcast_to,
    convolution,
    diagonal_matrix,
    diagonal_matrix1,
    fill_value_constant,
    fill_value_sequence,
    gather_nd,
    gemm,
    join,
    mean_variance_normalization,
    one_hot,
    reduce,
    reshape,
    split,
    transpose,
)
from .graph_copy import cast, slice
from .ops import copy as _copy
from .ops import elementwise as _element_wise
from .ops import generators as _generators
from .ops.activation_softmax import ActivationSoftmax1OperatorDesc, ActivationSoftmaxOperatorDesc
from .ops.activations import (
    ActivationCeluOperatorDesc,
    ActivationEluOperatorDesc,
    ActivationGeluOperatorDesc,
    ActivationHardSigmoidOperatorDesc,
    ActivationIdentityOperatorDesc,
    ActivationLeakyReluOperatorDesc,
    ActivationLinearOperatorDesc,
    ActivationParametricSoftplusOperatorDesc,
    ActivationReluOperatorDesc,
    ActivationScaledEluOperatorDesc,
    ActivationScaledTanhOperatorDesc,
    ActivationShrinkOperatorDesc,
    ActivationSigmoidOperatorDesc,
    ActivationSoftplusOperatorDesc,
    ActivationSoftsignOperatorDesc,
    ActivationTanhOperatorDesc,
    ActivationThresholdedReluOperatorDesc,
)
from .ops.arg_min_max import ArgMaxOperatorDesc, ArgMinOperatorDesc
from .ops.base import OperatorDesc
from .ops.convolution import ConvolutionOperatorDesc
from .ops.gather_nd import GatherNdOperatorDesc
from .ops.gather_nd1 import GatherNd1OperatorDesc
from .ops.gemm import GemmOperatorDesc
from .ops.join import JoinOperatorDesc
from .ops.mean_variance_normalization import MeanVarianceNormalizationOperatorDesc
from .ops.mean_variance_normalization1 import MeanVarianceNormalization1OperatorDesc
from .ops.one_hot import OneHotOperatorDesc
from .ops.reduce import ReduceOperatorDesc
from .ops.split import SplitOperatorDesc
from .ops.structs import ScaleBias
from .tensor import TensorDesc, calc_buffer_tensor_size
from .types import (
    AxisDirection,
    ConvolutionDirection,
    ConvolutionMode,
    DataType,
    ExecutionFlags,
    FeatureLevel,
    IsInfinityMode,
    MatrixTransform,
    OperatorType,
    ReduceFunction,
    RoundingMode,
    TensorFlags,
)

__version__ = "0.1.0"

__all__ = [
    "ActivationCeluOperatorDesc", "ActivationEluOperatorDesc", "ActivationGeluOperatorDesc",
    "ActivationHardSigmoidOperatorDesc", "ActivationIdentityOperatorDesc", "ActivationLeakyReluOperatorDesc",
    "ActivationLinearOperatorDesc", "ActivationParametricSoftplusOperatorDesc", "ActivationReluOperatorDesc",
    "ActivationScaledEluOperatorDesc", "ActivationScaledTanhOperatorDesc", "ActivationShrinkOperatorDesc",
    "ActivationSigmoidOperatorDesc", "ActivationSoftplusOperatorDesc", "ActivationSoftsignOperatorDesc",
    "ActivationTanhOperatorDesc", "ActivationThresholdedReluOperatorDesc", "ArgMaxOperatorDesc",
    "ArgMinOperatorDesc", "AxisDirection", "Binding", "BindingError", "CompiledOperator", "DataType", "Device",
    "DmlError", "ExecutionFlags", "Expression", "FeatureLevel", "FusedActivation", "GatherNd1OperatorDesc",
    "GatherNdOperatorDesc", "Graph", "JoinOperatorDesc", "MeanVarianceNormalization1OperatorDesc",
    "MeanVarianceNormalizationOperatorDesc", "OneHotOperatorDesc", "Operator", "OperatorDesc", "OperatorType",
    "ReduceFunction", "ReduceOperatorDesc", "SplitOperatorDesc", "TensorDesc", "TensorFlags", "UnsupportedError",
    "ValidationError", "activation_celu", "activation_elu", "activation_gelu", "activation_hard_sigmoid",
    "activation_identity", "activation_leaky_relu", "activation_linear", "activation_parametric_softplus",
    "activation_relu", "activation_scaled_elu", "activation_scaled_tanh", "activation_shrink", "activation_sigmoid",
    "activation_softplus", "activation_softsign", "activation_tanh", "activation_thresholded_relu", "arg_max",
    "arg_min", "calc_buffer_tensor_size", "convolution", "diagonal_matrix", "diagonal_matrix1", "fill_value_constant",
    "fill_value_sequence", "gather_nd", "gemm", "join", "list_adapters", "mean_variance_normalization", "one_hot",
    "reduce", "split",
]

# The element-wise family's descriptor classes are generated from its rows (ops/elementwise.py): exported by name,
# with nothing to keep in step here when a row is added.
globals().update({cls.__name__: cls for cls in _element_wise.CLASSES.values()})
__all__ += [cls.__name__ for cls in _element_wise.CLASSES.values()]
__all__ += ["IsInfinityMode", "RoundingMode", "ScaleBias"]
__all__ += ["ActivationSoftmax1OperatorDesc", "ActivationSoftmaxOperatorDesc", "ConvolutionDirection",
            "ConvolutionMode", "ConvolutionOperatorDesc", "GemmOperatorDesc", "MatrixTransform"]

# The generators (ops/generators.py): rows of the same engine, whose formulas read the output's coordinates.
globals().update({cls.__name__: cls for cls in _generators.CLASSES.values()})
__all__ += [cls.__name__ for cls in _generators.CLASSES.values()]

# CAST (ops/copy.py): a row of the same engine whose output type differs from its input's.
globals().update({cls.__name__: cls for cls in _copy.CLASSES.values()})
__all__ += [cls.__name__ for cls in _copy.CLASSES.values()] + ["cast", "slice"]

# The element-wise graph functions (dml.add, dml.multiply, ...) are generated from the same rows (graph.py).
globals().update(ELEMENT_WISE_FUNCTIONS)
__all__ += ["broadcast_to", "reshape", "transpose", *ELEMENT_WISE_FUNCTIONS]

# The depth/space operators (ops/depth_space.py, issue 28): rows of the element-wise engine on a re-strided view.
from .graph_copy import depth_to_space, space_to_depth  # noqa: E402
from .ops import depth_space as _depth_space  # noqa: E402
from .types import DepthSpaceOrder  # noqa: E402

globals().update({cls.__name__: cls for cls in _depth_space.CLASSES.values()})
__all__ += [cls.__name__ for cls in _depth_space.CLASSES.values()] + ["DepthSpaceOrder", "depth_to_space",
                                                                         "space_to_depth"]

# REVERSE_SUBSEQUENCES (ops/reverse_subsequences.py, issue 28): a kernel of its own on every backend.
from .graph_copy import reverse_subsequences  # noqa: E402
from .ops.reverse_subsequences import ReverseSubsequencesOperatorDesc  # noqa: E402

__all__ += ["ReverseSubsequencesOperatorDesc", "reverse_subsequences"]

# The scans (ops/cumulative.py, issue 28).
from .graph import cumulative_product, cumulative_summation  # noqa: E402
from .ops.cumulative import CumulativeProductOperatorDesc, CumulativeSummationOperatorDesc  # noqa: E402

__all__ += ["CumulativeProductOperatorDesc", "CumulativeSummationOperatorDesc", "cumulative_product",
            "cumulative_summation"]

# UPSAMPLE_2D (ops/upsample.py, issue 28).
from .graph_upsample import upsample_2d  # noqa: E402
from .ops.structs import Size2D  # noqa: E402
from .ops.upsample import Upsample2dOperatorDesc  # noqa: E402
from .types import InterpolationMode  # noqa: E402

__all__ += ["InterpolationMode", "Size2D", "Upsample2dOperatorDesc", "upsample_2d"]

# PADDING, PADDING1 and TILE (ops/padding.py, issue 28): a gather through per-dimension index maps.
from .graph_padding import padding, tile  # noqa: E402
from .ops.padding import CLASSES as _PADDING_CLASSES  # noqa: E402
from .ops.padding import PaddingMode  # noqa: E402

globals().update({cls.__name__: cls for cls in _PADDING_CLASSES.values()})
__all__ += [cls.__name__ for cls in _PADDING_CLASSES.values()] + ["PaddingMode", "padding", "tile"]

# GATHER and GATHER_ELEMENTS (ops/gather.py, issue 28): GATHER_ND1's kernels over re-strided views.
from .graph import gather, gather_elements  # noqa: E402
from .ops.gather import GatherElementsOperatorDesc, GatherOperatorDesc  # noqa: E402

__all__ += ["GatherElementsOperatorDesc", "GatherOperatorDesc", "gather", "gather_elements"]

# NONZERO_COORDINATES (ops/nonzero.py, issue 28).
from .graph_nonzero import NonzeroCoordinatesOutputs, nonzero_coordinates  # noqa: E402
from .ops.nonzero import NonzeroCoordinatesOperatorDesc  # noqa: E402

__all__ += ["NonzeroCoordinatesOperatorDesc", "NonzeroCoordinatesOutputs", "nonzero_coordinates"]

# SCATTER_ELEMENTS (alias SCATTER: the same descriptor) and SCATTER_ND (ops/scatter.py, issue 28).
from .graph_scatter import scatter_elements, scatter_nd  # noqa: E402
from .ops.scatter import ScatterElementsOperatorDesc, ScatterNdOperatorDesc  # noqa: E402

ScatterOperatorDesc = ScatterElementsOperatorDesc   # DML_SCATTER_OPERATOR_DESC, DML's older name of the same struct
__all__ += ["ScatterElementsOperatorDesc", "ScatterNdOperatorDesc", "ScatterOperatorDesc", "scatter_elements",
            "scatter_nd"]

# TOP_K and TOP_K1 (ops/top_k.py, issue 28).
from .graph_top_k import TopKOutputs, top_k  # noqa: E402
from .ops.top_k import TopK1OperatorDesc, TopKOperatorDesc  # noqa: E402

__all__ += ["TopK1OperatorDesc", "TopKOperatorDesc", "TopKOutputs", "top_k"]
