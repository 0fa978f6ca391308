"""Every sentence corrected for issue 29, pinned to the engine value it states: if the engine's figure moves, the
sentence moves with it, and a sentence that stated a wrong figure cannot come back."""

from __future__ import annotations

import html
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.explain import experiments as ex
from core.explain.analysis import (
    COLLAPSE,
    bigram_ceilings,
    head_evidence,
    head_label,
    heads,
    next_token_table,
    short_label,
)
from core.explain.checkpoints import shipped_replay
from core.explain.discarded_world import discarded_corpus, discarded_types, is_repeat, shipped_runs, verdict
from core.explain.primer import conv_example
from core.explain.recipe import MAIN_SEED, RECIPE
from core.explain.trace_views import COPULA_PROBES, copula_probe
from core.explain.weights import trained_model
from core.explain.world import corpus, training_corpus
from core.plan.engines import profile
from core.plan.kv_memory import GB, GIB, gpus
from tests.app.helpers import charts, shown, table_footnote
from ui.ablation_lab.beyond import collateral_sentence
from ui.ablation_lab.results import sweep
from ui.elements.glossary import qkv_questions, terms
from ui.elements.navigation import PAGES
from ui.how_it_learned.state import SECTIONS
from ui.overview import views as overview
from ui.two_layer_trace.views import favourite

ROOT = Path(__file__).resolve().parents[2]
MODEL = trained_model()


def run(script: str, **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / script), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def text(at: AppTest) -> str:
    return "\n".join(shown(m.value) for m in [*at.markdown, *at.caption])


# ----------------------------------------------------------------------------------------- 3: one load-bearing test
def test_the_brightest_head_is_load_bearing_in_three_of_nine_under_the_stated_definition():
    family = ex.shipped_family()
    agree = family.brightest_load_bearing
    assert (len(family.carriers), agree) == (9, 3)
    at = run("pages/ablation_lab.py", view="④ Patterns can mislead")
    page = text(at)
    assert f"the brightest head is load-bearing in only {agree}." in page
    assert f"held-out rule accuracy at {COLLAPSE:.1f} or less" in page  # the definition, stated where it is used
    # the family table and its caption use the same test
    beyond = run("pages/ablation_lab.py", view="⑥ Beyond the primer", beyond="Model family")
    frame = beyond.dataframe[0].value
    assert (frame["brightest is load-bearing"] == "yes").sum() == agree
    assert "a load-bearing head (load-bearing: removing that head alone leaves held-out rule accuracy at " in text(
        beyond
    )


# ----------------------------------------------------------------------------------------- 6: the cleanest cut
def test_the_least_collateral_cut_is_said_to_barely_touch_the_rule():
    ev = head_evidence(sweep())
    clean = ev.index(ev.cleanest)
    sentence = collateral_sentence(ev)
    assert ev.cleanest not in ev.rule_breakers  # the premise of the corrected wording
    assert (
        f"The least collateral damage comes from removing {head_label(ev.cleanest)} (bigram "
        f"{ev.bigram_top1[clean]:.3f}), but it barely touches the rule either (copula class "
        f"{ev.baseline_class:.2f} → {ev.class_accuracy[clean]:.2f})." in sentence
    )
    least = min(ev.bigram_drop[ev.index(h)] for h in ev.rule_breakers)
    assert f"also costs at least {least:.3f} of bigram top-1: no single head is a clean cut here" in sentence
    assert "0.662 and 0.690" in sentence  # the primer's layer-2 heads, printed
    assert "cleanest cut is" not in sentence
    assert sentence in text(run("pages/ablation_lab.py", view="⑤ Collateral vs targeted"))


# ----------------------------------------------------------------------------------------- 7: ablation vs patching
def test_ablation_and_patching_are_described_consistently():
    bench = text(run("pages/ablation_lab.py"))
    assert "the one test that shows" not in bench and "whether the model needs it" in bench
    patching = text(run("pages/ablation_lab.py", view="⑥ Beyond the primer", beyond="Activation patching"))
    assert "strongest causal evidence" not in patching
    assert "Ablation and patching answer different questions" in patching


# ----------------------------------------------------------------------------------------- 8: the tie
def test_the_swap_names_the_tie_at_the_decimals_shown():
    cat, mat = (copula_probe(MODEL, prompt) for prompt in COPULA_PROBES[:2])
    first, second = mat.top[:2]
    assert f"{first.probability:.3f}" == f"{second.probability:.3f}" == "0.500"  # blue and red tie
    assert favourite(mat) == f"{first.token} and {second.token}, tied at 0.500"
    assert favourite(cat) == f"{cat.top[0].token} ({cat.top[0].probability:.3f})"
    page = text(run("pages/two_layer_trace.py", trace_view="Copula probe"))
    assert f"moves the answer from {favourite(cat)} to {favourite(mat)}" in page
    assert "moves the favourite" not in page


# ----------------------------------------------------------------------------------------- 9: what attention displaced
def test_attention_displaced_recurrent_networks_and_the_primer_is_quoted_as_the_primer():
    page = text(run("pages/cnn_vs_head.py", view="④ Filter vs head"))
    assert "chiefly displaced in language were recurrent networks (RNNs, LSTMs)" in page
    assert "The primer puts it as “the whole reason attention displaced convolution for language”" in page
    kernel = next(iter(conv_example().filters.values()))
    assert f"the same {kernel.size} weights score every window" in page


# ----------------------------------------------------------------------------------------- 4 and typed numbers
def test_the_glossary_s_figures_come_from_the_engine_and_the_presets():
    entries, ceilings, h100 = terms(), bigram_ceilings(), gpus()["h100-sxm"]
    bigram = entries["bigram-slot"]["definition"]
    assert "could get right" not in bigram
    assert f"({ceilings.position_aware:.3f} top-1 on these slots)" in bigram
    assert f"the current word alone does not ({ceilings.token_only:.3f})" in bigram
    assert f"({profile('vllm').block_tokens} by default in vLLM)" in entries["paged-kv"]["definition"]
    hbm = entries["hbm"]["definition"]
    assert f"{h100.memory_mib:,.0f} MiB" in hbm and f"{GIB / GB - 1:.0%} more" in hbm
    gddr = [g.name for g in gpus().values() if "GDDR" in g.memory_source]
    assert gddr and f"{' and '.join(gddr)} carry GDDR memory, not HBM" in hbm
    raw = json.loads((ROOT / "assets" / "glossary.json").read_text(encoding="utf-8"))
    by_key = {entry["key"]: entry["definition"] for entry in raw["terms"]}
    for key in ("bigram-slot", "paged-kv", "hbm"):  # the asset holds placeholders, not figures
        assert "{" in by_key[key] and "81,559" not in by_key[key] and "16 by" not in by_key[key]


def test_titles_state_the_model_s_own_parameter_count():
    trace = next(spec for spec in PAGES if spec.script == "pages/two_layer_trace.py")
    assert f"trained {MODEL.n_params}-parameter model" in trace.summary
    assert overview.takeaways()[2].title == f"A {MODEL.n_params}-parameter model learns the primer's grammar"


# ----------------------------------------------------------------------------------------- plain words first
def test_the_overview_says_what_q_k_v_are_and_why_the_cache_grows_before_its_numbers():
    at = run("app.py")  # the overview is the entry page; its links need the navigation app.py builds
    blocks = [m.value for m in at.markdown]
    plain = overview.plain_words()
    for word, question in qkv_questions().items():
        assert f"**{word}** (“{question}”)" in plain
    assert "the cache grows with the conversation" in plain
    assert blocks.index(plain) == 1  # right after the one-sentence lead, before the picture and the takeaways
    lead = overview.lead()
    assert "copula" not in lead and "bigram" not in lead
    n = overview.numbers()
    assert f"{n['rule_on']:.0%} of the test sentences right before, {n['rule_off']:.0%} after" in lead
    w = n["weights"]
    assert f"takes {w[0]:.0%} of what it reads from" in overview.takeaways()[1].sentence
    config = MODEL.config
    assert f"{len(overview.PROMPT)} × {config.d_model} means {len(overview.PROMPT)} tokens" in overview.shapes_note()


def test_the_ablation_lab_opens_in_words_with_the_model_s_own_answers():
    at = run("pages/ablation_lab.py")
    first = at.markdown[0].value
    # Whose model this is (the guide's first line on a page that runs ours), then what the page shows, in words.
    assert first.startswith("**This page runs our own trained model") and "\n\n**What this page shows.**" in first
    for prompt in (ex.CAT, ex.MAT):
        (a, _), (b, _) = next_token_table(MODEL, prompt, ex.configuration(), k=2)
        assert f"**{a}** or **{b}**" in first  # read from the model, not typed
    every = heads(MODEL.config)
    assert f"The model has {len(every)} attention heads" in first
    assert f"{short_label(every[0])} is {head_label(every[0])}" in first
    assert f"*{sweep().n_bigram_slots} bigram slots*" in first
    assert first.index("What this page shows") < first.index(short_label(every[0]))


def test_the_two_layer_trace_opens_in_words_then_explains_its_symbols():
    at = run("pages/two_layer_trace.py")
    first = at.markdown[0].value
    # Whose model this is (the guide's first line on a page that runs ours), then what the page shows, in words.
    assert first.startswith("**This page runs our own trained model") and "\n\n**What this page shows.**" in first
    assert first.index("What this page shows") < first.index("**Symbols.**") < first.index(r"\mathbb{R}")
    assert f"(here {len(('<BOS>', 'the', 'cat', 'sat'))})" in first and f"({MODEL.config.d_model})" in first
    assert f"works in {MODEL.config.n_layers} rounds" in first


# ----------------------------------------------------------------------------------------- slips on the pages
def test_the_step_by_step_view_shows_the_gelu_and_d_ff_slips_at_their_steps():
    gelu = text(run("pages/two_layer_trace.py", trace_step="MLP activation"))
    assert "This is the model's only nonlinearity" in gelu and "GELU is the only element-wise non-linearity" in gelu
    dff = text(run("pages/two_layer_trace.py", trace_step="MLP pre-activation"))
    assert "11,008 = 2.69 × d_model 4,096" in dff and "3,072 = 4.00 × d_model 768" in dff


def test_the_phone_formula_box_scrolls_instead_of_cutting():
    css = (ROOT / "ui" / "elements" / "web" / "page.css").read_text(encoding="utf-8")
    rule = css[css.index(".katex-display {") :]
    assert "overflow-x: auto" in rule.split("}")[0]


# ----------------------------------------------------------------------------------------- How it learned's figures
def test_how_it_learned_states_the_world_s_the_recipe_s_and_the_asset_s_own_figures():
    spec = next(spec for spec in PAGES if spec.script == "pages/how_it_learned.py")
    blind = verdict(shipped_runs().rows).blind
    assert blind and f"The {MODEL.n_params}-parameter model's training" in spec.summary
    assert f"a metric that reads {blind[0].class_metric:.3f} while the model is wrong" in spec.summary
    copula = [t for t in corpus().types if t.family == "copula"]
    held = sum(t.held_out for t in copula)
    replay = shipped_replay()
    at = run("pages/how_it_learned.py")
    page = text(at)
    assert at.select_slider(key="learned_step").label == (
        f"Training step: {len(replay)} checkpoints, log-spaced from {int(replay.steps[0]):,} to "
        f"{int(replay.steps[-1]):,}"
    )
    accuracy = json.dumps(next(c for c in charts(at) if c["key"] == "learned-accuracy")["figure"])
    assert f"rule accuracy ({held} held-out copula types)" in accuracy
    assert f"right class, all {len(copula)} copula types" in accuracy
    assert f"{replay.values['class_mass_mean'][-1]:.3f} on average over the {len(copula)} copula types" in page
    assert f"the {MODEL.config.vocab_size} rows of E" in page
    assert f"At step {int(replay.steps[0]):,} its largest weight in any head was" in page
    assert "short of full marks" in page and ", not 1," not in page
    recipe = (
        f"(seed {MAIN_SEED}, {RECIPE.steps:,} full-batch AdamW steps on the {len(training_corpus().types)} "
        "training types, one CPU thread)"
    )
    assert recipe in page or "without torch" in page  # the retrain box names the recipe where torch is installed
    siblings = run("pages/how_it_learned.py", learned_section=SECTIONS[1])
    footnote = table_footnote(siblings, "Rule emergence, run by run")
    assert f"logged every {RECIPE.log_every} steps while each model trained" in footnote
    assert f"The shipped run (seed {MAIN_SEED}) first answers" in text(siblings)
    discarded = run("pages/how_it_learned.py", learned_section=SECTIONS[2])
    repeats = [t for t in discarded_types() if is_repeat(t)]
    bars = json.dumps(next(c for c in charts(discarded) if c["key"] == "learned-discarded")["figure"])
    assert f"all {int(discarded_corpus().slot_copula.sum())} copula slots" in bars
    assert f"repeat right, {sum(not t.held_out for t in repeats)} trained types" in bars
    assert f"repeat right, {sum(t.held_out for t in repeats)} held-out types" in bars
    assert f"Where the class metric reads {blind[0].class_metric:.3f} while the repeat is still wrong" in text(
        discarded
    )


# ----------------------------------------------------------------------------------------- the cost page's prose
def test_the_cost_page_help_texts_read_the_presets_the_engines_and_the_month():
    from core.plan.engines import profiles
    from core.plan.fields import HOURS_ALWAYS_ON
    from core.plan.model_config import presets
    from ui.kv_cost.settings import BLOCK_HELP, BLOCKS, FIELD_LABELS, NUMBERS

    models = presets()
    gemma, gpt2, deepseek = models["gemma-2-9b"], models["gpt2"], models["deepseek-v3"]
    assert f"{gemma.name}: {gemma.norms_per_layer}" in FIELD_LABELS["norms_per_layer"][1]
    assert f"{gpt2.name}: {gpt2.learned_positions:,}" in FIELD_LABELS["learned_positions"][1]
    assert f"{deepseek.name}: {deepseek.shared_experts}" in FIELD_LABELS["shared_experts"][1]
    assert f"{deepseek.name}: {deepseek.dense_layers}" in FIELD_LABELS["dense_layers"][1]
    for engine in profiles().values():
        assert f"{engine.name} {engine.block_tokens}" in BLOCK_HELP and engine.block_tokens in BLOCKS
    assert HOURS_ALWAYS_ON == 365 * 24 / 12 == NUMBERS["hours"].default
    assert f"({HOURS_ALWAYS_ON:g} = always on" in NUMBERS["hours"].help


def test_the_byte_units_footnote_states_this_scenario_s_cache_in_both_units():
    from core.plan import kv_cache as kv

    at = run("pages/kv_cost.py", calculator="open")
    footnote = html.unescape("\n".join(e.proto.body for e in at.get("html")))
    plan = kv.plan(*_default_scenario())
    gib, gb = kv.to_gib(plan.kv_per_user), kv.to_gb(plan.kv_per_user)
    assert f"One user's KV cache here, {gib:,.2f} GiB, reads as {gb:,.2f} GB." in footnote
    assert "The same 16 GiB" not in footnote


def _default_scenario():
    from core.plan import kv_cache as kv
    from core.plan.model_config import presets

    defaults = kv.defaults()
    return presets()["primer-7b"], kv.Deployment(gpu=kv.gpus()[defaults["gpu"]])


def _context_sentences(model_id: str, context: int = 32768):
    from dataclasses import replace

    from core.plan import kv_cache as kv
    from core.plan.context_cost import context_cost
    from core.plan.model_config import presets
    from ui.kv_cost.context_sentences import growth_sentence, users_sentence

    config = presets()[model_id]
    dep = replace(kv.Deployment(gpu=kv.gpus()["h100-sxm"]), context=context)
    cost = context_cost(config, dep)
    return config, dep, cost, growth_sentence(config, cost), users_sentence(config, cost, "one copy")


def test_llama_s_cache_grows_in_a_straight_line_and_long_context_costs_users_and_speed():
    from core.plan import kv_cache as kv
    from core.plan.context_cost import one_user_speed

    config, dep, cost, (grows, _), (what, why) = _context_sentences("llama-3.1-8b")
    doubled = kv.plan(config, kv.at_context(dep, 2)).kv_per_user / kv.plan(config, dep).kv_per_user
    assert doubled == 2.0 and cost.growth == "straight" and cost.flat_from is None
    assert grows == "The cache grows in a straight line with context here: doubling the context doubles it."
    half = kv.plan(config, kv.at_context(dep, 0.5)).max_users
    assert (
        f"serves at most {kv.plan(config, dep).max_users} users at once; at 16,384 tokens it would serve {half:,}"
        in what
    )
    speeds = [one_user_speed(config, dep, t) for t in (4096, 32768, 131072)]
    assert [round(s) for s in speeds] == [106, 93, 67]  # the engine's time model; pinned so a change is seen
    assert (
        f"decodes {speeds[0]:,.0f}, {speeds[1]:,.0f} and {speeds[2]:,.0f} tokens/s at 4,096, 32,768 and 131,072" in what
    )
    assert "halving the context about doubles the users a copy can carry" in why
    assert f"falls from {speeds[0]:,.0f} at 4,096 tokens to {speeds[2]:,.0f} at 131,072" in why
    assert "Concurrency, not speed" not in why


def test_mistral_s_window_flattens_the_cache_and_the_users_and_its_speed_barely_moves():
    from core.plan import kv_cache as kv
    from core.plan.context_cost import one_user_speed

    config, dep, cost, (grows, matters), (what, why) = _context_sentences("mistral-7b")
    assert kv.plan(config, kv.at_context(dep, 2)).kv_per_user == kv.plan(config, dep).kv_per_user  # flat
    assert cost.growth == "flat" and config.sliding_layers == config.n_layers
    window = config.sliding_window
    assert grows.startswith(f"Past {window:,} tokens {config.name}'s cache stops growing")
    assert "straight line" not in grows + matters
    users = kv.plan(config, dep).max_users
    assert kv.plan(config, kv.at_context(dep, 0.5)).max_users == users
    assert f"halving the context leaves {users} users per copy" in why and f"past its {window:,}-token window" in why
    fast = one_user_speed(config, dep, 4096)
    assert fast == one_user_speed(config, dep, 32768)
    assert f"decodes {fast:,.0f} tokens/s at 4,096 and 32,768 tokens alike" in what
    assert "Its speed barely moves" in why
    # below its window the same model grows in a straight line, up to the window
    *_, (short, _), _ = _context_sentences("mistral-7b", 2048)
    assert short.startswith(f"The cache grows in a straight line with context here, up to {window:,} tokens")


def test_a_half_windowed_model_is_said_to_grow_more_slowly_than_the_context():
    config, _, cost, (grows, _), _ = _context_sentences("gemma-2-9b")
    assert cost.growth == "slower" and 1 < cost.kv_ratio < 1.9
    assert (
        f"multiplies it by {cost.kv_ratio:.2f}, less than double, because its {config.sliding_layers} windowed layers"
        in grows
    )


def test_the_users_and_cache_sentences_on_the_page_are_the_engine_s():
    *_, (grows, _), _ = _context_sentences("mistral-7b")
    kv_page = text(run("pages/kv_cost.py", model="Mistral-7B-v0.1", view="KV vs context"))
    assert grows in kv_page
    users_page = text(run("pages/kv_cost.py", model="Mistral-7B-v0.1", view="Users vs context"))
    assert "Here long context costs no users" in users_page and "Concurrency, not speed" not in users_page
