"""Every page's first sentence carries the live numbers of the reader's scenario, before any control; the trace and
ablation pages first say that their model is our own, with the primer's printed P(on) beside ours."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.explain import experiments as ex
from core.explain.analysis import ablation_sweep
from core.explain.primer import hand_example
from core.explain.trace_views import primer_section6
from core.explain.transformer import forward, hand_model
from core.explain.weights import trained_model
from tests.app.helpers import run_page

PAGES = Path(__file__).resolve().parents[2] / "pages"


def first_markdown(at: AppTest) -> str:
    return at.markdown[0].value


def test_trace_and_ablation_say_first_that_the_model_is_ours_beside_the_primers():
    model = trained_model()
    p_on = forward(model, [model.vocabulary.index(t) for t in ("<BOS>", "the", "cat", "sat")])["hook_probs"][-1]
    ours = f"P(on): ours {p_on[model.vocabulary.index('on')]:.3f}"
    printed = f"primer's model {float(primer_section6().readout['p_on']):.3f}"
    for page in ("two_layer_trace.py", "ablation_lab.py"):
        first = first_markdown(run_page(str(PAGES / page)))
        assert first.startswith("**This page runs our own trained model of the primer's §6 shape**")
        assert ours in first and printed in first


def test_ablation_lead_follows_the_bench_setting():
    sweep = ablation_sweep(trained_model())
    default = run_page(str(PAGES / "ablation_lab.py")).markdown[1].value
    removed = ((0, 0),)
    rule = ex.bench_reading(sweep, removed, False).rule_accuracy.now
    assert default.startswith("With **L1H1 removed**")
    assert f"ours {rule:.2f} · primer's model {ex.primer_tables().single_head_rule[frozenset(removed)]:.2f}" in default
    off = run_page(str(PAGES / "ablation_lab.py"), off="true").markdown[1].value
    assert off.startswith("With **attention off**")
    assert f"ours {ex.bench_reading(sweep, (), True).copula_class_accuracy.now:.2f}" in off


def test_qkv_lead_follows_the_scale_switch():
    example = hand_example()
    weights = forward(hand_model(), embeddings=example.X)["blocks.0.attn.hook_pattern"][0][-1]
    at = run_page(str(PAGES / "qkv_walkthrough.py"))
    assert f"{weights[0]:.3f} on *the*" in first_markdown(at)
    at.toggle(key="qkv_scale").set_value(False).run()
    unscaled = forward(hand_model(), embeddings=example.X, scale=False)["blocks.0.attn.hook_pattern"][0][-1]
    assert f"{weights[0]:.3f}" != f"{unscaled[0]:.3f}"
    assert f"{unscaled[0]:.3f} on *the*" in first_markdown(at)


def test_cnn_lead_names_the_networks_answer():
    assert "labels the image *vertical* with probability 1.000" in first_markdown(
        run_page(str(PAGES / "cnn_vs_head.py"))
    )


def test_cost_lead_comes_before_the_inputs_with_the_scenarios_numbers():
    at = run_page(str(PAGES / "kv_cost.py"), calculator="open")
    assert first_markdown(at).startswith("## Plan a deployment")  # the workload's plan first (issue 25) ...
    text = at.markdown[1].value  # ... then, in the memory calculator, its answer above its own inputs
    assert text.startswith("**Primer's modern 7B") and "17.18 GB of [KV cache]" in text
    assert "about $" in text and "at best (full batches)" in text
