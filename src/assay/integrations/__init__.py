"""Bridges between assay and other frameworks.

Each framework has its own module, imported on its own so that its package stays optional:
`assay.integrations.langgraph`, `.swarm`, `.openai_agents`, `.amazon_bedrock` and `.ag_ui` turn
agent traces into assay's multi-turn messages (Ragas' `convert_to_ragas_messages` under the same
names); other modules evaluate applications or exchange traces. Nothing is imported here.
"""
