# ruff: noqa
# Docs: How to Align an LLM as a Judge > Setting up the judge metric, The alignment metric
# Changes:
#   - ragas -> assay in imports
#   - filled in: a call of each metric (the page calls them in its experiment function, which
#     imports from the separate ragas_examples package)
#   - model: OPENAI_API_KEY / OPENAI_BASE_URL from the environment reach the loopback server
# corpus: calls-model
# corpus: expect-eval alignment.value 'pass'
from assay.metrics import DiscreteMetric

# Define the judge metric with a simple baseline prompt
accuracy_metric = DiscreteMetric(
    name="accuracy",
    prompt="Check if the response contains points mentioned from the grading notes and return 'pass' or 'fail'.\n\nResponse: {response}\nGrading Notes: {grading_notes}",
    allowed_values=["pass", "fail"],
)

from assay.metrics.discrete import discrete_metric
from assay.metrics.result import MetricResult


@discrete_metric(name="judge_alignment", allowed_values=["pass", "fail"])
def judge_alignment(judge_label: str, human_label: str) -> MetricResult:
    """Compare judge decision with human label."""
    judge = judge_label.strip().lower()
    human = human_label.strip().lower()
    if judge == human:
        return MetricResult(value="pass", reason=f"Judge={judge}; Human={human}")
    return MetricResult(value="fail", reason=f"Judge={judge}; Human={human}")


from assay.llms import llm_factory  # filled in

llm = llm_factory("gpt-4o-mini")  # filled in
judge_score = accuracy_metric.score(  # filled in: as the page's experiment calls it
    question="What is CAC?",
    grading_notes="customer acquisition cost",
    response="CAC is the cost to acquire a customer.",
    llm=llm,
)
alignment = judge_alignment.score(judge_label="Pass", human_label="pass")  # filled in
