"""The ablation lab page (primer Appendix A): its bench and link (state) and its tabs (views)."""
