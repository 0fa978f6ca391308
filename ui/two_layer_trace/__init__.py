"""The two-layer trace page (primer §6–7): its link (state) and its steps, matrices and read-outs."""
