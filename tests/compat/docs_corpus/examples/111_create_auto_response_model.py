# ruff: noqa
# Docs: API Reference > Metrics > create_auto_response_model (Examples)
# Changes:
#   - ragas -> assay in imports
#   - filled in: the import of create_auto_response_model (the doctest assumes it)
#   - the doctest prompts (>>>, ...) removed
from assay.metrics.base import create_auto_response_model  # filled in

from pydantic import Field

# Simple model with required fields
ResponseModel = create_auto_response_model("ResponseModel", value=(str, ...), reason=(str, ...))

# Model with Field validators and descriptions
ResponseModel = create_auto_response_model(
    "ResponseModel",
    value=(str, Field(..., description="The predicted value")),
    reason=(str, Field(..., description="Reasoning for the prediction")),
)
