"""The retraining command, `python -m core.training`: the explainer's training recipe (core.explain.training) run from
the command line. Needs the dev requirements (torch); the running app never imports this module."""

from core.explain.training import main

if __name__ == "__main__":
    main()
