"""Sphinx configuration: ``sphinx-build -W -b html docs docs/_build`` (``pip install -e ".[docs]"``).

The pages are Markdown (MyST); the API reference is generated from the numpydoc docstrings.
"""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "optuna_gpbandit"
author = "optuna_gpbandit developers"
copyright = "2026, optuna_gpbandit developers"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the signatures carry them; numpydoc sections describe them
myst_heading_anchors = 3
html_theme = "alabaster"
html_static_path: list[str] = []
