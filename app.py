"""Entry point of the dashboard: `streamlit run app.py`. The shell builds the navigation from ui/navigation.py."""

from ui.shell import run_app

run_app()
