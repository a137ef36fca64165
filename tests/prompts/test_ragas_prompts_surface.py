"""Ragas' prompt classes run as written (import changed): typed prompts over assay's prompt data.

The judge is a ScriptedProvider; each test checks what was sent and what came back.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from pydantic import BaseModel, ValidationError

from assay.compat.ragas.prompt_classes import ClaimDecompositionInput, read_verdicts
from assay.errors import OutputParseError, UsageError
from assay.metrics.collections.factual_correctness.util import (
    ClaimDecompositionOutput,
    ClaimDecompositionPrompt,
)
from assay.metrics.collections.faithfulness.util import (
    FaithfulnessInput,
    FaithfulnessOutput,
    FaithfulnessPrompt,
    NLIStatementInput,
    NLIStatementOutput,
    NLIStatementPrompt,
    StatementFaithfulnessAnswer,
    StatementGeneratorInput,
    StatementGeneratorOutput,
    StatementGeneratorPrompt,
)
from assay.models import LLM, ScriptedProvider
from assay.prompt import (
    BasePrompt,
    BoolIO,
    DynamicFewShotPrompt,
    PromptMixin,
    PydanticPrompt,
    RagasOutputParserException,
    StringIO,
    StringPrompt,
)
from assay.prompts import Example, load_prompt


def judge(*answers, **options):
    provider = ScriptedProvider(list(answers), **options)
    return LLM(provider), provider


def run(coroutine):
    return asyncio.run(coroutine)


# -- a prompt of one's own ---------------------------------------------------------------------------
class CityInput(BaseModel):
    country: str


class CityOutput(BaseModel):
    capital: str
    population_millions: float


class CapitalPrompt(PydanticPrompt[CityInput, CityOutput]):
    instruction = "Give the capital city of the country and its population in millions."
    input_model = CityInput
    output_model = CityOutput
    examples = [(CityInput(country="Japan"), CityOutput(capital="Tokyo", population_millions=14.0))]  # noqa: RUF012


def test_a_pydantic_prompt_answers_with_its_output_model():
    llm, provider = judge('{"capital": "Paris", "population_millions": 2.1}')
    answer = run(CapitalPrompt().generate(llm=llm, data=CityInput(country="France")))
    assert answer == CityOutput(capital="Paris", population_millions=2.1)
    messages = provider.requests[0].messages
    assert messages[0].role == "system" and "Give the capital city" in messages[0].content
    # The example is an earlier turn; the input is fenced as data.
    assert "<country>\nJapan\n</country>" in messages[1].content
    assert json.loads(messages[2].content) == {"capital": "Tokyo", "population_millions": 14.0}
    assert messages[-1].content == "<country>\nFrance\n</country>"
    assert (
        provider.requests[0].output is not None and provider.requests[0].output.name == "CityOutput"
    )


def test_a_pydantic_prompt_has_a_name_a_language_and_a_text_form():
    prompt = CapitalPrompt()
    assert (prompt.name, prompt.language, prompt.original_hash) == (
        "capital_prompt",
        "english",
        None,
    )
    text = prompt.to_string(CityInput(country="Peru"))
    assert "Give the capital city" in text and "Japan" in text and "Peru" in text
    assert "population_millions" in text  # the output schema is part of the text


def test_generate_multiple_gives_n_answers():
    llm, provider = judge(
        '{"capital": "Lima", "population_millions": 10}',
        '{"capital": "Lima", "population_millions": 11}',
    )
    answers = run(CapitalPrompt().generate_multiple(llm, CityInput(country="Peru"), n=2))
    assert [a.population_millions for a in answers] == [10, 11]
    assert provider.requests[0].n == 2


def test_an_answer_that_never_fits_is_a_ragas_output_parser_exception():
    llm, _ = judge("no idea", "still no idea")
    with pytest.raises(RagasOutputParserException, match="CityOutput"):
        run(CapitalPrompt().generate(llm, CityInput(country="Chad")))
    assert RagasOutputParserException is OutputParseError


def test_data_of_the_wrong_type_is_a_usage_error_naming_the_model():
    llm, _ = judge()
    with pytest.raises(UsageError, match="CapitalPrompt data must be a CityInput, got str"):
        run(CapitalPrompt().generate(llm, "France"))


def test_process_hooks_change_input_and_output():
    class Upper(CapitalPrompt):
        def process_input(self, data):
            return CityInput(country=data.country.upper())

        def process_output(self, output, data):
            return output.model_copy(update={"capital": output.capital + "!"})

    llm, provider = judge('{"capital": "Rome", "population_millions": 2.8}')
    assert run(Upper().generate(llm, CityInput(country="Italy"))).capital == "Rome!"
    assert "ITALY" in provider.requests[0].messages[-1].content


def translating_judge(prefix: str = "ES "):
    def reply(request):
        user = str(request.messages[-1].content)
        strings = json.loads(
            re.search(r"<strings>\n(.*)\n</strings>", user, flags=re.DOTALL).group(1)
        )
        # A real translator keeps the numbering at the start of each line ("1. ...").
        out = [
            re.sub(r"^(\d+\.\s*)?", lambda m: (m.group(1) or "") + prefix, s, flags=re.MULTILINE)
            for s in strings
        ]
        return json.dumps({"statements": out}, ensure_ascii=False)

    return judge(reply, repeat_last=True)


def test_adapt_translates_the_examples_and_keeps_fields_and_numbers():
    llm, _ = translating_judge()
    spanish = run(CapitalPrompt().adapt("spanish", llm))
    assert spanish.language == "spanish" and spanish.instruction == CapitalPrompt.instruction
    given, expected = spanish.examples[0]
    assert given == CityInput(country="ES Japan")
    assert expected == CityOutput(capital="ES Tokyo", population_millions=14.0)
    assert spanish.original_hash is not None and spanish != CapitalPrompt()
    assert CapitalPrompt().examples[0][0].country == "Japan"  # the original is untouched
    with_instruction = run(CapitalPrompt().adapt("spanish", llm, adapt_instruction=True))
    assert with_instruction.instruction.startswith("ES Give the capital")


def test_save_and_load_round_trip(tmp_path):
    llm, _ = translating_judge()
    spanish = run(CapitalPrompt().adapt("spanish", llm))
    path = tmp_path / "capital_spanish.json"
    spanish.save(path)
    loaded = CapitalPrompt.load(path)
    assert (
        loaded == spanish and loaded.examples == spanish.examples and loaded.language == "spanish"
    )
    with pytest.raises(FileExistsError, match="already exists"):
        spanish.save(path)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(UsageError, match=r"not a prompt saved by PydanticPrompt\.save"):
        CapitalPrompt.load(other)


def test_string_prompt_sends_the_text_as_it_is():
    llm, provider = judge("a haiku", "another haiku")
    prompt = StringPrompt()
    assert isinstance(prompt, BasePrompt)
    assert run(prompt.generate(llm, "Write a haiku about rain.")) == "a haiku"
    assert provider.requests[0].messages[0].content == "Write a haiku about rain."
    with pytest.raises(UsageError, match="StringPrompt data must be a string"):
        run(prompt.generate(llm, {"topic": "rain"}))


def test_bool_io_and_string_io_are_typed():
    assert BoolIO(value=True).value is True and StringIO(text="x").text == "x"
    with pytest.raises(ValidationError):
        BoolIO(value="perhaps")


# -- the faithfulness prompts, as the Ragas docs use them --------------------------------------------
def test_docs_snippet_faithfulness_prompt_to_string():
    # The prompt class combines input/output models with instructions and examples
    prompt = FaithfulnessPrompt()
    # Create input data
    input_data = FaithfulnessInput(
        response="The capital of France is Paris.",
        context="Paris is the capital and most populous city of France.",
    )
    # Generate the prompt string for the LLM
    prompt_string = prompt.to_string(input_data)
    assert "1. The capital of France is Paris." in prompt_string
    assert "Paris is the capital and most populous city of France." in prompt_string
    assert load_prompt("supported").instruction.strip() in prompt_string
    assert FaithfulnessOutput.model_fields.keys() == {"statements"}


def test_docs_snippet_statement_generator_to_string():
    sample_input = StatementGeneratorInput(
        question="What is the Eiffel Tower?", answer="The Eiffel Tower is located in Paris."
    )
    prompt_string = StatementGeneratorPrompt().to_string(sample_input)
    assert "<question>\nWhat is the Eiffel Tower?\n</question>" in prompt_string
    assert "<text>\nThe Eiffel Tower is located in Paris.\n</text>" in prompt_string


def test_the_faithfulness_prompts_default_to_assays_wording_and_examples():
    prompt = NLIStatementPrompt()
    builtin = load_prompt("supported")
    assert prompt.instruction == builtin.instruction
    assert prompt.assay_prompt() == builtin  # nothing changed: exactly the built-in prompt
    context, statements = prompt.examples[0][0].context, prompt.examples[0][0].statements
    assert "Amazon" in context and len(statements) == 4
    assert [a.verdict for a in prompt.examples[0][1].statements] == [1, 0, 1, 0]
    chinese = NLIStatementPrompt(language="chinese")
    assert chinese.instruction == load_prompt("supported", "chinese").instruction


def test_docs_snippet_custom_nli_instruction_keeps_the_answer_format():
    class CustomNLIPrompt(NLIStatementPrompt):
        instruction = """Carefully evaluate if each statement is supported by the context. Be strict in your verification - only mark as supported if directly stated."""

    llm, provider = judge("1. yes\n2. no")
    answer = run(
        CustomNLIPrompt().generate(
            llm,
            NLIStatementInput(
                context="The Eiffel Tower is in Paris.",
                statements=["It is in Paris.", "It is in Rome."],
            ),
        )
    )
    assert isinstance(answer, NLIStatementOutput)
    assert [(a.statement, a.verdict) for a in answer.statements] == [
        ("It is in Paris.", 1),
        ("It is in Rome.", 0),
    ]
    system = provider.requests[0].messages[0].content
    assert system.startswith("Carefully evaluate") and '"1. yes"' in system
    assay_prompt = CustomNLIPrompt().assay_prompt()
    assert assay_prompt.id == "supported" and assay_prompt.instruction.startswith(
        "Carefully evaluate"
    )


def test_docs_snippet_domain_specific_nli_examples():
    class DomainSpecificNLIPrompt(NLIStatementPrompt):
        examples = [  # noqa: RUF012 (as the Ragas docs write it)
            (
                NLIStatementInput(
                    context="Machine learning is a field within artificial intelligence that enables systems to learn from data.",
                    statements=[
                        "Machine learning is a subset of AI.",
                        "Machine learning uses statistical techniques.",
                    ],
                ),
                NLIStatementOutput(
                    statements=[
                        StatementFaithfulnessAnswer(
                            statement="Machine learning is a subset of AI.",
                            reason="The context states ML is 'a field within artificial intelligence', supporting this claim.",
                            verdict=1,
                        ),
                        StatementFaithfulnessAnswer(
                            statement="Machine learning uses statistical techniques.",
                            reason="The context doesn't mention statistical techniques.",
                            verdict=0,
                        ),
                    ]
                ),
            ),
        ]

    prompt = DomainSpecificNLIPrompt().assay_prompt()
    assert prompt.examples == (
        Example(
            input={
                "source": "Machine learning is a field within artificial intelligence that enables systems to learn "
                "from data.",
                "items": "1. Machine learning is a subset of AI.\n2. Machine learning uses statistical techniques.",
            },
            output="1. yes\n2. no",
        ),
    )
    llm, provider = judge("1. no")
    answer = run(
        DomainSpecificNLIPrompt().generate(llm, NLIStatementInput(context="c", statements=["s"]))
    )
    assert answer.statements[0].verdict == 0
    assert provider.requests[0].messages[2].content == "1. yes\n2. no"  # the example's answer turn


def test_docs_snippet_custom_claim_decomposition_prompt():
    class CustomClaimDecompositionPrompt(ClaimDecompositionPrompt):
        instruction = """You are an expert at breaking down complex statements into atomic claims. Break down the input text into clear, verifiable claims. Only output valid JSON with a "claims" array."""

    llm, provider = judge('{"claims": ["The Eiffel Tower is in Paris.", "It was built in 1889."]}')
    answer = run(
        CustomClaimDecompositionPrompt().generate(
            llm,
            ClaimDecompositionInput(response="The Eiffel Tower is in Paris and was built in 1889."),
        )
    )
    assert answer == ClaimDecompositionOutput(
        claims=["The Eiffel Tower is in Paris.", "It was built in 1889."]
    )
    assert provider.requests[0].messages[0].content.startswith("You are an expert at breaking down")


def test_statement_generator_and_faithfulness_prompt_generate():
    llm, _ = judge('{"claims": ["Paris is the capital of France."]}', "1. yes\n2. no")
    statements = run(
        StatementGeneratorPrompt().generate(
            llm,
            StatementGeneratorInput(question="Capital?", answer="Paris is the capital of France."),
        )
    )
    assert statements == StatementGeneratorOutput(statements=["Paris is the capital of France."])
    verdicts = run(
        FaithfulnessPrompt().generate(
            llm,
            FaithfulnessInput(
                response="Paris is the capital of France. It has ten million bridges.",
                context="Paris is France's capital.",
            ),
        )
    )
    assert [(s.statement, s.verdict) for s in verdicts.statements] == [
        ("Paris is the capital of France.", 1),
        ("It has ten million bridges.", 0),
    ]


def test_a_verdict_answer_missing_a_statement_is_a_parse_error():
    with pytest.raises(OutputParseError, match="no verdict for statement 2 of 2"):
        read_verdicts("1. yes", 2)
    assert read_verdicts("Here you go:\n1. Yes\n2) no", 2) == [1, 0]


def test_adapting_the_nli_prompt_keeps_its_verdict_labels():
    llm, _ = translating_judge("DE ")
    german = run(NLIStatementPrompt().adapt("german", llm))
    given, expected = german.examples[0]
    assert given.context.startswith("DE ") and all(s.startswith("DE ") for s in given.statements)
    assert [a.verdict for a in expected.statements] == [1, 0, 1, 0]
    assert german.language == "german" and german.assay_prompt().language == "german"


# -- dynamic few-shot ------------------------------------------------------------------------------
def test_dynamic_few_shot_picks_the_most_similar_examples():
    vectors = {
        "question: refund": [1.0, 0.0],
        "question: shipping": [0.0, 1.0],
        "question: refund please": [0.9, 0.1],
    }
    from assay.models import Embeddings

    embeddings = Embeddings(ScriptedProvider(vectors=vectors))
    prompt = DynamicFewShotPrompt(
        "Answer the customer: {question}",
        embedding_model=embeddings,
        max_similar_examples=1,
        similarity_threshold=0.5,
    )
    prompt.add_example({"question": "refund"}, {"answer": "Refunds take 5 days."})
    prompt.add_example({"question": "shipping"}, {"answer": "Shipping is free."})
    text = prompt.format(question="refund please")
    assert text.startswith("Answer the customer: refund please")
    assert "Refunds take 5 days." in text and "Shipping is free." not in text
    with pytest.raises(UsageError, match="needs the input 'question'"):
        prompt.format(topic="x")
    with pytest.raises(UsageError, match="similarity_threshold"):
        DynamicFewShotPrompt("x", similarity_threshold=2)


def test_dynamic_few_shot_from_a_pydantic_prompt():
    embeddings_vectors = {"country: Japan": [1.0, 0.0], "country: Japan!": [1.0, 0.0]}
    from assay.models import Embeddings

    dynamic = DynamicFewShotPrompt.from_prompt(
        CapitalPrompt(), Embeddings(ScriptedProvider(vectors=embeddings_vectors))
    )
    assert dynamic.instruction == CapitalPrompt.instruction
    assert dynamic.examples == [
        ({"country": "Japan"}, {"capital": "Tokyo", "population_millions": 14.0})
    ]


# -- prompt mixin ------------------------------------------------------------------------------------
class Synth(PromptMixin):
    name = "synth"

    def __init__(self):
        self.capital_prompt = CapitalPrompt()
        self.other = "not a prompt"


def test_prompt_mixin_on_a_class_of_ones_own(tmp_path):
    synth = Synth()
    assert list(synth.get_prompts()) == ["capital_prompt"]
    with pytest.raises(UsageError, match="no prompt named 'nope'; the prompts are capital_prompt"):
        synth.set_prompts(nope=CapitalPrompt())
    with pytest.raises(UsageError, match="must be a PydanticPrompt"):
        synth.set_prompts(capital_prompt="text")
    llm, _ = translating_judge()
    adapted = run(synth.adapt_prompts("spanish", llm))
    assert synth.capital_prompt.language == "english"  # returned, not applied
    synth.set_prompts(**adapted)
    assert synth.capital_prompt.language == "spanish"
    synth.save_prompts(tmp_path)
    assert (tmp_path / "synth_capital_prompt_spanish.json").is_file()
    loaded = synth.load_prompts(tmp_path, language="spanish")
    assert loaded["capital_prompt"] == synth.capital_prompt
    with pytest.raises(UsageError, match="not an existing directory"):
        synth.save_prompts(tmp_path / "missing")


def test_prompt_mixin_on_an_assay_metric_takes_typed_prompts():
    from assay.metrics.rag.faithfulness import Faithfulness

    class MyFaithfulness(PromptMixin, Faithfulness):
        pass

    class StrictNLI(NLIStatementPrompt):
        instruction = "Be very strict."

    metric = MyFaithfulness(llm=None)
    assert list(metric.get_prompts()) == ["n_l_i_statement_prompt"]  # Ragas' name for it
    metric.set_prompts(n_l_i_statement_prompt=StrictNLI())
    assert metric.judge_prompt("supported").instruction.startswith("Be very strict.")
    metric.set_prompts(supported=NLIStatementPrompt())  # assay's id names it too
    assert not metric.judge_prompt("supported").instruction.startswith("Be very strict.")
    with pytest.raises(UsageError, match="has no prompt 'claims'"):
        metric.set_prompts(claims=StatementGeneratorPrompt())
