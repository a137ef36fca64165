# ruff: noqa
# Docs: API Reference > Async Evaluation > aevaluate() (Examples)
# Changes:
#   - ragas -> assay in imports
#   - filled in: dataset and metrics (the docs leave them to the reader)
#   - model: none named; the default judge is the loopback server (ASSAY_LLM)
# corpus: calls-model
from assay import EvaluationDataset, SingleTurnSample  # filled in
from assay.metrics import Faithfulness  # filled in

dataset = EvaluationDataset(  # filled in
    samples=[
        SingleTurnSample(
            user_input="When was the first super bowl?",
            response="The first superbowl was held on Jan 15, 1967",
            retrieved_contexts=[
                "The First AFL–NFL World Championship Game was played on January 15, 1967."
            ],
        )
    ]
)
metrics = [Faithfulness()]  # filled in

import asyncio
from assay import aevaluate


async def main():
    result = await aevaluate(dataset, metrics)
    print(result)


asyncio.run(main())
