"""Clicks that resend and redraw only what they change, in Chromium. The CNN page's window, the ablation lab's head
switches and the cost page's sizes are fragments, so the server sends the fragment's elements, not the whole page's
(counted as the messages the browser receives), and what a fragment writes outside itself (the lead above the bench,
the cost page's answer and its sizes' column) is rewritten in place. On the cost page a note that comes and goes (in
the answer's box or the table's footnote) moves no element below it, so the charts and tables are updated where they
are, not drawn again from scratch (their nodes in the page survive)."""

from __future__ import annotations

import pytest

from ui.elements.navigation import PAGES

CNN = next(spec for spec in PAGES if spec.script == "pages/cnn_vs_head.py")
LAB = next(spec for spec in PAGES if spec.script == "pages/ablation_lab.py")
COST = next(spec for spec in PAGES if spec.script == "pages/kv_cost.py")
MARK = "(selector) => { for (const e of document.querySelectorAll(selector)) e.__kept = true; }"
KEPT = "(selector) => [...document.querySelectorAll(selector)].map((e) => e.__kept === true)"


@pytest.mark.e2e
def test_moving_the_window_resends_only_the_window_and_its_step(warm, watch):
    watch.open(warm.url(CNN.url_path), CNN.landmark)
    watch.page.get_by_text("Window 1: the nine products", exact=False).first.wait_for(timeout=30_000)
    lead = watch.page.locator(".st-key-lead").inner_text()
    thumb = watch.page.locator(".st-key-win input[type='range']").first
    thumb.focus()
    window = watch.messages_for(lambda: thumb.press("ArrowRight"))
    watch.page.get_by_text("Window 2: the nine products", exact=False).first.wait_for(timeout=30_000)
    assert "win=2" in watch.page.url
    assert watch.page.locator(".st-key-lead").inner_text() == lead  # drawn outside the fragment, kept
    toggle = watch.page.locator("label").filter(has_text="Add my own filter")
    whole = watch.messages_for(toggle.click)  # a control outside the fragment: the whole page reruns
    watch.messages_for(toggle.click)
    assert 0 < window < 0.7 * whole, (window, whole)
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_head_switch_resends_only_the_bench_and_rewrites_the_lead_in_place(warm, watch):
    watch.open(warm.url(LAB.url_path), LAB.landmark)
    whole = watch.messages_so_far()  # the page's first, whole run
    assert "L1H1 removed" in watch.page.locator(".st-key-lead").inner_text()
    sent = watch.messages_for(watch.page.get_by_role("button", name="layer 2, head 2", exact=True).click)
    fixed = 8  # at least: title, summary, link router, the own-model line, lead box, words, introduction, method box
    assert 0 < sent <= whole - fixed, (sent, whole)
    watch.page.wait_for_function(
        "() => document.querySelector('.st-key-lead')?.innerText.includes('L1H1 + L2H2 removed')", timeout=30_000
    )
    assert watch.page.locator(".st-key-lead [data-testid='stMarkdownContainer']").count() == 1  # replaced, not added
    assert watch.page.get_by_text("Words on this page", exact=False).count() == 1
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("query", "note"),
    [  # 33,792 tokens: beyond one compared model's maximum (named in the table's footnote), then back to 32,768
        ("context=32768", "Maximum context shorter than"),
        # 5,120 tokens: beyond Llama-2-7B's own 4,096 (a warning in the answer's box), then back to 4,096
        ("model=Llama-2-7B&context=4096", "longer than Llama-2-7B's maximum context"),
    ],
)
def test_a_note_that_comes_and_goes_never_makes_the_charts_and_tables_below_it_redraw(warm, watch, query, note):
    watch.open(warm.url(f"{COST.url_path}?{query}&kv_section=Workload+and+bill"), COST.landmark)
    workload = ".primer-chart[data-chart=kv-workload].js-plotly-plot"
    below = f"{workload}, [data-testid='stMain'] [data-testid='stHtml']:has(.static-table[aria-label='Side by side'])"
    watch.page.locator(workload).wait_for(timeout=30_000)
    shown_note = watch.page.get_by_text(note, exact=False)
    assert shown_note.count() == 0
    step_up = watch.page.locator(".st-key-context [data-testid='stNumberInputStepUp']")
    for shown in (1, 0):  # one step up brings the note, one step down takes it away
        watch.page.evaluate(MARK, below)
        (step_up if shown else watch.page.locator(".st-key-context [data-testid='stNumberInputStepDown']")).click()
        watch.settle()
        assert shown_note.count() == shown
        kept = watch.page.evaluate(KEPT, below)
        assert len(kept) == 2 and all(kept), kept  # the workload chart and the side-by-side table
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors


@pytest.mark.e2e
def test_a_context_step_resends_only_the_sizes_and_what_they_feed(warm, watch):
    watch.open(warm.url(f"{COST.url_path}?model=Llama-3.1-8B&gpu=H200+SXM"), COST.landmark)
    watch.page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    watch.page.locator(".st-key-lead .metric-cards").wait_for(timeout=30_000)  # the calculator's answer in full
    whole = watch.messages_so_far()  # the page's first, whole run
    answer = ".st-key-lead [data-testid='stMarkdownContainer']"
    drawn = watch.page.locator(answer).count()
    step_up = watch.page.locator(".st-key-context [data-testid='stNumberInputStepUp']")
    sent = watch.messages_for(step_up.click)
    watch.page.wait_for_function(
        "() => document.querySelector('.st-key-lead')?.innerText.includes('33,792 tokens')", timeout=30_000
    )
    fixed = 11  # at least: link router, title, summary, the plan's questions and cards, the words, the calculator's own
    assert 0 < sent <= whole - fixed, (sent, whole)
    assert watch.page.locator(answer).count() == drawn  # the answer at the top is rewritten in place, not added
    assert watch.page.locator(".st-key-context").count() == 1 and watch.page.locator(".st-key-users").count() == 1
    assert "model=Llama-3.1-8B" in watch.page.url and "gpu=H200+SXM" in watch.page.url  # drawn outside, kept
    assert "context=33792" in watch.page.url
    assert watch.exceptions_on_screen() == 0
    assert watch.errors == [], watch.errors
