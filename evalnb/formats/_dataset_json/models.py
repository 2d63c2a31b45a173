"""The models of the JSON dataset's documents (published schema): evaluator options and document shapes.

Strict at the edge (``extra="forbid"``): a key the published schema does not define is ``UNKNOWN_FIELD``.
The evaluator maps are validated entry by entry (see ``evaluators``); the document models keep them open and
the JSON Schema points editors at the typed :class:`EvaluatorMap`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, WithJsonSchema

from evalnb.formats._common import Edge, NonBlank, custom_error
from evalnb.suite import JUDGED_METRICS

__all__ = [
    "ERROR_CODES",
    "EVALUATORS_SINCE",
    "EVALUATOR_NAME",
    "LATEST_VERSION",
    "MAX_TURNS",
    "OPTIONS",
    "SCORE_ERROR_CODES",
    "TURNS_SINCE",
    "DatasetDoc",
    "EvaluatorMap",
    "LegacyPairsDoc",
    "MetadataDoc",
    "RootDoc",
    "SingleItemDoc",
    "ThreadItemDoc",
    "TurnDoc",
    "json_schema",
]

LATEST_VERSION = (
    "1.11.0"  # the published schema evalnb follows (see docs/dataset-json.md, version by version)
)
# Published changelog: per-prompt evaluator configuration arrived in 1.1.0, multi-turn in 1.2.0.
EVALUATORS_SINCE = (1, 1, 0)
TURNS_SINCE = (1, 2, 0)
MAX_TURNS = 20
EVALUATOR_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # published schema: EvaluatorMap.propertyNames

#: published schema (1.9.0, categorised error codes): ErrorObject.code of an item or turn.
ERROR_CODES = (
    "agentRequestFailed",
    "agentAuthenticationError",
    "agentRateLimited",
    "agentTimeout",
    "agentResponseUnparseable",
    "toolCallNotAllowed",
    "turnSkipped",
    "evaluatorsFailed",
    "evaluationCrashed",
)
#: published schema (1.9.0): ErroredScore.code of an evaluator that produced no result.
SCORE_ERROR_CODES = (
    "emptyAgentResponse",
    "judgeOutputUnparseable",
    "judgeAuthenticationError",
    "judgeRateLimited",
    "judgeTimeout",
    "evaluatorConfigurationError",
    "evaluatorLoadError",
    "invalidEvaluatorResult",
    "evaluatorError",
    "toolCallEvidenceIndeterminate",
)

# ------------------------------------------------------------------------------------------------------
# Evaluator options (published schema: LlmEvaluatorOptions, CitationsOptions, ...)
# ------------------------------------------------------------------------------------------------------


class LlmEvaluatorOptions(Edge):
    """Relevance, Coherence, Groundedness, Similarity: pass at ``score >= threshold`` (1..5, default 3)."""

    # published schema: a number from 1 to 5; a fractional one (3.5) is applied as given, and a judge that
    # reports probability-weighted scores can land between the whole numbers.
    threshold: Annotated[float, Field(ge=1, le=5)] = 3


class CitationsOptions(Edge):
    """Citations: pass at ``count >= threshold`` (default 1)."""

    threshold: int = Field(default=1, ge=1)
    # published schema: an open string (known: oai_unicode, bracket, markdown, mixed)
    citation_format: NonBlank = "oai_unicode"


class ExactMatchOptions(Edge):
    """ExactMatch: the response contains the expected string (both trimmed)."""

    case_sensitive: bool = False


class PartialMatchOptions(Edge):
    """PartialMatch: token F1 against the expected response, pass at ``value >= threshold``."""

    threshold: float = Field(default=0.5, ge=0, le=1)
    case_sensitive: bool = False


class SemanticSimilarityOptions(Edge):
    """SemanticSimilarity (an evalnb evaluator, not in the published schema): the cosine of offline sentence
    embeddings of the response and the expected response (or ``value``), pass at ``cosine >= threshold``."""

    threshold: float = Field(default=0.5, ge=-1, le=1)
    value: NonBlank | None = None


class RetrievalQueryOptions(Edge):
    """RetrievalQuery (published schema 1.5.0): checks the queries the agent's retrieval issued."""

    capability: NonBlank
    selector: NonBlank
    includes: list[NonBlank] | None = None
    excludes: list[NonBlank] | None = None


class RetrievalExpectedItem(Edge):
    """One claim the retrieved evidence must support."""

    retrievalExtract_contains: NonBlank


class RetrievalResultOptions(Edge):
    """RetrievalResult (published schema 1.5.0): checks what the agent's retrieval returned."""

    capability: NonBlank
    max_rank: int = Field(default=10, ge=1)
    min_expected_count: int | None = Field(default=None, ge=1)
    expected_items: Annotated[list[RetrievalExpectedItem], Field(min_length=1)] | None = None


class ToolIdentityDoc(Edge):
    """A tool identity (published schema: ToolIdentity)."""

    plugin_name: NonBlank
    function_name: NonBlank


class ToolCallExpectedDoc(Edge):
    """One expected call (published schema: ToolCallExpectedCall)."""

    tool: ToolIdentityDoc
    id: NonBlank | None = None


class ToolCallSelectionOptions(Edge):
    """ToolCallSelection: which tools were selected (repeats count once)."""

    calls: Annotated[list[ToolCallExpectedDoc], Field(min_length=1)]
    allow_additional_calls: bool = True


class ToolCallExecutionOptions(Edge):
    """ToolCallExecution: successful executions per tool (an identity listed N times needs N)."""

    calls: Annotated[list[ToolCallExpectedDoc], Field(min_length=1)]


class CustomEvaluatorOptions(Edge):
    """Options of a user-registered check; evalnb passes them to the check as keyword arguments."""

    model_config = ConfigDict(extra="allow")


class EvaluatorMap(Edge):
    """Evaluator name -> options (``{}`` = defaults). Other identifiers name user-registered checks."""

    model_config = ConfigDict(extra="allow")

    Relevance: LlmEvaluatorOptions | None = None
    Coherence: LlmEvaluatorOptions | None = None
    Groundedness: LlmEvaluatorOptions | None = None
    Similarity: LlmEvaluatorOptions | None = None
    Citations: CitationsOptions | None = None
    ExactMatch: ExactMatchOptions | None = None
    PartialMatch: PartialMatchOptions | None = None
    SemanticSimilarity: SemanticSimilarityOptions | None = None
    RetrievalQuery: RetrievalQueryOptions | None = None
    RetrievalResult: RetrievalResultOptions | None = None
    ToolCallSelection: ToolCallSelectionOptions | None = None
    ToolCallExecution: ToolCallExecutionOptions | None = None


OPTIONS: dict[str, type[Edge]] = {
    **{m: LlmEvaluatorOptions for m in JUDGED_METRICS},
    "Citations": CitationsOptions,
    "ExactMatch": ExactMatchOptions,
    "PartialMatch": PartialMatchOptions,
    "SemanticSimilarity": SemanticSimilarityOptions,
    "RetrievalQuery": RetrievalQueryOptions,
    "RetrievalResult": RetrievalResultOptions,
    "ToolCallSelection": ToolCallSelectionOptions,
    "ToolCallExecution": ToolCallExecutionOptions,
}

# Validated entry by entry (each evaluator's own options model, user checks by their signature), so the
# document-level model keeps the map open; the JSON Schema points editors at the typed EvaluatorMap.
_EMAP_MARK = "x-evalnb-evaluator-map"
Evaluators = Annotated[dict[str, Any], WithJsonSchema({_EMAP_MARK: True})]


# ------------------------------------------------------------------------------------------------------
# Document models (published schema: SingleTurnEvaluation, MultiTurnThread, Turn, DocumentMetadata ...)
# ------------------------------------------------------------------------------------------------------


class CitationDoc(Edge):
    """A citation reference (output documents)."""

    model_config = ConfigDict(extra="allow")

    index: int = Field(ge=1)
    text: str | None = None
    source: str | None = None


class ErrorDoc(Edge):
    """A turn or item error (output documents; published schema: ErrorObject, its codes categorised)."""

    code: Literal[ERROR_CODES]  # type: ignore[valid-type]
    message: NonBlank


def _no_blank_tool(tools: list[str]) -> list[str]:
    # published schema (AllowedToolList): entries are trimmed before matching, so a blank one never matches
    for t in tools:
        if not t.strip():
            raise custom_error("BLANK_FIELD", "a tool identifier must not be blank")
    return tools


AllowedTools = Annotated[list[str], AfterValidator(_no_blank_tool)]


class ToolCallIdentityDiag(Edge):
    """published schema: ToolCallDiagnosticIdentity (null: observed but unparseable)."""

    plugin_name: str | None
    function_name: str | None


class ToolCallExecutionDiag(ToolCallIdentityDiag):
    """published schema: ToolCallDiagnosticExecution."""

    response_status: int | None


class ToolCallsDiag(Edge):
    """published schema: Diagnostics.tool_calls (null: the evidence was unavailable; [] : none)."""

    selected_functions: list[ToolCallIdentityDiag] | None
    executions: list[ToolCallExecutionDiag] | None
    evidence_error: str | None = None


class DiagnosticsDoc(Edge):
    """Output diagnostics, keyed by category (published schema: Diagnostics; other categories are kept)."""

    model_config = ConfigDict(extra="allow")

    retrieval_executions: list[dict[str, Any]] | None = None
    tool_calls: ToolCallsDiag | None = None


def _scores(scores: dict[str, Any]) -> dict[str, Any]:
    # published schema (ErroredScore): an errored entry says why, with a code of the schema if any
    for key, entry in scores.items():
        if isinstance(entry, dict) and entry.get("result") == "error":
            code = entry.get("code")
            if code is not None and code not in SCORE_ERROR_CODES:
                raise custom_error(
                    "INVALID_VALUE",
                    f"scores.{key}.code {code!r} is not an errored-score code ({', '.join(SCORE_ERROR_CODES)})",
                )
    return scores


class ThreadSummaryDoc(Edge):
    """Aggregate statistics of a thread (output documents)."""

    turns_total: int = Field(ge=1)
    turns_passed: int = Field(ge=0)
    turns_failed: int = Field(ge=0)
    turns_partial: int = Field(ge=0)
    turns_errored: int = Field(ge=0)
    overall_status: Literal["pass", "fail", "partial", "error"]


Status = Literal["pass", "fail", "partial", "error"]


class TurnDoc(Edge):
    """One turn of a conversation; also the core of a single-turn item."""

    prompt: NonBlank
    expected_response: str | None = None
    context: str | None = None
    evaluators: Evaluators | None = None
    evaluators_mode: Literal["extend", "replace"] | None = None
    allowed_tools: AllowedTools | None = None
    allowed_tools_mode: Literal["extend", "replace"] | None = None
    tags: list[str] | None = None
    response: str | None = None
    citations: list[CitationDoc] | None = None
    scores: Annotated[dict[str, Any], AfterValidator(_scores)] | None = None
    diagnostics: DiagnosticsDoc | None = None
    status: Status | None = None
    error: ErrorDoc | None = None
    extensions: dict[str, Any] | None = None


class SingleItemDoc(TurnDoc):
    """A single-turn item: one prompt, optionally its expected response."""

    name: NonBlank | None = None
    testId: NonBlank | None = None
    category: NonBlank | None = None
    notes: str | None = None


def _turn_count(turns: list[Any]) -> list[Any]:
    # dataset spec: a conversation has 1 to 20 turns.
    if not turns:
        raise custom_error("MISSING_FIELD", "must list at least one turn")
    if len(turns) > MAX_TURNS:
        raise custom_error("INVALID_VALUE", f"may list at most {MAX_TURNS} turns, got {len(turns)}")
    return turns


class ThreadItemDoc(Edge):
    """A multi-turn item: named turns sent in order as one conversation."""

    turns: Annotated[list[TurnDoc], AfterValidator(_turn_count)]
    name: NonBlank | None = None
    description: str | None = None
    testId: NonBlank | None = None
    category: NonBlank | None = None
    notes: str | None = None
    evaluators: Evaluators | None = None
    evaluators_mode: Literal["extend", "replace"] | None = None
    allowed_tools: AllowedTools | None = None
    allowed_tools_mode: Literal["extend", "replace"] | None = None
    tags: list[str] | None = None
    conversation_id: str | None = None
    summary: ThreadSummaryDoc | None = None
    extensions: dict[str, Any] | None = None


class MetadataDoc(Edge):
    """Optional metadata about the document."""

    name: str | None = None
    description: str | None = None
    createdAt: str | None = None
    createdBy: str | None = None
    evaluatedAt: str | None = None
    tags: list[str] | None = None
    agentId: str | None = None
    agentName: str | None = None
    cliVersion: str | None = None
    extensions: dict[str, Any] | None = None


class DatasetDoc(Edge):
    """A versioned dataset document (the shape ``evalnb schema dataset-json`` describes)."""

    schema_uri: str | None = Field(default=None, alias="$schema")
    schemaVersion: str = Field(pattern=r"^1\.\d+\.\d+$")
    description: str | None = None
    metadata: MetadataDoc | None = None
    default_evaluators: Evaluators | None = None
    default_allowed_tools: AllowedTools | None = None
    items: Annotated[list[SingleItemDoc | ThreadItemDoc], Field(min_length=1)]


class RootDoc(DatasetDoc):
    # What is validated in one go: version and items are checked separately, with better messages.
    schemaVersion: str | None = None  # type: ignore[assignment]
    items: list[Any]


def _min_one_prompt(prompts: list[str]) -> list[str]:
    if not prompts:
        raise custom_error("MISSING_FIELD", "must list at least one prompt")
    return prompts


class LegacyPairsDoc(Edge):
    """The older legacy shape: prompts and expected responses paired in order."""

    prompts: Annotated[list[NonBlank], AfterValidator(_min_one_prompt)]
    expected_responses: list[str] | None = None


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a versioned dataset document, for editors."""
    schema: dict[str, Any] = _point_at_map(DatasetDoc.model_json_schema(by_alias=True))
    emap = EvaluatorMap.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
    defs = schema.setdefault("$defs", {})
    defs.update(emap.pop("$defs", {}))
    emap["propertyNames"] = {"pattern": EVALUATOR_NAME.pattern}
    emap["additionalProperties"] = {"type": "object", "description": "options of a user-registered check"}
    defs["EvaluatorMap"] = emap
    return schema


def _point_at_map(node: Any) -> Any:
    if isinstance(node, dict):
        if node.get(_EMAP_MARK):
            return {"$ref": "#/$defs/EvaluatorMap"}
        return {k: _point_at_map(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_point_at_map(v) for v in node]
    return node


# The starter document (dataset spec: "Answering Y creates ./evals/evals.json with sample prompts"), written by
