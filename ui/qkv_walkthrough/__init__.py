"""The QKV walkthrough page (primer §2–5): its inputs and link (state) and its sections and steps (views)."""
