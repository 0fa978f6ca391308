"""The overview page: the whole model in one picture, five findings with live numbers, and its briefing."""
