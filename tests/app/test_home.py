"""The overview (app.py) in AppTest: a briefing. One lead sentence with live numbers, the §7 picture with live shapes
linking into the trace, five takeaways with engine numbers and links, the honest claim, every page linked."""

import html
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.explain.transformer import forward
from core.explain.weights import trained_model
from ui.elements.navigation import GLOSSARY, HOME, PAGES
from ui.overview import views as overview

ROOT = Path(__file__).resolve().parents[2]


def open_home() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception, at.exception
    return at


def test_home_leads_with_one_sentence_of_live_numbers():
    at = open_home()
    assert at.title[0].value == HOME.landmark
    lead = at.markdown[0].value
    model = trained_model()
    p_on = forward(model, [model.vocabulary.index(t) for t in overview.PROMPT])["hook_probs"][-1][
        model.vocabulary.index("on")
    ]
    assert f"{p_on:.3f}" in lead
    assert "attention off" in lead


def test_the_picture_shows_the_trained_models_live_shapes_and_links_each_block_to_its_trace_step():
    at = open_home()
    picture = next(e.proto.body for e in at.get("html") if 'class="pf"' in e.proto.body)
    config = trained_model().config
    for block in overview.pipeline():
        assert block.href in picture.replace("&amp;", "&")
    assert f"{len(overview.PROMPT)} × {config.d_model}" in picture  # h⁰: T × d_model
    assert f"× {config.n_layers} layers" in picture
    assert f"[{config.vocab_size}]" in picture  # logits and probabilities over V
    steps = [re.search(r"trace_step=([^&]+)", block.href).group(1) for block in overview.pipeline()]
    assert len(set(steps)) == len(steps) == 7


def test_a_pipeline_link_opens_the_trace_on_that_step():
    block = next(b for b in overview.pipeline() if b.name == "MLP")
    at = AppTest.from_file(str(ROOT / "pages" / "two_layer_trace.py"), default_timeout=30)
    for key, value in re.findall(r"([^?&=]+)=([^&]+)", block.href.split("?", 1)[1]):
        from urllib.parse import unquote_plus

        at.query_params[key] = unquote_plus(value)
    at.run()
    assert not at.exception
    assert at.radio[0].value == "mlp_pre"


def test_five_takeaways_each_with_a_live_number_and_a_link():
    at = open_home()
    text = "\n".join(m.value for m in at.markdown)
    items = overview.takeaways()
    assert len(items) == 5
    numbers = overview.numbers()
    for item in items:
        assert item.sentence in text
        assert re.search(r"\d\.\d|\d%", item.sentence), item.sentence
    # the rule's fall in plain words, as shares of the test sentences right (it read 1.00 to 0.00 before)
    assert f"from {numbers['rule_on']:.0%} to {numbers['rule_off']:.0%} right" in items[3].sentence
    assert f"{numbers['kv_gb']:.1f} GB" in items[4].sentence
    targets = [link.proto.page for link in at.get("page_link")]
    for page in ("cnn_vs_head", "qkv_walkthrough", "two_layer_trace", "ablation_lab", "kv_cost"):
        assert targets.count(page) >= 2  # its takeaway's link and the page map's


def test_the_claim_names_which_defaults_reproduce_the_primer():
    claim = overview.honesty()
    assert "Reproduce the primer's printed numbers" in claim
    assert "Run our own model" in claim
    assert "17.18 GB" in claim  # the primer's 7B example, computed
    assert "0.997" in claim  # the primer's printed P(on), from assets/primer_section6.json
    assert "every page" not in claim.lower()


def test_home_links_every_registered_page_and_the_glossary():
    links = {link.proto.page: link.proto.label for link in open_home().get("page_link") if "**" in link.proto.label}
    for spec in (*PAGES, GLOSSARY):
        assert spec.url_path in links, f"no link to {spec.script}"
        assert spec.title in links[spec.url_path]
    assert len(links) == len(PAGES) + 1


def test_the_briefing_file_holds_numbers_charts_sentences_and_the_link_back():
    from ui.elements.briefing import document

    briefing = overview.briefing("http://localhost:8501/")
    text = document(briefing)
    assert text.count("Plotly.newPlot(") == 2
    assert not re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=", text)  # plotly.js inside, nothing fetched
    assert len(text) > 3_000_000  # plotly.js itself
    for item in overview.takeaways():
        assert html.escape(item.title) in text
    assert 'class="pf"' in text
    assert f'href="{briefing.link}"' in text


def test_navigation_opens_the_cnn_page_from_the_overview():
    at = open_home()
    at.switch_page("pages/cnn_vs_head.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == next(spec.landmark for spec in PAGES if spec.script == "pages/cnn_vs_head.py")
