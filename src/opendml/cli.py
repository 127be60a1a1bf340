"""The `opendml` command line: dispatch and validate DxDispatch JSON models, list operators.

No operator logic here: parse arguments, call model/, print. Every user error is one line on stderr and exit
status 2; no traceback reaches the user for a bad model, a missing file or a bad option.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .device import Device
from .errors import DmlError
from .model.fields import fields_of
from .model.reader import Limits, ModelError, default_max_memory, operator_class, read_model
from .model.runner import RunOptions, compile_all, run
from .ops.base import OperatorDesc
from .types import FeatureLevel


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def _size(text: str) -> int:
    """A byte count with an optional K, M, G or T suffix."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    text = text.strip().upper().removesuffix("B")
    factor = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    try:
        value = int(float(number) * factor)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 512M or 4G") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _level(text: str) -> FeatureLevel:
    try:
        return FeatureLevel.parse(text)
    except DmlError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="opendml", description="DirectML's operators on any machine: run DxDispatch JSON models.")
    parser.add_argument("--version", action="version", version=f"opendml {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def add_model_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("model", type=Path, help="the JSON model file")
        command.add_argument("--feature-level", type=_level, default=FeatureLevel.LEVEL_6_4,
                             help="the device's feature level, e.g. 5_2 or 5.2 (default 6_4)")
        command.add_argument("--backend", default="cpu", help="the device's backend (default cpu)")
        command.add_argument("-d", "--debug", action="store_true", help="the debug layer's extra checks")
        command.add_argument("--max-memory", type=_size, default=default_max_memory(),
                             help="the most memory a model's resources may take, e.g. 512M (default: a quarter of "
                                  "the machine's memory)")
        command.add_argument("--allow-outside-paths", action="store_true",
                             help="let sourcePath name files outside the model's folder, and writeFile write "
                                  "outside --output-path (default: the current folder)")

    dispatch = commands.add_parser("dispatch", help="run a model's commands")
    add_model_options(dispatch)
    dispatch.add_argument("-i", "--dispatch-iterations", type=_count, default=1,
                          help="dispatch each dispatch command N times and print min/median/max times")
    dispatch.add_argument("-w", "--warmup-samples", type=_count, default=0,
                          help="untimed dispatches before the timed ones")
    dispatch.add_argument("--print-commands", action="store_true", help="print each command before running it")
    dispatch.add_argument("--output-path", type=Path, default=None, help="folder for writeFile targets")

    validate = commands.add_parser("validate", help="parse a model and create every operator; run nothing")
    add_model_options(validate)

    ops = commands.add_parser("ops", help="the implemented operators, their fields and support tables")
    ops.add_argument("operator", nargs="?", help="e.g. REDUCE or DML_OPERATOR_REDUCE")
    ops.add_argument("--feature-level", type=_level, default=FeatureLevel.LEVEL_6_4)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "ops":
            return _ops(args.operator, args.feature_level)
        limits = Limits(max_memory=args.max_memory, allow_outside_paths=args.allow_outside_paths)
        device = Device(feature_level=args.feature_level, backend=args.backend, debug=args.debug)
        if args.command == "validate":
            return _validate(args.model, device, limits)
        model = read_model(args.model, limits)
        options = RunOptions(iterations=args.dispatch_iterations, warmup=args.warmup_samples,
                             print_commands=args.print_commands, output_path=args.output_path,
                             allow_outside_paths=args.allow_outside_paths)
        run(model, device, options, lambda line: print(line, flush=True))
        return 0
    except DmlError as error:
        print(f"error: {one_line(str(error))}", file=sys.stderr)
        return 2
    except MemoryError:
        print("error: out of memory; lower the model's sizes or --max-memory", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`); nothing more to say
        sys.stderr.close()
        return 0


def one_line(text: str) -> str:
    """A message as one printable line: a model's names may hold newlines and control characters."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def _validate(path: Path, device: Device, limits: Limits) -> int:
    problems: list[ModelError] = []
    model = read_model(path, limits, collect=problems)
    compile_all(model, device, collect=problems)
    for problem in problems:
        print(f"error: {one_line(str(problem))}", file=sys.stderr)
    if problems:
        return 2
    print(f"{path}: {len(model.resources)} resources, {len(model.dispatchables)} dispatchables, "
          f"{len(model.commands)} commands: valid at feature level {device.feature_level}")
    return 0


def _ops(name: str | None, level: FeatureLevel) -> int:
    if name is None:
        for operator_type, desc_type in sorted(OperatorDesc.registry.items()):
            print(f"{operator_type.dml_name:40} {desc_type.__name__}")
        return 0
    desc_type = operator_class(name, "operator")
    print(f"{desc_type.OPERATOR_TYPE.dml_name} ({desc_type.__name__})")
    print("fields:")
    for item in fields_of(desc_type):
        print(f"  {item.describe()}")
    print(f"support at feature level {level}:")
    for title, table in desc_type.support_tables().items():
        rows = [support_row for support_row in table if support_row.level <= level]
        heading = f"  {title}:" if title else ""
        if heading:
            print(heading)
        indent = "    " if title else "  "
        if not rows:
            first = min(support_row.level for support_row in table)
            print(f"{indent}not supported (from feature level {first})")
            continue
        current = max(rows, key=lambda support_row: support_row.level)
        for tensor, support in current.tensors.items():
            types = ", ".join(data_type.name for data_type in support.data_types)
            print(f"{indent}{tensor}: DimensionCount {support.ranks_text()}; {types}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
