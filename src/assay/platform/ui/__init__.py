"""Templates and static files of the web UI (the routes are in assay.platform.server.ui)."""
