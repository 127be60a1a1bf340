"""The GPU kernel: binds views to device ranges, uploads host memory, records and submits, reads back.

An operator module subclasses `GpuKernel` and implements `record(recorder, inputs, outputs)` over `Bound` ranges
(and, for debug-layer checks of the data, `check(inputs)`, which may read back and raise before anything is
written). Pipelines are built in the subclass's constructor, at compile time.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import BindingError
from ...ops.base import OperatorDesc
from ...tensor import TensorDesc
from .. import DeviceRange
from . import specialize
from .context import Bound, Dispatch, GpuBuffer, GpuContext, Recorder, make_dispatch
from .elementwise import COMMON, Output, Params
from .wgsl import params_binding, prelude, tensor_input

_HERE = Path(__file__).parent


def template(name: str, **values: object) -> str:
    """The text of a `.wgsl` file beside this module, each `{KEY}` replaced by values[KEY]."""
    text = (_HERE / name).read_text()
    return re.sub(r"\{([A-Z][A-Z0-9_]*)\}", lambda match: str(values[match.group(1)]), text)


#: Names each kernel in its context's cache (an id may name another kernel once this one is gone, a token never).
_tokens = itertools.count()


class GpuKernel:
    """A compiled operator on the GPU: `kernel(input_views, output_views)` as the Device calls it.

    An execute on device ranges caches the dispatches it made (their pipelines, bind groups and parameter buffers)
    in the context, keyed on this kernel and the ranges' buffers and offsets: an execute again on the same ranges
    records them again, without binding or making anything (the entry goes when one of those buffers does)."""

    #: Whether `record` makes the same dispatches whenever it is given the same ranges: true of a kernel whose
    #: dispatches depend only on its descriptor, the buffers it made at compile time and the Bound ranges.
    replayable = True

    def __init__(self, context: GpuContext, desc: OperatorDesc) -> None:
        self.context = context
        self.desc = desc
        self.label = desc.label
        self.input_descs: list[TensorDesc | None] = [tensor for _, tensor in desc.input_slots()]
        self.output_descs: list[TensorDesc] = [tensor for _, tensor in desc.output_slots()]
        self.input_names = [name for name, _ in desc.input_slots()]
        self.output_names = [name for name, _ in desc.output_slots()]
        self._token = next(_tokens)
        self._checks = type(self).check is not GpuKernel.check

    # -- for subclasses -----------------------------------------------------------------------------------------

    def record(self, recorder: Recorder, inputs: Sequence[Bound | None], outputs: Sequence[Bound]) -> None:
        raise NotImplementedError

    def check(self, inputs: Sequence[Bound | None]) -> None:
        """Debug-layer checks of the input data, before anything is recorded (none by default)."""

    def scratch(self, size: int) -> Any:
        """A device buffer for intermediate values, allocated once at compile time."""
        return self.context.allocate(size)

    # -- dispatch -----------------------------------------------------------------------------------------------

    def __call__(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Binds, checks, records and submits, then reads back the host outputs. Nothing is written unless the
        whole dispatch succeeds: the kernel's dispatches are all made (`StagedRecorder`) before any is recorded, and
        every host output is read back before any is copied into the caller's memory."""
        context = self.context
        with context.lock:
            key = self._device_key(inputs, outputs)
            work: list[Dispatch] | None = None if key is None else context.cached(key)
            if work is not None:
                if self._checks:
                    self.check([None if desc is None or view is None else self._bind(name, desc, view, [],
                                                                                      is_output=False)
                                for name, desc, view in zip(self.input_names, self.input_descs, inputs, strict=True)])
                context.run(work)
                return
            host_outputs: list[tuple[np.ndarray[Any, Any], Any]] = []
            bound_inputs: list[Bound | None] = []
            for name, desc, view in zip(self.input_names, self.input_descs, inputs, strict=True):
                bound_inputs.append(None if desc is None or view is None
                                    else self._bind(name, desc, view, host_outputs, is_output=False))
            bound_outputs = [self._bind(name, desc, view, host_outputs, is_output=True)
                             for name, desc, view in zip(self.output_names, self.output_descs, outputs, strict=True)]
            if host_outputs or any(not isinstance(view, DeviceRange) for view in inputs if view is not None):
                context.flush()   # host data was written with queue writes: nothing recorded earlier may follow
            self.check(bound_inputs)
            staged = StagedRecorder(context)
            self.record(staged, bound_inputs, bound_outputs)
            if key is not None:
                ranges = [bound.handle for bound in (*bound_inputs, *bound_outputs) if bound is not None]
                context.remember(key, staged.work, [*ranges, *staged.handles])
            context.run(staged.work)
            results = [context.read(handle, 0, target.size) for target, handle in host_outputs]
            for (target, _), data in zip(host_outputs, results, strict=True):
                target[:] = np.frombuffer(data, np.uint8)

    def again(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> Callable[[], None] | None:
        """What runs this kernel again on the views of the call just made (CompiledOperator keeps it for the same
        Bindings): the dispatches that call made, recorded and submitted anew. None where a view is host memory
        (uploaded at each call) or the kernel checks data at every call (the debug layer)."""
        if self._checks:
            return None
        key = self._device_key(inputs, outputs)
        context = self.context
        with context.lock:
            work = None if key is None else context.cached(key)
        if work is None:
            return None
        run = context.run
        return lambda: run(work)

    def _device_key(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> tuple[Any, ...] | None:
        """The cache key of an execute: this kernel and each view's buffer (by id) and offset; None where a view is
        host memory (uploaded anew at each call) or the kernel is not `replayable`."""
        if not self.replayable:
            return None
        key: list[Any] = ["work", self._token]
        for desc, view in zip(self.input_descs, inputs, strict=True):
            if desc is None or view is None:
                key.append(None)
            elif isinstance(view, DeviceRange):
                key.append((id(view.memory.handle), view.offset))   # type: ignore[attr-defined]
            else:
                return None
        for view in outputs:
            if not isinstance(view, DeviceRange):
                return None
            key.append((id(view.memory.handle), view.offset))   # type: ignore[attr-defined]
        return tuple(key)

    def _bind(self, name: str, desc: TensorDesc, view: Any, host_outputs: list[tuple[np.ndarray[Any, Any], Any]],
              *, is_output: bool) -> Bound:
        context = self.context
        total = desc.total_tensor_size_in_bytes
        element_size = desc.data_type.element_size
        if isinstance(view, DeviceRange):
            memory = view.memory
            assert isinstance(memory, GpuBuffer)
            aligned = view.offset - view.offset % context.offset_alignment
            size = view.offset - aligned + total
            if size > context.max_binding_size:
                raise BindingError(f"{self.label}: {name} needs a binding of {size} bytes from offset {aligned}; the "
                                   f"adapter binds at most max-storage-buffer-binding-size "
                                   f"({context.max_binding_size} bytes)")
            return Bound(memory.handle, aligned, size, (view.offset - aligned) // element_size)
        # The view holds the bound range's whole elements: a 64-bit tensor whose TotalTensorSizeInBytes is not a
        # multiple of 8 has 4 bytes past its last element that no element reaches, left as they are.
        data = np.asarray(view).reshape(-1).view(np.uint8)[:total]
        handle = context.allocate(total)
        context.write(handle, 0, data)
        if is_output:
            host_outputs.append((data, handle))
        return Bound(handle, 0, max(4, total), 0)


class StagedRecorder(Recorder):
    """Takes a kernel's dispatches (`Pass.record`) and makes each one (its pipeline, bind group and parameter
    buffer) without recording it: `GpuKernel` records `work` once the kernel has made them all, so that a kernel
    failing half-way leaves none of its dispatches in a batch (whose later submission would write some outputs)."""

    def __init__(self, context: GpuContext) -> None:  # no command encoder: nothing is recorded here
        self.context = context
        self.work: list[Dispatch] = []
        self.handles: list[Any] = []    # the wgpu buffers that `work` binds

    def dispatch(self, source: str, bindings: Sequence[Bound | Any], params: np.ndarray[Any, Any],
                 groups: tuple[int, int] | tuple[int, int, int]) -> None:
        self.work.append(make_dispatch(self.context, source, bindings, params, groups))
        self.handles.extend(binding.handle if isinstance(binding, Bound) else binding for binding in bindings)


@dataclass(frozen=True)
class Pass:
    """One dispatch as compiled: its WGSL (its pipeline built), parameters and work-group counts."""

    wgsl: str
    params: np.ndarray[Any, Any]
    groups: tuple[int, int]

    def record(self, recorder: Recorder, bindings: Sequence[Bound | Any]) -> None:
        recorder.dispatch(self.wgsl, bindings, self.params, self.groups)


def compile_pass(context: GpuContext, wgsl: str, bindings: int, params: Params, groups: tuple[int, int]) -> Pass:
    """A Pass of `wgsl` over `bindings` storage buffers, specialized to `params` where specialize.ENABLED (its
    layout blocks and constant words as WGSL constants: specialize.render); its pipeline is built here, at compile
    time, and cached by the source, so an operator with the same specialization reuses it."""
    source = specialize.render(wgsl, params)
    context.pipeline(source, bindings)
    return Pass(source, params.array(), groups)


class _Deferred:
    """A pass built the first time it is needed (`get`), from a source rendered at compile time."""

    def __init__(self, context: GpuContext, source: str, bindings: int, params: Params, groups: tuple[int, int]
                 ) -> None:
        self.context, self.source, self.bindings, self.params, self.groups = context, source, bindings, params, groups
        self.built: Pass | None = None

    def get(self) -> Pass:
        if self.built is None:   # the source is rendered already: build it as it is
            self.context.pipeline(self.source, self.bindings)
            self.built = Pass(self.source, self.params.array(), self.groups)
        return self.built


@dataclass(frozen=True)
class WordPass(Pass):
    """A pass that moves whole 16-byte words (`per_word` elements each) of the tensors bound at `slots`. Their
    bases are known only at execute: where one is not a whole word (an offset finer than DML's 16 bytes), the
    element-by-element pass `scalar` runs instead, built then, once."""

    slots: tuple[int, ...] = ()
    per_word: int = 4
    scalar: _Deferred | None = None

    def record(self, recorder: Recorder, bindings: Sequence[Bound | Any]) -> None:
        if self.scalar is not None and any(isinstance(binding, Bound) and binding.base % self.per_word
                                           for binding in (bindings[slot] for slot in self.slots)):
            self.scalar.get().record(recorder, bindings)
            return
        super().record(recorder, bindings)


def compile_words(context: GpuContext, word_source: str, scalar_source: str, bindings: int, params: Params,
                  groups: tuple[int, int], scalar_groups: tuple[int, int], slots: Sequence[int], per_word: int
                  ) -> WordPass:
    """A WordPass of `word_source` (built now) over whole words of the tensors at `slots`, with `scalar_source`
    (specialized now, built where needed) for bases that are not whole words."""
    source = specialize.render(word_source, params)
    context.pipeline(source, bindings)
    scalar = _Deferred(context, specialize.render(scalar_source, params), bindings, params, scalar_groups)
    return WordPass(source, params.array(), groups, tuple(slots), per_word, scalar)


class ElementwiseSource:
    """Assembles the WGSL of an elementwise pass: input buffers with their loads, the output, the operator's
    `value` function and the entry point. The inputs named in `computed` are only computed with (never loaded raw;
    see wgsl.tensor_input). With `words`, where specialized and the output's layout allows (elementwise.word_layout),
    `compile` gives a WordPass whose invocations store whole 16-byte words of the output (`value` of each of their
    elements)."""

    def __init__(self, inputs: Sequence[tuple[str, TensorDesc]], output: TensorDesc, params: Params,
                 output_slot: int | None = None, computed: Sequence[str] = (), words: bool = False) -> None:
        self.inputs = list(inputs)
        self.computed = frozenset(computed)
        self.output_slot = len(self.inputs) if output_slot is None else output_slot
        self.params = params
        self.output = Output(output, "out", self.output_slot, params, words=words)

    def compile(self, context: GpuContext, body: str) -> Pass:
        """The pass of `body` (which defines `value`), bound as the inputs then the output."""
        scalar = self.render(body, context.f16)
        bindings = len(self.inputs) + 1
        if not self.output.per_word:
            return compile_pass(context, scalar, bindings, self.params, self.output.groups())
        word_main, groups = self.output.word_pass()
        return compile_words(context, self.render(body, context.f16, main=word_main), scalar, bindings, self.params,
                             groups, self.output.groups(), [self.output_slot], self.output.per_word)

    def render(self, body: str, f16: bool, extra_types: Sequence[Any] = (), main: str | None = None) -> str:
        """The WGSL; `f16`: whether the adapter has shader-f16; `main`: the output's binding and entry point
        (Output.word_pass's), in place of its element-by-element ones."""
        types = {desc.data_type for _, desc in self.inputs} | {self.output.data_type, *extra_types}
        parts = [prelude({data_type for data_type in types if data_type.name != "FLOAT64"}),
                 params_binding(len(self.inputs) + 1), COMMON]
        for slot, (name, desc) in enumerate(self.inputs):
            parts.append(tensor_input(name, desc.data_type, slot, computed=name in self.computed, f16=f16))
        if main is None:
            parts += [self.output.declarations(), body, self.output.main()]
        else:
            parts += [body, main]
        return "".join(parts)
