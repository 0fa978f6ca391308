"""Elements every page shares: the chart element, static tables, metric cards, HTML and safe text, plain math,
glossary links, link reading, navigation, the shell and the browser layer (its JavaScript and CSS in files)."""
