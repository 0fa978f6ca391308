"""The glossary page in AppTest: the primer's Appendix C as printed, then the dashboard's own terms, each an anchored
heading; a link (`?term=…`) opens the page on its term, and a bad term is named, never rendered as markdown."""

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.elements.glossary import DASHBOARD, PRIMER, entry_markdown, href, link, terms, tip
from ui.elements.navigation import GLOSSARY

ROOT = Path(__file__).resolve().parents[2]


def open_glossary(**query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / GLOSSARY.script), default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def anchors(at: AppTest) -> list[str]:
    """The listed entries' heading ids, in page order (the entry shown first for a link is not listed here)."""
    return re.findall(r'<h3 id="([^"]+)">', "\n".join(m.value for m in at.markdown))


def test_glossary_renders_with_its_landmark():
    assert open_glossary().title[0].value == GLOSSARY.landmark


def test_primer_terms_first_in_their_order_then_the_dashboards_own_under_their_own_header():
    at = open_glossary()
    headers = [h.value for h in at.header]
    assert headers == ["The primer's glossary (Appendix C)", "The dashboard's own terms"]
    primer = [key for key, entry in terms().items() if entry["origin"] == PRIMER]
    own = [key for key, entry in terms().items() if entry["origin"] == DASHBOARD]
    assert anchors(at) == primer + own
    assert len(at.markdown) == 3  # the summary, then each origin's entries as one element
    assert len(primer) == 16  # Appendix C's terms, as printed
    raw = json.loads((ROOT / "assets" / "glossary.json").read_text(encoding="utf-8"))["terms"]
    assert [entry["key"] for entry in raw[:16]] == primer
    assert any("not in the primer" in caption.value.lower() for caption in at.caption)


def test_the_dashboards_terms_cover_what_its_pages_say():
    needed = {
        "gqa", "mla", "tensor-parallelism", "quantization", "paged-kv", "prefix-cache", "ttft", "tpot", "mfu-mbu",
        "bigram-slot", "copula-slot", "class-mass", "held-out", "zero-mean-ablation", "activation-patching",
        "logit-lens",
    }  # fmt: skip
    own = {key for key, entry in terms().items() if entry["origin"] == DASHBOARD}
    assert needed <= own
    for key in ("gqa", "quantization", "ttft", "mfu-mbu"):
        assert {"GQA", "FP8", "TTFT", "MFU"} & set(terms()[key]["term"].replace(",", " ").split())


def test_every_definition_is_shown_and_used_by_tips_and_links():
    shown = "\n".join(element.value for element in open_glossary().markdown)
    for key, entry in terms().items():
        assert entry["definition"] in shown
        assert entry["definition"] in tip(key)
        assert link(key) == f"[{entry['short']}]({GLOSSARY.url_path}?term={key})"
        assert link(key, "the cache") == f"[the cache]({href(key)})"


def test_a_link_opens_the_page_on_its_term():
    at = open_glossary(term="kv-cache")
    first = at.subheader[0]
    assert first.value == terms()["kv-cache"]["term"]
    assert terms()["kv-cache"]["definition"] in at.markdown[1].value


def test_a_dashboard_term_is_marked_as_not_the_primers_when_asked_for():
    at = open_glossary(term="ttft")
    assert at.subheader[0].value == terms()["ttft"]["term"]
    assert "not in the primer" in at.caption[1].value


def test_an_unknown_term_is_named_as_plain_text_and_changes_nothing_else():
    at = open_glossary(term="**bold**[x](http://evil)")
    assert len(at.warning) == 1
    assert at.text[0].value.endswith("**bold**[x](http://evil)")
    assert anchors(at) == list(terms())


def test_glossary_covers_the_cnn_page_terms():
    assert {"convolution", "attention-head", "softmax"} <= set(terms())


def test_find_a_term_filters_entries_and_names_a_search_that_found_nothing():
    at = open_glossary()
    at.text_input(key="glossary_find").set_value("cache").run()
    found = anchors(at)
    assert "kv-cache" in found and "prefix-cache" in found and "token" not in found
    at.text_input(key="glossary_find").set_value("**zebra**").run()
    assert not anchors(at) and at.text[0].value == "No term or definition contains “**zebra**”."


def test_every_page_links_the_words_it_uses_to_their_entries():
    from tests.app.helpers import run_page
    from ui.elements.leads import WORDS
    from ui.elements.navigation import PAGES

    assert {spec.url_path for spec in PAGES} == set(WORDS)
    for spec in PAGES:
        assert set(WORDS[spec.url_path]) <= set(terms())
        at = run_page(str(ROOT / spec.script))
        line = next(c.value for c in at.caption if c.value.startswith("Words on this page:"))
        for key in WORDS[spec.url_path]:
            assert link(key) in line


def test_an_entrys_markdown_shows_its_text_as_written():
    entry = {"term": "A <b> & C", "definition": "Reads <BOS> & then **bold**.", "short": "A", "origin": PRIMER}
    text = entry_markdown("a-b", entry)
    assert text == '<h3 id="a-b">A &lt;b&gt; &amp; C</h3>\n\nReads &lt;BOS> &amp; then **bold**.'


def test_typed_search_words_never_reach_the_entries_html():
    at = open_glossary()
    for typed in ("<img src=x onerror=alert(1)>", "[x](https://example.invalid)", "9" * 10_000, "cache<script>"):
        at.text_input(key="glossary_find").set_value(typed).run()
        assert not at.exception
        assert all(typed not in m.value for m in at.markdown)
        assert anchors(at) == [] and at.text[0].value.startswith("No term or definition contains")
