"""Providers: one module per API shape, each translating its SDK's errors into assay's."""
