# ruff: noqa
# Docs: Testset Generation for RAG > Scenario Generation > Example (EntityQuerySynthesizer)
# Changes:
#   - ragas -> assay in imports
from dataclasses import dataclass
from assay.testset.synthesizers.base_query import QuerySynthesizer


@dataclass
class EntityQuerySynthesizer(QuerySynthesizer):
    async def _generate_scenarios(self, n, knowledge_graph, callbacks):
        """
        logic to query nodes with entity
        logic describing how to combine nodes,styles,length,persona to form n scenarios
        """

        return scenarios

    async def _generate_sample(self, scenario, callbacks):
        """
        logic on how to use tranform each scenario to EvalSample (Query,Context,Reference)
        you may create singleturn or multiturn sample
        """

        return SingleTurnSample(user_input=query, reference_contexs=contexts, reference=reference)
