"""No figure typed into the pages' prose: every digit in a sentence of ui/ or pages/ is computed, read from an asset,
or on the explicit list below.

A prose string is a string literal (an f-string's literal parts, its fields read as "{}") with at least four words of
letters, outside docstrings, LaTeX and CSS/HTML. Any digit left in it once the allowed patterns are removed fails the
test with its file and line. The allowed patterns are units and names, section numbers and the primer's quoted words;
each carries its reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("ui", "pages")

# Fixed with the cost page's workload-first rewrite (its two engineers are rewriting these files now); every other
# cost page file, the kv_cost lead included, passes. Empty this set once they do.
COST_PAGE_PENDING: set[str] = set()  # every cost page file is checked now

ALLOWED = (
    # Section numbers and the primer's parts: names, not figures.
    (r"§\s?\d(?:\s?[–-]\s?\d)?", "a primer section, as the primer numbers it"),
    (r"\b(?:Section|Sections|Step|Steps|Note|Part)\s\d+(?:\s?[–-]\s?\d+)?\b", "a primer section, step or part"),
    (r"\bAppendix [A-C]\b", "an appendix letter"),
    # Units and technical names whose digits are part of the name.
    (r"\b(?:FP|BF|INT)(?:8|16|32|4)\b", "number formats, the names their vendors give them"),
    (
        r"\b(?:GPT-2|GPT-3|Llama-\d(?:\.\d)?|Gemma-2|Qwen2\.5|DeepSeek-V3|Phi-3|Mixtral-8x7B|Mistral-7B)\b",
        "model names",
    ),
    (r"\b(?:H100|H200|A100|L40S|L4|MI300X|B200)\b", "GPU names"),
    (r"\bHBM\d?e?\b|\bGDDR\d\b|\bNVLink \d\b|\bPCIe Gen\d\b", "memory and link names"),
    (r"\b2³⁰\b|10⁹|2\^30|10\^9", "the two gigabytes' definitions, units"),
    (r"\btop-\d\b|\bTop-\d\b|\btop \d\b|\bTop \d\b", "top-1 / top 5: the name of a measure"),
    (r"\bp(?:50|95|99)s?\b|\b(?:50|95|99)th percentile\b", "a percentile's name (p95: the slowest one in twenty)"),
    (r"\b[A-Z]\d\b", "coordinate-free names such as L1 or h2 in code identifiers"),
    (r"h⁰|h¹|h²|LN₁|LN₂|W_1|W_2|b_1|b_2|W₁|W₂|d_k|d_v", "the primer's symbols with their indices"),
    (r"\b[1-9](?:st|nd|rd|th)\b", "ordinals in a table's column names (1st, 2nd, 3rd)"),
    (r"[①-⑩]", "the ablation lab's tab numbers"),
    (r"\bMethods? [12]\b", "Appendix A's names for its two ways of switching attention off"),
    (r"\b2-D\b", "the name of a two-axis view"),
    (r"\b100%", "all of a share"),
    (r"\b1/\{\}", "a step of one in a count filled from the engine"),
    (r"\b26 letters\b", "the primer's §1 flowchart, quoted: 'softmax over 26 letters'"),
    (
        r"\bit read 1\.000 throughout\b",
        "the primer's §6 words on its discarded rule, quoted: 'it read 1.000 throughout'",
    ),
    # Rounding and shape conventions: descriptions of the display, not figures of the model.
    (r"\b0 \(identical to the last bit\)", "the primer's printed wording for an exact identity"),
    (
        r"\b(?:sums?|to|of|is|are|at|mean|spread|weight|scores?|becomes?|reached|between 0 and)\s[01]\b(?!\.\d)"
        r"|= [01]\b(?!\.\d)",
        "0 and 1 as the ends of a scale (a probability, a share, a normalised row) and 'set to 0': definitions",
    ),
    (r"\b0 or 1\b|\b1 = |\b1 (?:means|is)\b", "definitions of a scale"),
    (r"\b0 = ", "a field's zero defined (0 = none, 0 = not stated): what the value means, not a figure"),
    (r"\bper 1M\b", "a price unit: dollars per million tokens"),
    (
        r"\b12 · L · d_model²|\b[48]·d_model²",
        "the primer's §4 rule of thumb, quoted ('12 · L · d_model²', Kaplan et al.), and its two parts",
    ),
    (r"−∞|-inf", "the causal mask's minus infinity"),
    (r"\b(?:1|2|3|4)\s?×\s?\{\}|\{\}\s?×\s?\{\}", "shapes filled from the trace"),
    (r"\bx\d\b", "an axis name"),
    (r"\bfloat(?:16|32|64)\b", "number types, by name"),
    (r"\(2x\)|\b2·", "the linearity test, f(2x) = 2·f(x): doubling an input, a definition"),
    (r"\b[13]-year\b|\([13] years?\)|\b1 or 3 years\b", "a cloud reservation's term, by the name providers sell it"),
    (r"\b8-GPU\b", "the server class the presets price (HGX and DGX boards of eight GPUs), by its name"),
    (r"\b7B\b", "the primer's name for its §4 model, quoted ('modern 7B')"),
    (r"\b(?:below|above|towards) [01]\b(?!\.\d)", "the neutral temperature (1) and the floor of a scale (0)"),
)
ALLOWED_RE = re.compile("|".join(f"(?:{pattern})" for pattern, _ in ALLOWED))
WORD = re.compile(r"[A-Za-z]{2,}")
LATEX = re.compile(r"\\[a-zA-Z]+|\^\{|_\{")
MARKUP = re.compile(r"</?[a-z][a-z0-9]*[ >]|\{[^}]*:[^}]*;|^\s*[.#\[][\w-]+.*\{")


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                ids.add(id(first.value))
    return ids


def _format_spec_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            ids.update(id(n) for n in ast.walk(node.format_spec))
    return ids


def _text(node: ast.JoinedStr) -> str:
    return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)


def prose_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) for every prose string literal of one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree) | _format_spec_ids(tree)
    inner = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in inner:
            continue
        if isinstance(node, ast.JoinedStr):
            text = _text(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if len(WORD.findall(text)) < 4 or text.count(" ") < 3 or LATEX.search(text) or MARKUP.search(text):
            continue
        found.append((node.lineno, text))
    return found


def offenders(path: Path) -> list[str]:
    """Each prose string of the module that still holds a digit once the allowed patterns are removed, with the
    words around its first such digit."""
    bad = []
    for line, text in prose_strings(path):
        left = ALLOWED_RE.sub("", text)
        digit = re.search(r"\d", left)
        if digit:
            bad.append(f"{path.relative_to(ROOT)}:{line}: …{left[max(0, digit.start() - 40) : digit.end() + 30]}…")
    return bad


def scanned_files() -> list[Path]:
    return sorted(p for folder in SCANNED for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", scanned_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_typed_figure_in_prose(path: Path) -> None:
    if str(path.relative_to(ROOT)) in COST_PAGE_PENDING:
        pytest.skip("the cost page's prose is fixed with its rewrite")
    assert offenders(path) == []


def test_leads_outside_kv_cost_pass() -> None:
    """ui/elements/leads.py is pending only for its kv_cost function: every other sentence in it passes now."""
    path = ROOT / "ui" / "elements" / "leads.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    cost = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "kv_cost")
    bad = [o for o in offenders(path) if not cost.lineno <= int(o.split(":")[1]) <= cost.end_lineno]
    assert bad == []


def test_the_scanner_catches_a_typed_figure_and_spares_an_allowed_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'x = 1\nA = "The model has 736 parameters in all."\nB = f"The model has {x} parameters in §6 of it."\n'
        'C = f"Share {x:.3f} of the top-1 answers, as Section 6 says."\n',
        encoding="utf-8",
    )
    found = [text for _, text in prose_strings(sample)]
    assert len(found) == 3
    left = [t for t in found if re.search(r"\d", ALLOWED_RE.sub("", t))]
    assert left == ["The model has 736 parameters in all."]
