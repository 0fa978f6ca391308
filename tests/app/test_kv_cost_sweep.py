"""Every view and section of the cost page on valid custom models, from 1 byte per token to the field limits.

A property sweep (hypothesis) over the models the fields accept: each is opened by its link, as a reader's shared link
would open it, and every chart tab and planner section is drawn with no exception and no error box.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.plan import kv_cache as kv
from core.plan.model_config import LIMITS, config_from_fields, presets
from ui.kv_cost.own_model import FIELD_KEYS
from ui.kv_cost.settings import SECTION, SECTIONS, VIEWS

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "kv_cost.py")
PRIMER = presets()["primer-7b"]


def sized(name: str) -> st.SearchStrategy[int]:
    """A field's value anywhere in its limits (hypothesis tries both ends and small values first)."""
    return st.integers(*LIMITS[name])


@st.composite
def custom_models(draw: st.DrawFn) -> dict[str, object]:
    """The fields of a valid custom model: every size within its limits, the few rules between them kept."""
    kv_heads = draw(sized("n_kv_heads"))
    heads = min(kv_heads * draw(st.integers(1, 64)), LIMITS["n_heads"][1] // kv_heads * kv_heads)
    fields = {name: draw(sized(name)) for name in ("n_layers", "d_model", "head_dim", "vocab_size", "d_ff")}
    fields |= {
        "n_heads": heads,
        "n_kv_heads": kv_heads,
        "max_context": draw(st.sampled_from([0, *LIMITS["max_context"]])),
    }
    fields |= {"tied_embeddings": draw(st.booleans()), "gated_mlp": draw(st.booleans())}
    fields |= {"norm": draw(st.sampled_from(["layernorm", "rmsnorm"])), "bias": draw(st.sampled_from(["none", "all"]))}
    if draw(st.booleans()):  # latent attention
        fields |= {
            "kv_lora_rank": draw(st.integers(1, LIMITS["kv_lora_rank"][1])),
            "qk_rope_head_dim": draw(st.integers(1, 100_000)),
        }
    if draw(st.booleans()):  # a sliding window on some layers
        fields |= {
            "sliding_window": draw(st.integers(1, 100_000_000)),
            "sliding_layers": draw(st.integers(1, fields["n_layers"])),
        }
    if draw(st.booleans()):  # a mixture of experts
        experts = draw(st.integers(1, LIMITS["n_experts"][1]))
        fields |= {
            "n_experts": experts,
            "experts_per_token": draw(st.integers(1, experts)),
            "expert_d_ff": draw(st.integers(1, LIMITS["expert_d_ff"][1])),
            "dense_layers": draw(st.integers(0, fields["n_layers"])),
        }
    config, problems = config_from_fields(PRIMER.to_fields() | fields)
    assert config is not None, problems
    return fields


SCENARIOS = st.fixed_dictionaries(
    {
        "kv_dtype": st.sampled_from(list(kv.DTYPE_BYTES)),
        "w_bits": st.sampled_from([str(b) for b in kv.WEIGHT_BITS]),
        "context": st.integers(1, 10_000_000).map(str),
        "users": st.integers(1, 1_000_000).map(str),
    }
)


def problems(at: AppTest) -> list[str]:
    """What the page showed that a valid model must never show: an exception or the cannot-compute error."""
    return [e.value for e in at.exception] + [e.value for e in at.error if "cannot be computed" in e.value]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(custom_models(), SCENARIOS)
def test_every_view_and_section_draws_for_any_valid_custom_model(fields, scenario):
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"model": "custom"} | {FIELD_KEYS[k]: str(v).lower() for k, v in fields.items()} | scenario)
    at.run()
    warned = [w.value for w in at.warning if not w.value.startswith("No plan for this workload: ")]  # an honest no
    assert not problems(at) and not warned, problems(at) + warned
    for index, section in enumerate(SECTIONS):
        at.session_state["view"] = VIEWS[index % len(VIEWS)]
        at.session_state[SECTION] = section
        at.run()
        assert not problems(at), (section, problems(at))


def test_the_smallest_model_draws_every_view_and_section():
    """One layer, one head of one number, INT4: half a byte per token per layer, every view and section."""
    test_every_view_and_section_draws_for_any_valid_custom_model.hypothesis.inner_test(
        {"n_layers": 1, "d_model": 1, "n_heads": 1, "n_kv_heads": 1, "head_dim": 1, "vocab_size": 1, "d_ff": 1},
        {"kv_dtype": "int4", "w_bits": "4", "context": "1", "users": "1"},
    )
