"""What the project's commands share: a bad argument is one line on stderr naming it and exit code 2, never a usage
block or a traceback; a file to write is checked before any work starts.

Exit codes: 0 a result, 1 the request cannot be met (no plan exists; the line names the nearest), 2 a bad argument,
3 a simulation stopped by its cap (it says how far it got).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

OK, NO_PLAN, BAD_ARGUMENT, CAPPED = 0, 1, 2, 3


def fail(prog: str, message: str, code: int) -> NoReturn:
    """One line on stderr, then exit with `code`."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    raise SystemExit(code)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (no usage block) and exits 2."""

    def error(self, message: str) -> NoReturn:
        fail(self.prog, message, BAD_ARGUMENT)


def writable(suffix: str | None = None) -> Callable[[str], Path]:
    """An argparse type for a file the command will write: its folder exists and may be written, it is not a folder,
    and it ends in `suffix` when one is asked for; checked when the arguments are read, before any work."""

    def read(text: str) -> Path:
        path = Path(text)
        if suffix and path.suffix.lower() != suffix:
            raise argparse.ArgumentTypeError(f"it must name a {suffix} file, not {text!r}")
        folder = path.parent
        if not folder.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r}: the folder {str(folder)!r} does not exist")
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
        if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise argparse.ArgumentTypeError(f"{text!r} cannot be written here")
        return path

    return read
