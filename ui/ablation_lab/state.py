"""Ablation lab: the bench's controls, bound to the URL, and their validation (a bad typed prompt keeps the last one).

Every control has a key and bind="query-params", so a shared link restores the scenario and the state survives a
visit to another page. The heads travel in the URL as their readable pill labels ('layer 1, head 1'); a hand-written
link may also name them by their short keys (?heads=L1H1).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.explain import experiments as ex
from core.explain.analysis import head_label, heads, short_label
from core.explain.transformer import HeadKey
from core.explain.weights import trained_model
from ui.elements import link_reader as lr
from ui.elements.glossary import tip
from ui.elements.safe_text import plain

MODEL = trained_model()
HEADS = heads(MODEL.config)
BY_SHORT = {short_label(h): h for h in HEADS}
PROMPTS = [" ".join(p) for p in ex.COPULA_PROMPTS] + ["<BOS> the cat sat", "<BOS> the big dog ran"]
OWN = "Type your own…"
PROMPT_STATE = "ablation_prompt"  # last valid prompt, kept when a typed one does not read
PAGE = "ablation"
MAX_PROMPT_CHARS = 120
TYPED_DEFAULT = "the dog was"  # what the prompt box holds until the reader types


@dataclass(frozen=True)
class Setting:
    """The reader's bench setting: heads removed (sorted), attention off, the prompt's tokens."""

    removed: tuple[HeadKey, ...]
    off: bool
    words: tuple[str, ...]

    @property
    def name(self) -> str:
        """'L1H1 + L2H2 removed', 'nothing removed' or 'attention off' for running text."""
        if self.off:
            return "attention off"
        return " + ".join(short_label(h) for h in self.removed) + " removed" if self.removed else "nothing removed"


# The lab's tabs and the experiments beyond the primer, in reading order; the views draw one each.
TABS = [
    "① Both roads",
    "② Prompt table",
    "③ All 16 subsets",
    "④ Patterns can mislead",
    "⑤ Collateral vs targeted",
    "⑥ Beyond the primer",
]
BEYOND = ["Zero vs mean ablation", "MLP neurons", "Activation patching", "Model family"]


def q(words: tuple[str, ...] | str) -> str:
    """A prompt in running text, without <BOS>: '“the cat is”'."""
    text = words if isinstance(words, str) else " ".join(words)
    return "“" + text.replace("<BOS> ", "") + "”"


def _prompt(choice: str) -> tuple[str, ...]:
    """The bench prompt: a listed one, or the typed one if it reads, else the last valid one with an error shown."""
    if choice != OWN:
        words = tuple(choice.split())
    else:
        text = st.text_input(
            "Your prompt",
            value=TYPED_DEFAULT,
            key="prompt_text",
            bind="query-params",
            max_chars=MAX_PROMPT_CHARS,
            help=f"Words from the model's {len(MODEL.vocabulary)}-token vocabulary, separated by spaces; <BOS> is "
            "added for you.",
        )
        try:
            words = ex.parse_prompt(MODEL, text)
        except ValueError as problem:
            fallback = st.session_state.get(PROMPT_STATE, PROMPTS[0])
            st.error(f"That prompt cannot be run: {plain(problem, 240)}. Showing {q(fallback)} instead.")
            return tuple(fallback.split())
    st.session_state[PROMPT_STATE] = " ".join(words)
    return words


def read_link() -> None:
    """Check the link's values before any widget reads them; a refused one is named in the page's one notice. Heads
    may be named by their pill labels ('layer 1, head 1', the form the URL binding writes) or short keys (L1H1)."""

    params = {
        "heads": lr.choice(
            [head_label(h) for h in HEADS],
            aliases={s: head_label(h) for s, h in BY_SHORT.items()},
            many=len(HEADS),
            instead="that head stays in",
        ),
        "off": lr.flag(default=False),
        "prompt": lr.choice([*PROMPTS, OWN], default=PROMPTS[0]),
        "prompt_text": lr.text(
            lambda text: ex.parse_prompt(MODEL, text),
            limit=MAX_PROMPT_CHARS,
            instead=f"the box's own example “{TYPED_DEFAULT}” is used",
        ),
        "view": lr.choice(TABS, default=TABS[0]),
        "beyond": lr.choice(BEYOND, default=BEYOND[0]),
        "neuron_mode": lr.choice(["zero", "mean"], default="zero"),
        "patch_target": lr.choice(PROMPTS[:8], default=PROMPTS[4]),
        "patch_source": lr.choice(PROMPTS[:8], default=PROMPTS[0]),
    }
    lr.read_link(PAGE, params)
    lr.link_notice(PAGE)


def controls() -> Setting:
    """The bench's controls (all in the URL, read first by `read_link`): heads removed, attention off, the prompt."""
    read_link()
    chosen = st.pills(
        "Heads removed (their rows of W_O set to 0)",
        list(BY_SHORT),
        selection_mode="multi",
        default=["L1H1"],
        key="heads",
        bind="query-params",
        format_func=lambda s: head_label(BY_SHORT[s]),
        help=tip("ablation"),
        width="stretch",
    )
    left, right = st.columns([1, 1.4], gap="large", vertical_alignment="bottom")
    with left:
        off = st.toggle(
            "Attention off (W_O = 0)",
            key="off",
            bind="query-params",
            help="Appendix A's Method 2: W_O = 0 and b_O = 0 in both layers, so every attention block writes nothing "
            "and no token can see another.",
        )
    with right:
        choice = st.selectbox(
            "Prompt for the prediction",
            [*PROMPTS, OWN],
            key="prompt",
            bind="query-params",
            help="Pick a prompt of the toy world, or type your own.",
        )
    words = _prompt(choice or PROMPTS[0])
    removed = tuple(sorted(BY_SHORT[s] for s in chosen or [] if s in BY_SHORT))
    if off and removed:
        st.caption("Attention is off, so every head is silent and the head selection has no effect.")
    return Setting(removed, bool(off), words)
