"""How it learned: the training replay of the 736-parameter model (state, figures, views, the discarded world's
section and the live retrain), wired together by pages/how_it_learned.py."""
