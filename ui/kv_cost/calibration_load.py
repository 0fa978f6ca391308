"""The calibration under traffic, on the cost page's calibration section: every published online-serving run
simulated on its own setup and engine, time to first token and between tokens (and throughput where published)
predicted against measured, the medians under load and the run the simulator misses most, in words from the numbers."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from core.plan import calibration as cal
from core.plan import kv_cache as kv
from core.plan import serving as sv
from ui.elements.numbers import plural, three_figures
from ui.elements.widgets import OnFirstUse

pa = OnFirstUse("pyarrow")


def _load(point: cal.OnlinePoint) -> str:
    return f"{point.concurrency:,} in flight" if point.concurrency else f"{point.rate:g} requests/s"


def _setup(point: cal.OnlinePoint) -> str:
    return (
        f"{point.engine} {point.engine_version}, {point.tp} × {kv.gpus()[point.gpu].name}, "
        f"{cal.model(point.model).name} {point.weights}, {point.input:,} in / {point.output:,} out"
    )


@lru_cache(maxsize=4)  # 4 × ~10 kB
def online_table(eff: sv.Efficiency) -> tuple[pa.Table, tuple[float, float, int], str]:
    """The runs as a table, the medians under load (first token, gap, runs) and the sentence on the largest miss."""
    rows = cal.online_errors(eff)
    table = pa.Table.from_pylist(
        [
            {
                "first token error": round(100 * errs["ttft"], 1),
                "gap error": round(100 * errs["itl"], 1),
                "setup": _setup(point),
                "load": _load(point),
                "under load": "yes" if point.loaded else "no",
                "statistic": point.statistic,
                "first token measured (s)": three_figures(point.ttft_s),
                "first token simulated (s)": three_figures(got.ttft_s),
                "gap measured (ms)": three_figures(1000 * point.itl_s),
                "gap simulated (ms)": three_figures(1000 * got.itl_s),
                "throughput error": round(100 * errs["throughput"], 1) if "throughput" in errs else None,
                "source": point.source,
                "as published": point.published,
            }
            for point, got, errs in rows
        ]
    )
    point, got, errs = max((r for r in rows if r[0].loaded), key=lambda r: abs(r[2]["ttft"]))
    side = "early" if errs["ttft"] < 0 else "late"
    miss = (
        f"The simulator misses most on {_setup(point)} at {_load(point)}: a first token after "
        f"{got.ttft_s:,.2f} s against {point.ttft_s:,.2f} s measured ({abs(errs['ttft']):.0%} {side})."
    )
    return table, cal.loaded_medians(rows), miss


def draw(eff: sv.Efficiency) -> None:
    """The table of runs under traffic with its medians, the largest miss and what the comparison assumes."""
    with st.spinner("Simulating the published runs under traffic…"):
        table, (ttft, itl, loaded), miss = online_table(eff)
    st.markdown(
        f"**Under traffic: median error under load, first token {ttft:.0%}, time between tokens {itl:.0%}** over "
        f"{plural(loaded, 'published run')} with at least {cal.LOADED_IN_FLIGHT} requests in flight or "
        f"{cal.LOADED_RATE:g} a second ({plural(len(table), 'run')} in the table). Each run is simulated on its own "
        f"GPUs under its engine's defaults. {miss} {cal.WARM_UP}"
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={
            "first token error": st.column_config.NumberColumn(format="%+.0f%%", pinned=True),
            "gap error": st.column_config.NumberColumn(format="%+.0f%%", pinned=True),
            "throughput error": st.column_config.NumberColumn(format="%+.0f%%"),
            "source": st.column_config.LinkColumn(display_text="open"),
        },
    )
