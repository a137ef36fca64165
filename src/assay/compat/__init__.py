"""Compatibility with other libraries' names, kept apart from assay's own code.

`assay.compat.ragas` holds everything that exists only so that Ragas code runs unchanged. No core
layer (`schema`, `models`, `prompts`, `metrics`, `engine`) imports this package; the dependency
runs the other way (`tests/compat/test_ragas_paths.py` pins it).
"""
