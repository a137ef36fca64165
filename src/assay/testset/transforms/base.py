"""Graph transformations and how they run.

A transformation turns into an execution plan: coroutines that change the graph. Extractors add
one property per node (one coroutine per node, so one node's failure costs only that node),
filters remove nodes, splitters add chunks and `child`/`next` relationships (one coroutine that
walks the nodes in order, so node order never depends on timing), relationship builders add
relationships. `Parallel` pools the plans of its members into one run.

`apply_transforms` runs the plans with bounded concurrency and never lets one failure lose the
others' work: a coroutine that fails after the model layer's retries is recorded (transform,
node, error) in the returned `TransformReport` and the run goes on. `raise_exceptions=True`
raises the first failure once every coroutine has finished.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from assay._util.sync import run_sync
from assay.testset.graph import KnowledgeGraph, Node, NodeType, Relationship
from assay.testset.text import count_tokens

logger = logging.getLogger("assay.testset.transforms")

Progress = Callable[[str, int, int], None]


def default_filter(node: Node) -> bool:
    return True


def is_chunk(node: Node) -> bool:
    return node.type == NodeType.CHUNK


def is_document(node: Node) -> bool:
    return node.type == NodeType.DOCUMENT


def longer_than(tokens: int, node_type: NodeType | None = None) -> Callable[[Node], bool]:
    """Nodes (of a type) whose page_content has more than `tokens` tokens."""

    def check(node: Node) -> bool:
        if node_type is not None and node.type != node_type:
            return False
        return count_tokens(node.get_property("page_content") or "") > tokens

    return check


@dataclass
class BaseGraphTransformation:
    name: str = ""
    filter_nodes: Callable[[Node], bool] = field(default=default_filter, repr=False)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__

    def filter(self, kg: KnowledgeGraph) -> KnowledgeGraph:
        """The nodes that pass `filter_nodes`, and the relationships between them."""
        kept = [node for node in kg.nodes if self.filter_nodes(node)]
        ids = {node.id for node in kept}
        rels = [r for r in kg.relationships if r.source.id in ids and r.target.id in ids]
        return KnowledgeGraph(nodes=kept, relationships=rels)

    async def transform(self, kg: KnowledgeGraph) -> Any:
        raise NotImplementedError

    def generate_execution_plan(self, kg: KnowledgeGraph) -> list[Step]:
        raise NotImplementedError


@dataclass
class Step:
    """One coroutine of a plan, with what it works on (for the report)."""

    transform: str
    node: str | None
    coroutine: Coroutine[Any, Any, Any]


@dataclass
class Extractor(BaseGraphTransformation):
    """Adds one property per node; a node that already has it is left as it is."""

    async def extract(self, node: Node) -> tuple[str, Any]:
        raise NotImplementedError

    async def transform(self, kg: KnowledgeGraph) -> list[tuple[Node, tuple[str, Any]]]:
        return [(node, await self.extract(node)) for node in self.filter(kg).nodes]

    def generate_execution_plan(self, kg: KnowledgeGraph) -> list[Step]:
        return [
            Step(self.name, str(node.id), self._extract_into(node))
            for node in self.filter(kg).nodes
        ]

    async def _extract_into(self, node: Node) -> None:
        key, value = await self.extract(node)
        if node.get_property(key) is not None:
            logger.info("Property %r already exists in node %.6s. Skipping!", key, str(node.id))
            return
        node.properties.pop(key.lower(), None)  # a None placeholder may be replaced
        node.add_property(key, value)


@dataclass
class LLMBasedExtractor(Extractor):
    llm: Any = None
    merge_if_possible: bool = True
    max_token_limit: int = 32000
    tokenizer: Any = None
    language: str = "english"
    # An answer's max_tokens: None for the extractor's own bound (`asking.list_budget` and the
    # like), or a fixed number (a reasoning model's thinking counts against it). One try either
    # way: a cut-off answer fails its node.
    max_tokens: int | None = None

    def budget(self, default: int) -> int:
        return self.max_tokens if self.max_tokens is not None else default

    def pieces(self, text: str) -> list[str]:
        """The text cut into pieces the model can read (at most `max_token_limit` tokens)."""
        from assay.testset.text import chunk_document

        if count_tokens(text) <= self.max_token_limit:
            return [text]
        return [p.text for p in chunk_document(text, min_tokens=1, max_tokens=self.max_token_limit)]


@dataclass
class NodeFilter(BaseGraphTransformation):
    """Removes the nodes for which `custom_filter` returns True."""

    async def custom_filter(self, node: Node, kg: KnowledgeGraph) -> bool:
        raise NotImplementedError

    async def transform(self, kg: KnowledgeGraph) -> list[Node]:
        return [node for node in self.filter(kg).nodes if await self.custom_filter(node, kg)]

    def generate_execution_plan(self, kg: KnowledgeGraph) -> list[Step]:
        return [Step(self.name, str(n.id), self._apply(n, kg)) for n in self.filter(kg).nodes]

    async def _apply(self, node: Node, kg: KnowledgeGraph) -> None:
        if await self.custom_filter(node, kg) and node in kg.nodes:
            kg.remove_node(node)


@dataclass
class Splitter(BaseGraphTransformation):
    """Splits nodes into chunks: the new nodes and `child`/`next` relationships are added, the
    parent kept."""

    async def split(self, node: Node) -> tuple[list[Node], list[Relationship]]:
        raise NotImplementedError

    async def transform(self, kg: KnowledgeGraph) -> tuple[list[Node], list[Relationship]]:
        nodes: list[Node] = []
        rels: list[Relationship] = []
        for node in self.filter(kg).nodes:
            new_nodes, new_rels = await self.split(node)
            nodes += new_nodes
            rels += new_rels
        return nodes, rels

    def generate_execution_plan(self, kg: KnowledgeGraph) -> list[Step]:
        return [Step(self.name, None, self._split_all(kg))]

    async def _split_all(self, kg: KnowledgeGraph) -> None:
        nodes, rels = await self.transform(kg)
        known = {node.id for node in kg.nodes}
        kg.nodes.extend(node for node in nodes if node.id not in known)
        kg.relationships.extend(rels)


@dataclass
class RelationshipBuilder(BaseGraphTransformation):
    async def transform(self, kg: KnowledgeGraph) -> list[Relationship]:
        raise NotImplementedError

    def generate_execution_plan(self, kg: KnowledgeGraph) -> list[Step]:
        return [Step(self.name, None, self._build(kg))]

    async def _build(self, kg: KnowledgeGraph) -> None:
        kg.relationships.extend(await self.transform(kg))


class Parallel:
    """Transformations whose plans run together (they must not depend on each other)."""

    def __init__(self, *transformations: BaseGraphTransformation | Parallel) -> None:
        self.transformations = list(transformations)

    def __repr__(self) -> str:
        return f"Parallel({', '.join(repr(t) for t in self.transformations)})"

    @property
    def name(self) -> str:
        return " + ".join(t.name for t in self.transformations)

    def generate_execution_plan(self, kg: KnowledgeGraph) -> list[Step]:
        return [step for t in self.transformations for step in t.generate_execution_plan(kg)]


@dataclass
class TransformFailure:
    transform: str
    node: str | None
    error: str
    exception: BaseException | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"transform": self.transform, "node": self.node, "error": self.error}


@dataclass
class TransformReport:
    """What `apply_transforms` did: steps run per transform, and every failure with its cause."""

    steps: dict[str, int] = field(default_factory=dict)
    failures: list[TransformFailure] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": dict(self.steps), "failures": [f.to_dict() for f in self.failures]}


Transforms = BaseGraphTransformation | Parallel | Sequence[BaseGraphTransformation | Parallel]


async def aapply_transforms(
    kg: KnowledgeGraph,
    transforms: Transforms,
    run_config: Any = None,
    callbacks: Any = None,
    *,
    max_workers: int | None = None,
    on_progress: Progress | None = None,
    raise_exceptions: bool = False,
) -> TransformReport:
    """Apply transforms to `kg` in place, in order; see the module docstring."""
    if isinstance(transforms, (BaseGraphTransformation, Parallel)):
        transforms = [transforms]
    elif not isinstance(transforms, Sequence):
        raise ValueError(f"Invalid transforms type: {type(transforms)}")
    workers = max_workers or getattr(run_config, "max_workers", None) or 16
    workers = workers if workers > 0 else 64  # RunConfig's -1: no fixed limit
    report = TransformReport()
    for transform in transforms:
        if not isinstance(transform, (BaseGraphTransformation, Parallel)):
            raise ValueError(f"Invalid transforms type: {type(transform)}")
        await _run_plan(
            transform.name, transform.generate_execution_plan(kg), workers, report, on_progress
        )
    failures = report.failures
    if raise_exceptions and failures and failures[0].exception is not None:
        raise failures[0].exception
    return report


async def _run_plan(
    name: str, plan: list[Step], workers: int, report: TransformReport, on_progress: Progress | None
) -> None:
    report.steps[name] = len(plan)
    limiter = anyio.CapacityLimiter(workers)
    done = 0
    if on_progress:
        on_progress(name, 0, len(plan))

    async def run(step: Step) -> None:
        nonlocal done
        async with limiter:
            try:
                await step.coroutine
            except Exception as exc:  # recorded; the other nodes' work is kept
                logger.warning("%s failed on node %s: %s", step.transform, step.node, exc)
                report.failures.append(
                    TransformFailure(step.transform, step.node, f"{type(exc).__name__}: {exc}", exc)
                )
        done += 1
        if on_progress:
            on_progress(name, done, len(plan))

    async with anyio.create_task_group() as group:
        for step in plan:
            group.start_soon(run, step)


def apply_transforms(
    kg: KnowledgeGraph,
    transforms: Transforms,
    run_config: Any = None,
    callbacks: Any = None,
    *,
    max_workers: int | None = None,
    on_progress: Progress | None = None,
    raise_exceptions: bool = False,
) -> TransformReport:
    """Synchronous `aapply_transforms` (safe inside a running event loop)."""
    return run_sync(
        aapply_transforms(
            kg,
            transforms,
            run_config,
            callbacks,
            max_workers=max_workers,
            on_progress=on_progress,
            raise_exceptions=raise_exceptions,
        )
    )


def rollback_transforms(kg: KnowledgeGraph, transforms: Transforms) -> None:
    raise NotImplementedError("transforms cannot be rolled back; reload a saved graph instead")


__all__ = [
    "BaseGraphTransformation",
    "Extractor",
    "LLMBasedExtractor",
    "NodeFilter",
    "Parallel",
    "RelationshipBuilder",
    "Splitter",
    "Step",
    "TransformFailure",
    "TransformReport",
    "aapply_transforms",
    "apply_transforms",
    "default_filter",
    "is_chunk",
    "is_document",
    "longer_than",
    "rollback_transforms",
]
