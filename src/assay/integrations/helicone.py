"""Ragas' `ragas.integrations.helicone`: not provided by assay (the reason: `assay/compat/ragas/paths.py`)."""

from assay.compat.ragas.paths import refuse

refuse(__name__)
