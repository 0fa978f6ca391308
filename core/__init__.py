"""The dashboard's engine: pure numpy, no streamlit, no plotly, no torch (except core.explain.training)."""
