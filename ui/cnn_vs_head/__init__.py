"""The CNN vs head page (primer §1, Appendix B): its inputs and link (state) and its four steps (views)."""
