"""Sphinx configuration for the perfci documentation."""

import perfci

project = "perfci"
author = "perfci developers"
copyright = "perfci developers"
version = release = perfci.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 copied into _static/mathjax and loaded from there, not from a CDN, so the
    # formulas render offline (the extension sets `mathjax_path`; do not set it here).
    "sphinx-mathjax-offline",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
templates_path = ["_templates"]

# MyST: $...$ and $$...$$ math, and amsmath environments such as align.
myst_enable_extensions = ["dollarmath", "amsmath"]

# API reference: one generated page per object (under api/generated/, git-ignored);
# numpydoc renders the docstrings and the class template lists the members.
autosummary_generate = True
numpydoc_show_class_members = False
autodoc_typehints = "none"

html_theme = "alabaster"
html_title = f"perfci {release}"
html_theme_options = {
    "description": "Honest confidence intervals for classifier performance metrics",
    "fixed_sidebar": True,
}
