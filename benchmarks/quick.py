"""``--quick``: the same benchmark on a smaller input, for the inner loop (≤ 5 minutes here).

A quick run prints the same ``RESULT`` line as the full one, so a change can be compared
before and after in minutes; the full run stays the figure the README reports. Options given
on the command line win over the quick defaults.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


def add_quick(parser: argparse.ArgumentParser, **smaller: Any) -> None:
    """Give ``parser`` a ``--quick`` flag that replaces the defaults named in ``smaller``."""
    shown = " ".join(f"--{name.replace('_', '-')} {value}" for name, value in smaller.items())
    parser.add_argument(
        "--quick", action="store_true", help=f"a smaller run of the same measurement: {shown}"
    )
    parser.set_defaults(quick_defaults=smaller)


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None
) -> argparse.Namespace:
    """``parser.parse_args`` with the quick defaults applied where no option was given."""
    args = parser.parse_args(argv)
    if args.quick:
        for name, value in args.quick_defaults.items():
            if getattr(args, name) == parser.get_default(name):
                setattr(args, name, value)
    return args
