"""The glossary page (primer Appendix C) in AppTest: every term is an anchored heading that links and tips point to."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.glossary import link, terms, tip
from ui.navigation import GLOSSARY

ROOT = Path(__file__).resolve().parents[2]


def open_glossary() -> AppTest:
    at = AppTest.from_file(str(ROOT / GLOSSARY.script), default_timeout=30).run()
    assert not at.exception, at.exception
    return at


def test_glossary_renders_with_its_landmark():
    assert open_glossary().title[0].value == GLOSSARY.landmark


def test_every_term_is_an_anchored_heading_in_the_primers_order():
    headings = open_glossary().subheader
    assert [heading.proto.anchor for heading in headings] == list(terms())
    assert [heading.value for heading in headings] == [entry["term"] for entry in terms().values()]


def test_every_definition_is_shown_and_used_by_tips_and_links():
    shown = "\n".join(element.value for element in open_glossary().markdown)
    for key, entry in terms().items():
        assert entry["definition"] in shown
        assert entry["definition"] in tip(key)
        assert link(key).endswith(f"(/{GLOSSARY.url_path}#{key})")


def test_glossary_covers_the_cnn_page_terms():
    assert {"convolution", "attention-head", "softmax"} <= set(terms())
