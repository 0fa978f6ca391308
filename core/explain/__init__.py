"""The explainer's engine (numpy): the primer's convolution and attention head, the trained two-layer model, its world,
weights, training recipe (the only torch import) and the analyses the explainer pages run on it."""
