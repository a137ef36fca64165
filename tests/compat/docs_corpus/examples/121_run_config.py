# ruff: noqa
# Docs: Customize Timeouts and Rate Limits > Legacy: RunConfig > RunConfig Parameters
# Changes:
#   - ragas -> assay in imports
from assay.run_config import RunConfig

run_config = RunConfig(
    timeout=180,  # Max seconds per operation (default: 180)
    max_retries=10,  # Retry attempts (default: 10)
    max_wait=60,  # Max seconds between retries (default: 60)
    max_workers=16,  # Concurrent workers (default: 16)
    log_tenacity=False,  # Log retry attempts (default: False)
    seed=42,  # Random seed (default: 42)
)
