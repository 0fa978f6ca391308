"""Shared presentation: plotly figure builders, annotations, glossary, navigation registry."""
