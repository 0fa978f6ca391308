"""Where the engine's documented data files live: one path for both halves, so a module's place never decides it."""

from pathlib import Path

ASSETS = Path(__file__).resolve().parent.parent / "assets"
