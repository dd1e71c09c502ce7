"""Sphinx configuration: the user guide here, the specification chapters from spec/."""

project = "pcpconform"
author = "the pcpconform developers"
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_heading_anchors = 3
exclude_patterns = ["_build"]
html_theme = "alabaster"
# broken internal links are errors (tools/docs.sh builds with -W)
