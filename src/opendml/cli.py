"""The `opendml` command line: dispatch and validate DxDispatch JSON models, list operators.

No operator logic here: parse arguments, call model/, print. Every user error is one line on stderr and exit
status 2; no traceback reaches the user for a bad model, a missing file or a bad option. Every line written goes
through `say`, which escapes what a terminal would not show as itself (`printable`): a model's names and strings
cannot clear the screen, fake output lines or fail to encode.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import TextIO

from . import __version__
from .backends.gpu.context import INSTALL_HINT
from .convert import UINT32_MAX, UINT64_MAX, describe, printable
from .device import Device, list_adapters
from .errors import DmlError
from .model.fields import fields_of
from .model.reader import Limits, default_max_memory, operator_class, read_model
from .model.runner import RunOptions, compile_all, run
from .ops.base import OperatorDesc
from .types import FeatureLevel


def say(line: str, stream: TextIO | None = None) -> None:
    """Writes one line of output (stdout by default), escaped by `printable` for the stream's encoding."""
    stream = sys.stdout if stream is None else stream
    print(printable(line, getattr(stream, "encoding", None)), file=stream, flush=True)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """One line, escaped: argparse quotes some arguments as they were typed ("unrecognized arguments: ...")."""
        say(f"error: {message} (see {self.prog} --help)", sys.stderr)
        self.exit(2)


def _size(text: str) -> int:
    """A byte count with an optional K, M, G or T suffix (and B): 4096, 512M, 1.5G. Read exactly (no float
    rounding); at least 1 byte and at most 2^64 - 1."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    cleaned = text.strip().upper().removesuffix("B")
    factor = units.get(cleaned[-1:], 1)
    number = cleaned[:-1] if cleaned[-1:] in units else cleaned
    try:
        amount = Decimal(number)
    except (InvalidOperation, ValueError):
        raise argparse.ArgumentTypeError(f"{describe(text)} is not a size like 512M or 4G") from None
    if not amount.is_finite() or amount <= 0:
        raise argparse.ArgumentTypeError(f"{describe(text)} must be a positive size like 512M or 4G")
    value = math.floor(Fraction(amount) * factor) if amount.adjusted() <= 20 else UINT64_MAX + 1  # not 1e999999999
    if value > UINT64_MAX:
        raise argparse.ArgumentTypeError(f"{describe(text)} is more than 2^64 - 1 bytes")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{describe(text)} is less than 1 byte")
    return value


def _level(text: str) -> FeatureLevel:
    try:
        return FeatureLevel.parse(text)
    except DmlError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _integer_in(low: int, high: int) -> Callable[[str], int]:
    """An option's integer in [low, high] (DxDispatch's counts are UINT32s)."""
    def convert(text: str) -> int:
        try:
            value = int(text) if len(text) <= 40 else None   # longer text is no such integer: int() need not try
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{describe(text)} is not an integer in [{low}, {high}]")
        return value
    convert.__name__ = "integer"     # argparse names the type in some messages
    return convert


BACKENDS = ("cpu", "gpu")


class _ShowAdapters(argparse.Action):
    """-s: lists the adapters and exits as soon as it is parsed, like --version (no model or command needed)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="list the GPU adapters (name, vendor, backend, device type) and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        parser.exit(show_adapters())


def _add_show_adapters(command: argparse.ArgumentParser) -> None:
    # DxDispatch spells it -s/--show_adapters; --show-adapters matches opendml's other options.
    command.add_argument("-s", "--show_adapters", "--show-adapters", action=_ShowAdapters)


def _add_device_options(command: argparse.ArgumentParser) -> None:
    """The device's backend and adapter, with DxDispatch's letters (-a, -s)."""
    command.add_argument("--backend", choices=BACKENDS, default=None,
                         help="the device's backend: cpu (NumPy and numba kernels) or gpu (WebGPU compute shaders); "
                              "default cpu, or gpu when --adapter is given")
    command.add_argument("-a", "--adapter", metavar="NAME", default=None,
                         help="run on the first GPU adapter whose name contains NAME (case-insensitive, as "
                              "--show_adapters lists them); selects the gpu backend (default: the high-performance "
                              "adapter)")
    _add_show_adapters(command)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="opendml", description="DirectML's operators on any machine: run DxDispatch JSON models.")
    parser.add_argument("--version", action="version", version=f"opendml {__version__}")
    _add_show_adapters(parser)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def add_model_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("model", type=Path, help="the JSON model file")
        command.add_argument("--feature-level", type=_level, default=FeatureLevel.LEVEL_6_4,
                             help="the device's feature level, e.g. 5_2 or 5.2 (default 6_4)")
        _add_device_options(command)
        command.add_argument("-d", "--debug", action="store_true", help="the debug layer's extra checks")
        command.add_argument("--max-memory", type=_size, default=default_max_memory(),
                             help="the most memory a model's resources may take, e.g. 512M (default: a quarter of "
                                  "the machine's memory)")
        command.add_argument("--allow-outside-paths", action="store_true",
                             help="let sourcePath name files outside the model's folder, and writeFile write "
                                  "outside --output-path (default: the current folder)")

    dispatch = commands.add_parser("dispatch", help="run a model's commands")
    add_model_options(dispatch)
    dispatch.add_argument("-i", "--dispatch-iterations", "--dispatch_iterations", dest="dispatch_iterations",
                          type=_integer_in(1, UINT32_MAX), default=1, metavar="N",
                          help="dispatch each dispatch command N times and print min/median/max times (on the gpu "
                               "backend each time covers submitting the dispatch and waiting for it)")
    dispatch.add_argument("-w", "--warmup-samples", "--warmup_samples", dest="warmup_samples",
                          type=_integer_in(0, UINT32_MAX),
                          default=0, metavar="N", help="untimed dispatches before the timed ones")
    dispatch.add_argument("--print-commands", action="store_true", help="print each command before running it")
    dispatch.add_argument("--output-path", type=Path, default=None, help="folder for writeFile targets")

    validate = commands.add_parser("validate", help="parse a model and create every operator; run nothing")
    add_model_options(validate)

    ops = commands.add_parser("ops", help="the implemented operators, their fields and support tables")
    ops.add_argument("operator", nargs="?", help="e.g. REDUCE or DML_OPERATOR_REDUCE")
    ops.add_argument("--feature-level", type=_level, default=FeatureLevel.LEVEL_6_4)
    _add_device_options(ops)
    ops.epilog = ("With --backend or --adapter, the data types that backend does not support on this machine are "
                  "listed apart.")
    return parser


def _backend(args: argparse.Namespace) -> str:
    """--backend, else gpu when an adapter is named, else cpu."""
    if args.backend is not None:
        return str(args.backend)
    return "gpu" if args.adapter is not None else "cpu"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "ops":
            device = None
            if args.backend is not None or args.adapter is not None:
                device = Device(feature_level=args.feature_level, backend=_backend(args), adapter=args.adapter)
            return _ops(args.operator, args.feature_level, device)
        limits = Limits(max_memory=args.max_memory, allow_outside_paths=args.allow_outside_paths)

        def make_device() -> Device:   # once the model is read: a model refused while parsing starts no adapter
            return Device(feature_level=args.feature_level, backend=_backend(args), debug=args.debug,
                          adapter=args.adapter)

        if args.command == "validate":
            return _validate(args.model, make_device, limits)
        model = read_model(args.model, limits)
        options = RunOptions(iterations=args.dispatch_iterations, warmup=args.warmup_samples,
                             print_commands=args.print_commands, output_path=args.output_path,
                             allow_outside_paths=args.allow_outside_paths)
        run(model, make_device(), options, say)
        return 0
    except DmlError as error:
        say(f"error: {error}", sys.stderr)
        return 2
    except MemoryError:
        say("error: out of memory; lower the model's sizes or --max-memory", sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`); nothing more to say
        sys.stderr.close()
        return 0


def show_adapters() -> int:
    """-s: every adapter the gpu backend can pick, as DxDispatch lists them (a name, then its properties)."""
    adapters = list_adapters()
    if not adapters:
        say(f"No GPU adapter found: the gpu backend cannot run on this machine; {INSTALL_HINT}.")
        return 0
    for index, adapter in enumerate(adapters):
        if index:
            say("")
        say(adapter.name)
        say(f"-Vendor: {adapter.vendor or 'unknown'}")
        say(f"-Backend: {adapter.backend}")
        say(f"-Device type: {adapter.device_type}")
    return 0


def _validate(path: Path, make_device: Callable[[], Device], limits: Limits) -> int:
    """Every problem of the model, in the order a run meets them (its first is the one `dispatch` reports): those of
    reading it, then those of creating its operators on the device (made after reading, even when that failed, so
    that the operators that were read are checked too)."""
    problems: list[DmlError] = []
    model = read_model(path, limits, collect=problems)
    try:
        device = make_device()
    except DmlError as error:
        problems.append(error)
    else:
        compile_all(model, device, collect=problems)
    for problem in problems:
        say(f"error: {problem}", sys.stderr)
    if problems:
        return 2
    say(f"{path}: {len(model.resources)} resources, {len(model.dispatchables)} dispatchables, "
        f"{len(model.commands)} commands: valid at feature level {device.feature_level}{_on(device)}")
    return 0


def _on(device: Device) -> str:
    """Where a result holds, for every backend but the default cpu one: " on the gpu backend (adapter)"."""
    if device.backend.name == "cpu":
        return ""
    adapter = getattr(device.backend, "adapter", None)
    name, api = getattr(adapter, "name", None), getattr(adapter, "backend", None)
    return f" on the {device.backend.name} backend" + (f", adapter '{name}' ({api})" if name is not None else "")


def _ops(name: str | None, level: FeatureLevel, device: Device | None = None) -> int:
    """The operators, or one operator's fields and support tables at `level`; with a device, the data types its
    backend does not support here are listed apart ("not on the gpu backend here: INT64")."""
    if name is None:
        width = max(len(operator_type.dml_name) for operator_type in OperatorDesc.registry)
        for operator_type, desc_type in sorted(OperatorDesc.registry.items()):
            say(f"{operator_type.dml_name:{width}} {desc_type.__name__}")
        return 0
    desc_type = operator_class(name, "operator")
    say(f"{desc_type.OPERATOR_TYPE.dml_name} ({desc_type.__name__})")
    say("fields:")
    for item in fields_of(desc_type):
        say(f"  {item.describe()}")
    say(f"support at feature level {level}{'' if device is None else _on(device) or ' on the cpu backend'}:")
    for title, table in desc_type.support_tables().items():
        rows = [support_row for support_row in table if support_row.level <= level]
        heading = f"  {title}:" if title else ""
        if heading:
            say(heading)
        indent = "    " if title else "  "
        if not rows:
            first = min(support_row.level for support_row in table)
            say(f"{indent}not supported (from feature level {first})")
            continue
        current = max(rows, key=lambda support_row: support_row.level)
        for tensor, support in current.tensors.items():
            supported = [data_type for data_type in support.data_types
                         if device is None or device.backend.supports_data_type(data_type)]
            missing = [data_type.name for data_type in support.data_types if data_type not in supported]
            types = ", ".join(data_type.name for data_type in supported) or "none"
            if missing:
                assert device is not None
                types += f" (not on the {device.backend.name} backend here: {', '.join(missing)})"
            say(f"{indent}{tensor}: DimensionCount {support.ranks_text()}; {types}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
