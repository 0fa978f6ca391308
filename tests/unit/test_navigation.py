"""The page registry is consistent (scripts exist, URL paths are unique file stems); torch stays out of the app."""

import ast

from ui.elements.navigation import GLOSSARY, HOME, PAGES, ROOT

ALL = [HOME, *PAGES, GLOSSARY]


def test_every_registered_script_exists():
    for spec in ALL:
        assert spec.path.is_file(), spec.script


def test_url_paths_are_unique_and_follow_file_stems():
    paths = [spec.url_path for spec in ALL]
    assert len(set(paths)) == len(paths)
    assert HOME.url_path == ""
    for spec in [*PAGES, GLOSSARY]:
        assert spec.script.startswith("pages/") and spec.url_path == spec.path.stem


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module.split(".")[0]


def test_running_app_never_imports_torch():
    runtime = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("core/*.py")]
    offenders = [p.name for p in runtime if p.name != "training.py" and "torch" in set(_imports(p))]
    assert offenders == []


def test_engine_is_free_of_streamlit_and_plotly():
    offenders = [p.name for p in ROOT.glob("core/*.py") if {"streamlit", "plotly"} & set(_imports(p))]
    assert offenders == []
