"""A deterministic writer-and-judge on the loopback fake OpenAI server, for generator tests.

It answers every prompt the generator sends (personas, single- and multi-hop questions) and the
two library judge prompts the quality gate sends (`supported`, `answers_question`), from the
request's own fenced inputs, so the same request always gets the same answer. Knobs make it
misbehave on purpose: quote something the context does not say, lean on "the passage", repeat a
question, deny support, fail with HTTP 500. Embeddings are hashed bags of words (64 numbers).
Anything it does not recognise gets an HTTP 418 and is recorded, so the test fails loudly.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from assay.prompts.prompt import load_prompt
from assay.testset.asking import testset_prompt
from tests.metrics.loopback import fenced, system_text
from tests.models.fake_openai import Behaviour, RecordedRequest, Reply, ok, server_error

WRITER_PROMPTS = (
    "testset.persona",
    "testset.single_hop",
    "testset.multi_hop",
    "testset.multi_hop_abstract",
    "testset.headlines",
    "testset.summary",
    "testset.keyphrases",
    "testset.title",
    "testset.entities",
    "testset.themes",
    "testset.question_potential",
    "testset.persona_themes",
)
JUDGE_PROMPTS = ("supported", "answers_question")


def prompt_of(request: RecordedRequest) -> str | None:
    system = system_text(request)
    for pid in WRITER_PROMPTS:
        if system.startswith(testset_prompt(pid).instruction.strip()):
            return pid
    for pid in JUDGE_PROMPTS:
        for language in ("english", "chinese"):
            if system.startswith(load_prompt(pid, language).instruction.strip()):
                return pid
    return None


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def first_sentence(context: str, term: str = "") -> str:
    """The first sentence (of at least four words) of a context's first prose paragraph,
    preferring one naming `term`; headings and their underlines are skipped."""
    paragraphs = [
        _flat(p)
        for p in re.split(r"\n\s*\n", context)
        if p.strip()
        and not p.lstrip().startswith("#")
        and not re.search(r"^\s*[=\-~^*]{3,}\s*$", p, flags=re.MULTILINE)
    ]
    sentences = [
        s.strip()
        for paragraph in paragraphs
        for s in re.split(r"(?<=[.!?。！？])\s*", paragraph)
        if len(s.split()) >= 4 or re.search(r"[\u4e00-\u9fff]{6,}", s)
    ]
    if not sentences:
        return _flat(context)
    if term:
        for sentence in sentences:
            if term.lower() in sentence.lower():
                return sentence
    return sentences[0]


def numbered_sentences(block: str) -> list[tuple[int, str]]:
    """The `[n] sentence` lines of a numbered context, as (n, sentence)."""
    return [
        (int(m.group(1)), m.group(2).strip())
        for m in re.finditer(r"^\[(\d+)\] (.+)$", block, flags=re.MULTILINE)
    ]


def cite(sentences: list[tuple[int, str]], term: str = "") -> tuple[int, str]:
    """The sentence a careful writer would cite: the first prose sentence (four words or more,
    ending in sentence punctuation; six CJK characters will do) naming `term`, else the first
    prose sentence, else the first sentence."""
    prose = [
        (n, s)
        for n, s in sentences
        if (len(s.split()) >= 4 and s[-1] in ".!?:") or re.search(r"[\u4e00-\u9fff]{6,}", s)
    ]
    for number, sentence in prose:
        if term and term.lower() in sentence.lower():
            return number, sentence
    return (prose or sentences)[0]


def _numbered(block: str) -> list[str]:
    parts = re.split(r"^\[(\d+)\] ", block, flags=re.MULTILINE)
    return [part.strip() for part in parts[2::2]]


@dataclass
class Writer(Behaviour):
    """Answers by prompt; `fail(request, prompt_id)` may return a Behaviour to answer instead."""

    misquote: Callable[[str, str], bool] | None = None  # (term, context): cite what is not there
    leaning: Callable[[str, str], bool] | None = None  # (term, context): "according to the passage"
    unsupported_words: set[str] = field(default_factory=set)  # the judge denies support
    unsupported_statements: set[str] = field(default_factory=set)  # ...to statements naming these
    same_question: bool = False
    one_hop_evidence: bool = False  # multi-hop answers quoting one context only
    one_hop_answer: bool = False  # multi-hop drafts citing two contexts, answered from the first
    english_questions: bool = False  # ignores <language>: English questions on any corpus
    fail: Callable[[RecordedRequest, str], Behaviour | None] | None = None
    calls: Counter = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def respond(self, request: RecordedRequest) -> Reply:
        pid = prompt_of(request)
        with self._lock:
            self.calls[pid] += 1
        if pid is None:
            with self._lock:
                self.unexpected.append(system_text(request)[:80])
            return Reply(
                418, {"error": {"message": "unscripted", "type": "x", "param": None, "code": None}}
            )
        if self.fail is not None:
            behaviour = self.fail(request, pid)
            if behaviour is not None:
                return behaviour.respond(request)
        if request.last_user_text.startswith("That reply could not be used"):
            # the model layer's repair turn: this writer sends its answer again unchanged
            return ok(request.messages[-2]["content"]).respond(request)
        return ok(self.answer(pid, request)).respond(request)

    def supports(self, source: str, statement: str) -> bool:
        """A careful judge: a statement is supported when nearly all its words are in the
        source (and it names nothing in `unsupported_statements`)."""
        if any(w in statement for w in self.unsupported_statements):
            return False
        words, present = _words(statement), set(_words(source))
        return not words or sum(w in present for w in words) >= 0.8 * len(words)

    def answer(self, pid: str, request: RecordedRequest) -> str:
        if pid == "testset.persona":
            taken = fenced(request, "taken")
            count = 0 if taken == "none" else len(_numbered(taken)) or 1
            name = ["Evening student", "Retired engineer", "Busy parent", "Night nurse"][count % 4]
            return json.dumps(
                {"name": name, "role_description": f"A {name.lower()} who reads to learn facts."}
            )
        if pid == "testset.single_hop":
            term, context = fenced(request, "term"), fenced(request, "context")
            sentences = numbered_sentences(context)
            number, evidence = cite(sentences, term)
            words = " ".join(evidence.split()[:6])
            question = f"What about {term or 'it'}, given that {words}?"
            if self.same_question:
                question = "What is the main fact here?"
            if self.english_questions:
                question = f"What does the kettle guide say about {term or 'care'}?"
            if self.leaning and self.leaning(term, context):
                question = f"According to the passage, what is {term}?"
            if self.misquote and self.misquote(term, context):
                number = len(sentences) + 5  # cites a sentence that is not there
            return json.dumps({"question": question, "answer": evidence, "evidence": [number]})
        if pid in ("testset.multi_hop", "testset.multi_hop_abstract"):
            blocks = re.split(r"^Context [A-Z]:\n", fenced(request, "contexts"), flags=re.MULTILINE)
            # one sentence of each context, as the draft schema asks
            cited = [cite(numbered_sentences(b)) for b in blocks if b.strip()]
            if self.one_hop_evidence:  # ignores the schema: cites the first context only
                cited = cited[:1]
            quotes = [text for _, text in cited]
            key = "themes" if pid.endswith("abstract") else "terms"
            terms = _flat(fenced(request, key))[:40]
            question = (
                f"How do {terms} connect {' '.join(quotes[0].split()[:4])} "
                f"with {' '.join(quotes[-1].split()[:4])}?"
            )
            return json.dumps(
                {
                    "question": question,
                    # one part per context; a one-hop answer repeats the first context's
                    "parts": [quotes[0]] * len(quotes) if self.one_hop_answer else quotes,
                    "evidence": [number for number, _ in cited],
                }
            )
        if pid == "supported":
            source = fenced(request, "source")
            items = re.findall(r"^\d+\.(.*)$", fenced(request, "items"), flags=re.MULTILINE)
            denied = any(w in source for w in self.unsupported_words)
            return "\n".join(
                f"{i}. {'yes' if not denied and self.supports(source, item) else 'no'}"
                for i, item in enumerate(items, start=1)
            )
        if pid == "answers_question":
            return "yes"
        if pid == "testset.summary":
            return json.dumps({"summary": first_sentence(fenced(request, "text"))})
        if pid == "testset.headlines":
            text = fenced(request, "text")
            return json.dumps({"headlines": re.findall(r"^#+\s+(.+)$", text, flags=re.MULTILINE)})
        if pid in ("testset.entities", "testset.themes", "testset.keyphrases"):
            key = {
                "testset.entities": "entities",
                "testset.themes": "themes",
                "testset.keyphrases": "keyphrases",
            }[pid]
            words = re.findall(r"\b[A-Z][a-z]+\b", fenced(request, "text"))
            return json.dumps({key: list(dict.fromkeys(words))[:5]})
        if pid == "testset.title":
            return json.dumps({"title": first_sentence(fenced(request, "text"))[:40]})
        if pid == "testset.persona_themes":
            # renamed personas and one invented theme, as small models do
            personas = [p.split(":")[0] for p in _numbered(fenced(request, "personas"))]
            themes = _numbered(fenced(request, "themes"))
            return json.dumps(
                {
                    "matches": [
                        {"persona": p.upper(), "themes": [*themes[:1], "Invented theme"]}
                        for p in personas
                    ]
                }
            )
        if pid == "testset.question_potential":
            return json.dumps({"score": 4})
        raise AssertionError(pid)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def bag_of_words(text: str, dimensions: int = 64) -> list[float]:
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        vector[zlib.crc32(word.encode()) % dimensions] += 1.0
    vector[0] += 0.01  # never all zeros
    return vector


class BagOfWords(Behaviour):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def respond(self, request: RecordedRequest) -> Reply:
        inputs = request.body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        self.texts += texts
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
            for i, t in enumerate(texts)
        ]
        return Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": "bow",
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            },
        )


def fail_on(pid: str, when: Callable[[RecordedRequest], bool], status: int = 500):
    """A `fail` hook answering HTTP `status` to requests of prompt `pid` that match `when`."""

    def hook(request: RecordedRequest, prompt: str) -> Behaviour | None:
        return server_error(status) if prompt == pid and when(request) else None

    return hook
