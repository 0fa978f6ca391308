"""Every cache the app keeps is bounded, and says its bound beside it: a function cached on its arguments (which a
link, a typed value or an uploaded file can vary without end) uses lru_cache with a maximum number of entries and a
comment '# N × ~X kB' (entries × the size of one, as serialized); a cache without arguments holds one value. Together
the bounds stay within what one server can spare for every reader at once."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTE = re.compile(r"#\s*([\d,]+) × ~([\d.]+) kB")
TOTAL_MB = 64  # all the caches' bounds together


def _cached_functions():
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "ui").rglob("*.py")]):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                text = ast.unparse(decorator)
                if "cache" in text:
                    args = [a for a in node.args.args if a.arg != "self"] + node.args.kwonlyargs
                    yield path, node.name, text, bool(args), lines[decorator.lineno - 1]


def test_every_cache_on_arguments_is_bounded_and_states_its_bound():
    total_kb, seen = 0.0, 0
    for path, name, decorator, has_args, line in _cached_functions():
        where = f"{path.relative_to(ROOT)}: {name}"
        if not has_args:
            continue  # one value, computed once
        bound = re.fullmatch(r"lru_cache\(maxsize=(\d+)\)", decorator)
        assert bound, f"{where} is cached on its arguments without a bound ({decorator})"
        note = NOTE.search(line)
        assert note, f"{where}: no '# N × ~X kB' beside its cache"
        assert int(note.group(1).replace(",", "")) == int(bound.group(1)), f"{where}: the comment's N is not maxsize"
        total_kb += int(bound.group(1)) * float(note.group(2))
        seen += 1
    assert seen > 40  # the scan found the caches (it would pass on none)
    assert total_kb / 1000 <= TOTAL_MB, f"the caches' bounds add up to {total_kb / 1000:.0f} MB"
