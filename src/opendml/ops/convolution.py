"""DML_OPERATOR_CONVOLUTION: the convolution of InputTensor with FilterTensor, FORWARD or BACKWARD (transposed),
grouped, with an optional per-channel Bias and a fused activation.

With S, D, Ps, Pe, Po the Strides, Dilations, StartPadding, EndPadding and OutputPadding of a spatial axis, G the
GroupCount, k the filter's size on that axis:

- FORWARD, CROSS_CORRELATION: Filter {Cout, Cin / G, k...};
  out[n, g*Cog + o, y] = sum over c < Cig and the taps k of in[n, g*Cig + c, y*S - Ps + k*D] * filter[g*Cog + o, c, k]
  (reads outside the input are 0); out = (in + Ps + Pe - ((k - 1) * D + 1)) // S + 1.
- BACKWARD (the transposed convolution: the adjoint of FORWARD; ONNX's ConvTranspose, which ONNX Runtime gives DML
  unchanged with CROSS_CORRELATION): Filter {Cin, Cout / G, k...}; every input element is scattered,
  out[n, g*Cog + o, y*S - Ps + k*D] += in[n, g*Cig + c, y] * filter[g*Cig + c, o, k] (writes outside the output
  dropped); out = (in - 1) * S + (k - 1) * D + 1 - Ps - Pe + Po. The Po trailing elements are computed by the same
  sum (they hold what lands there, which is something only where Pe > 0, else 0), then Bias and the activation.
- Mode CONVOLUTION flips the filter's spatial axes (filter[..., K - 1 - k]) in either direction: the page's "mode
  interactions" table, seen from the gather form of BACKWARD.
- Bias {1, Cout, 1...} is added per output channel, then the fused activation (ops/fused_activation.py; CONVOLUTION
  fuses ELEMENT_WISE_CLIP from 6_0, never SOFTMAX).

The page's rules: one DataType (FLOAT32, FLOAT16) and DimensionCount for the four tensors, 4 to 5 dimensions at 1_0,
3 to 5 from 4_0; DimensionCount (spatial) = InputTensor.DimensionCount - 2; the arrays have DimensionCount items.
opendml's rulings where the page is silent (README, Rulings): Strides and Dilations at least 1; GroupCount at least 1
and dividing both channel counts; OutputPadding below the stride or the dilation on its axis (as ONNX requires), and
0 when FORWARD; a FORWARD window (the dilated filter) no larger than the padded input; BACKWARD's output size
positive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..convert import describe, to_enum, to_uint, to_uint_list
from ..errors import ValidationError
from ..support import F16, F32, L, SupportTable, check_support, row
from ..tensor import MAX_DIMENSION_COUNT, TensorDesc
from ..types import ConvolutionDirection, ConvolutionMode, FeatureLevel, OperatorType
from .base import OperatorDesc, check_same_data_type, check_same_rank, require_tensor
from .fused_activation import check_fused_activation
from .gemm import check_fused_activation_type

_FLOATS = (F32, F16)

#: The page's support tables.
SUPPORT: SupportTable = (
    row(L.LEVEL_4_0, (3, 5), InputTensor=_FLOATS, FilterTensor=_FLOATS, BiasTensor=_FLOATS, OutputTensor=_FLOATS),
    row(L.LEVEL_1_0, (4, 5), InputTensor=_FLOATS, FilterTensor=_FLOATS, BiasTensor=_FLOATS, OutputTensor=_FLOATS),
)

#: DML field name -> Python field name.
FIELDS: dict[str, str] = {
    "InputTensor": "input_tensor", "FilterTensor": "filter_tensor", "BiasTensor": "bias_tensor",
    "OutputTensor": "output_tensor", "Mode": "mode", "Direction": "direction", "DimensionCount": "dimension_count",
    "Strides": "strides", "Dilations": "dilations", "StartPadding": "start_padding", "EndPadding": "end_padding",
    "OutputPadding": "output_padding", "GroupCount": "group_count", "FusedActivation": "fused_activation",
}

#: The array fields (DML name, Python name, the value each item defaults to).
ARRAYS: tuple[tuple[str, str, int], ...] = (
    ("Strides", "strides", 1), ("Dilations", "dilations", 1), ("StartPadding", "start_padding", 0),
    ("EndPadding", "end_padding", 0), ("OutputPadding", "output_padding", 0),
)


@dataclass(frozen=True)
class ConvolutionOperatorDesc(OperatorDesc):
    """DML_CONVOLUTION_OPERATOR_DESC (module doc). DimensionCount None is InputTensor.DimensionCount - 2; an array
    left None is all 1s (Strides, Dilations) or all 0s (the paddings).

    >>> x = TensorDesc(DataType.FLOAT32, [1, 1, 3, 3])
    >>> w = TensorDesc(DataType.FLOAT32, [1, 1, 2, 2])
    >>> ConvolutionOperatorDesc(x, w, None, TensorDesc(DataType.FLOAT32, [1, 1, 2, 2]))
    """

    input_tensor: TensorDesc
    filter_tensor: TensorDesc
    bias_tensor: TensorDesc | None
    output_tensor: TensorDesc
    mode: ConvolutionMode = ConvolutionMode.CROSS_CORRELATION
    direction: ConvolutionDirection = ConvolutionDirection.FORWARD
    # None (the default) is filled in by __post_init__: readers always see an int and tuples of ints.
    dimension_count: int = None  # type: ignore[assignment]
    strides: tuple[int, ...] = None  # type: ignore[assignment]
    dilations: tuple[int, ...] = None  # type: ignore[assignment]
    start_padding: tuple[int, ...] = None  # type: ignore[assignment]
    end_padding: tuple[int, ...] = None  # type: ignore[assignment]
    output_padding: tuple[int, ...] = None  # type: ignore[assignment]
    group_count: int = 1
    fused_activation: OperatorDesc | None = None

    OPERATOR_TYPE: ClassVar[OperatorType] = OperatorType.CONVOLUTION
    KERNEL_MODULE: ClassVar[str] = "convolution"

    def __post_init__(self) -> None:
        operator = self.OPERATOR_TYPE.dml_name
        require_tensor(operator, "InputTensor", self.input_tensor)
        require_tensor(operator, "FilterTensor", self.filter_tensor)
        if self.bias_tensor is not None:
            require_tensor(operator, "BiasTensor", self.bias_tensor)
        require_tensor(operator, "OutputTensor", self.output_tensor)
        object.__setattr__(self, "mode", to_enum(operator, "Mode", self.mode, ConvolutionMode,
                                                 "DML_CONVOLUTION_MODE_"))
        object.__setattr__(self, "direction", to_enum(operator, "Direction", self.direction, ConvolutionDirection,
                                                      "DML_CONVOLUTION_DIRECTION_"))
        count = (self.input_tensor.dimension_count - 2 if self.dimension_count is None
                 else to_uint(operator, "DimensionCount", self.dimension_count))
        object.__setattr__(self, "dimension_count", count)
        for name, field, default in ARRAYS:
            value = getattr(self, field)
            # (at most MAX_DIMENSION_COUNT defaults: a DimensionCount beyond it is refused by validate)
            items = ((default,) * min(count, MAX_DIMENSION_COUNT) if value is None
                     else to_uint_list(operator, name, value))
            object.__setattr__(self, field, items)
        object.__setattr__(self, "group_count", to_uint(operator, "GroupCount", self.group_count))
        check_fused_activation_type(operator, self.fused_activation)

    # -- what kernels read ----------------------------------------------------------------------------------------

    @property
    def spatial_count(self) -> int:
        """DimensionCount: the number of spatial axes (the tensors' last ones)."""
        return self.dimension_count

    @property
    def spatial_strides(self) -> tuple[int, ...]:
        return self.strides

    @property
    def spatial_dilations(self) -> tuple[int, ...]:
        return self.dilations

    @property
    def spatial_start_padding(self) -> tuple[int, ...]:
        return self.start_padding

    @property
    def spatial_end_padding(self) -> tuple[int, ...]:
        return self.end_padding

    @property
    def spatial_output_padding(self) -> tuple[int, ...]:
        return self.output_padding

    @property
    def is_backward(self) -> bool:
        return self.direction is ConvolutionDirection.BACKWARD

    @property
    def flips_filter(self) -> bool:
        """Whether the filter's spatial axes are read reversed (Mode CONVOLUTION, in either direction)."""
        return self.mode is ConvolutionMode.CONVOLUTION

    def channels_per_group(self) -> tuple[int, int]:
        """(input channels per group, output channels per group): FORWARD (Cin / G, Filter.Sizes[0] / G), BACKWARD
        (Cin / G, Filter.Sizes[1]). Meaningful once validate() has passed."""
        groups = self.group_count
        input_channels = self.input_tensor.sizes[1] // groups
        if self.is_backward:
            return input_channels, self.filter_tensor.sizes[1]
        return input_channels, self.filter_tensor.sizes[0] // groups

    def expected_output_sizes(self) -> tuple[int, ...]:
        """{N, Cout, spatial...} (module doc's formulas); a spatial size may come out 0 or negative on a descriptor
        validate() refuses."""
        source, kernel = self.input_tensor.sizes, self.filter_tensor.sizes
        count = self.spatial_count
        first = len(source) - count
        spatial = []
        for axis in range(count):
            size, taps = source[first + axis], kernel[first + axis]
            stride, dilation = self.spatial_strides[axis], self.spatial_dilations[axis]
            padding = self.spatial_start_padding[axis] + self.spatial_end_padding[axis]
            extent = (taps - 1) * dilation + 1
            if self.is_backward:
                spatial.append((size - 1) * stride + extent - padding + self.spatial_output_padding[axis])
            else:
                spatial.append((size + padding - extent) // max(stride, 1) + 1)
        channels = self.group_count * kernel[1] if self.is_backward else kernel[0]
        return (source[0], channels, *spatial)

    # -- OperatorDesc -------------------------------------------------------------------------------------------

    def input_slots(self) -> list[tuple[str, TensorDesc | None]]:
        return [("InputTensor", self.input_tensor), ("FilterTensor", self.filter_tensor),
                ("BiasTensor", self.bias_tensor)]

    def output_slots(self) -> list[tuple[str, TensorDesc]]:
        return [("OutputTensor", self.output_tensor)]

    def validate(self, level: FeatureLevel) -> None:
        """The shared tensor rules, the support table at `level`, then the module doc's rules in order."""
        operator = self.label
        self.check_tensors()
        tensors = dict((*self.input_slots(), *self.output_slots()))
        check_support(SUPPORT, operator, level, tensors)
        for name, tensor in tensors.items():
            if tensor is not None and name != "InputTensor":
                check_same_data_type(operator, name, tensor, "InputTensor", self.input_tensor)
                check_same_rank(operator, name, tensor, "InputTensor", self.input_tensor)
        self._check_arrays(operator)
        self._check_channels(operator)
        self._check_spatial(operator)
        expected = list(self.expected_output_sizes())
        if list(self.output_tensor.sizes) != expected:
            raise ValidationError(f"{operator}: OutputTensor.Sizes is {list(self.output_tensor.sizes)}; it must be "
                                  f"{expected} ({self._formula_text()})")
        if self.bias_tensor is not None:
            bias = [1, expected[1]] + [1] * self.spatial_count
            if list(self.bias_tensor.sizes) != bias:
                raise ValidationError(f"{operator}: BiasTensor.Sizes is {list(self.bias_tensor.sizes)}; it must be "
                                      f"{bias} (one value per output channel)")
        check_fused_activation(operator, self.fused_activation, level, softmax=False, output_rank=len(expected))

    def _check_arrays(self, operator: str) -> None:
        rank = self.input_tensor.dimension_count
        if self.spatial_count != rank - 2:
            raise ValidationError(f"{operator}: DimensionCount is {self.spatial_count}; it must be {rank - 2} "
                                  f"(InputTensor.DimensionCount {rank} - 2: the spatial dimensions)")
        for name, field, _ in ARRAYS:
            items: tuple[int, ...] = getattr(self, field)
            if len(items) != self.spatial_count:
                raise ValidationError(f"{operator}: {name} has {len(items)} items {describe(list(items))}; it must "
                                      f"have DimensionCount ({self.spatial_count})")
        for name, items in (("Strides", self.spatial_strides), ("Dilations", self.spatial_dilations)):
            for axis, value in enumerate(items):
                if value < 1:
                    raise ValidationError(f"{operator}: {name}[{axis}] is {value}; it must be at least 1")

    def _check_channels(self, operator: str) -> None:
        groups = self.group_count
        if groups < 1:
            raise ValidationError(f"{operator}: GroupCount is {groups}; it must be at least 1")
        channels = self.input_tensor.sizes[1]
        if channels % groups:
            raise ValidationError(f"{operator}: GroupCount {groups} does not divide InputTensor.Sizes[1] "
                                  f"({channels} input channels); it must divide both channel counts")
        kernel = self.filter_tensor.sizes
        if self.is_backward:
            if kernel[0] != channels:
                raise ValidationError(f"{operator}: FilterTensor.Sizes[0] is {kernel[0]}; with Direction BACKWARD "
                                      f"it must equal InputTensor.Sizes[1] ({channels}), the filter being {{input "
                                      f"channels, output channels / GroupCount, spatial...}}")
            return
        if kernel[0] % groups:
            raise ValidationError(f"{operator}: GroupCount {groups} does not divide FilterTensor.Sizes[0] "
                                  f"({kernel[0]} output channels); it must divide both channel counts")
        if kernel[1] * groups != channels:
            raise ValidationError(f"{operator}: FilterTensor.Sizes[1] is {kernel[1]}; it must be "
                                  f"{channels // groups} (InputTensor.Sizes[1] {channels} / GroupCount {groups}), "
                                  f"the filter being {{output channels, input channels / GroupCount, spatial...}}")

    def _check_spatial(self, operator: str) -> None:
        first = self.input_tensor.dimension_count - self.spatial_count
        for axis in range(self.spatial_count):
            extra = self.spatial_output_padding[axis]
            stride, dilation = self.spatial_strides[axis], self.spatial_dilations[axis]
            if not self.is_backward and extra:
                raise ValidationError(f"{operator}: OutputPadding[{axis}] is {extra}; with Direction FORWARD it "
                                      f"must be 0 (OutputPadding belongs to the transposed convolution)")
            if extra >= max(stride, dilation):
                raise ValidationError(f"{operator}: OutputPadding[{axis}] is {extra}; it must be less than "
                                      f"Strides[{axis}] ({stride}) or Dilations[{axis}] ({dilation})")
            size = self.input_tensor.sizes[first + axis]
            extent = (self.filter_tensor.sizes[first + axis] - 1) * dilation + 1
            padding = self.spatial_start_padding[axis] + self.spatial_end_padding[axis]
            if not self.is_backward and extent > size + padding:
                raise ValidationError(f"{operator}: FilterTensor.Sizes[{first + axis}] is "
                                      f"{self.filter_tensor.sizes[first + axis]}, which with Dilations[{axis}] "
                                      f"{dilation} spans {extent}; it must fit the padded input, "
                                      f"InputTensor.Sizes[{first + axis}] {size} + StartPadding + EndPadding "
                                      f"{padding}")
            if self.is_backward and (size - 1) * stride + extent + extra <= padding:
                raise ValidationError(f"{operator}: StartPadding[{axis}] is {self.spatial_start_padding[axis]} and "
                                      f"EndPadding[{axis}] {self.spatial_end_padding[axis]}; with Direction BACKWARD "
                                      f"their sum must be less than (in - 1) * S + (k - 1) * D + 1 + OutputPadding = "
                                      f"{(size - 1) * stride + extent + extra} on spatial axis {axis}, for an output "
                                      f"of at least one element")

    def _formula_text(self) -> str:
        if self.is_backward:
            return ("N, GroupCount * FilterTensor.Sizes[1], then (in - 1) * Strides + (k - 1) * Dilations + 1 - "
                    "StartPadding - EndPadding + OutputPadding per spatial axis")
        return ("N, FilterTensor.Sizes[0], then (in + StartPadding + EndPadding - ((k - 1) * Dilations + 1)) // "
                "Strides + 1 per spatial axis")
