"""The overview (app.py) in AppTest: it renders, tells the primer's story and links every registered page."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.navigation import GLOSSARY, HOME, PAGES

ROOT = Path(__file__).resolve().parents[2]


def open_home() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception, at.exception
    return at


def test_home_renders_the_overview():
    at = open_home()
    assert at.title[0].value == HOME.landmark
    story = "\n".join(element.value for element in at.markdown)
    for idea in ("residual stream", "attention", "token"):
        assert idea in story.lower()


def test_home_links_every_registered_page_and_the_glossary():
    links = {link.proto.page: link.proto.label for link in open_home().get("page_link")}
    for spec in (*PAGES, GLOSSARY):
        assert spec.url_path in links, f"no link to {spec.script}"
        assert spec.title in links[spec.url_path]
    assert len(links) == len(PAGES) + 1


def test_navigation_opens_the_cnn_page_from_the_overview():
    at = open_home()
    at.switch_page("pages/cnn_vs_head.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == next(spec.landmark for spec in PAGES if spec.script == "pages/cnn_vs_head.py")
