"""The cost page (primer §3–4 and the deployment planner): its scenario (settings, link, inputs), its answer, formula,
charts and tables, the planner sections and the briefing."""
