"""Entry point of the dashboard: `streamlit run app.py`. The shell builds the navigation from
ui/elements/navigation.py."""

from ui.elements.shell import run_app

run_app()
