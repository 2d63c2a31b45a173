"""The one model every suite format loads into.

``Suite`` holds ``Case`` objects; a case holds one or more ``Turn`` objects (several when it is a
multi-turn conversation); a turn holds the prompt, what is expected and the typed check specs that
decide pass or fail. The formats in ``evalnb.formats`` translate their files into this model and the
runner, the checks and the store only ever see this model: nothing downstream branches on the format.

Check specs are a discriminated union on ``type``. Each spec records its options with their final values
(defaults applied), so a saved run says exactly what was checked and with which thresholds.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.dataclasses import dataclass

from evalnb._slim import _Slim
from evalnb._unicode import clean_data, is_cleaned

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Case",
    "CheckSpec",
    "CitationsCheck",
    "CustomCheck",
    "ExactMatchCheck",
    "ExitCodeCheck",
    "ExpectedToolCall",
    "FileExistsCheck",
    "FormatName",
    "InsightCheck",
    "IntentCheck",
    "JsonCheck",
    "JudgedMetricCheck",
    "LLMJudgeCheck",
    "LevenshteinCheck",
    "LimitCheck",
    "Message",
    "PartialMatchCheck",
    "ReferenceQuery",
    "RefusalCheck",
    "RegexCheck",
    "RetrievalQueryCheck",
    "RetrievalResultCheck",
    "RowsCheck",
    "SemanticSimilarityCheck",
    "Suite",
    "TextMatchCheck",
    "Tolerance",
    "ToolCallExecutionCheck",
    "ToolCallSelectionCheck",
    "ToolRef",
    "Turn",
]


def _registered_format(name: str) -> str:
    # A suite carries the name of the format it came from: a built-in one or one a module registered. The
    # formats sit above the suite model, so their registry is reached through the slot evalnb/__init__.py fills.
    from evalnb import _hooks

    formats = _hooks.implementation("formats")
    if not formats.is_format(name):
        raise ValueError(f"unknown format {name!r}; registered formats: {', '.join(formats.names())}")
    return name


FormatName = Annotated[str, AfterValidator(_registered_format)]
"""A registered format's name: ``"tasks-toml"``, ``"cube-yaml"``, ``"dataset-json"`` or a plugin's."""
JUDGED_METRICS = ("Relevance", "Coherence", "Groundedness", "Similarity")
CITATION_FORMATS = ("oai_unicode", "bracket", "markdown", "mixed")
"""The citation formats whose markers evalnb detects (docs/dataset-json.md, citations: ``citation_format`` is an open
string; another value counts the citations of every one of these)."""
INTENTS = ("QUERY", "INSIGHT", "VIEW_CHANGE", "REFUSED")


class _Model(BaseModel):
    # Strict at the edge: the model itself never accepts keys it does not define. defer_build: a model's
    # validator is built when it first validates, not at import; a dataset loaded and run builds only those of
    # the checks it uses, not the suite's, which holds every check type's.
    model_config = ConfigDict(extra="forbid", frozen=False, defer_build=True)

    @model_validator(mode="after")
    def _encodable(self) -> Any:
        return _encodable(self, self.__dict__)


def _encodable(obj: Any, fields: Any) -> Any:
    # Text every file, database and terminal can take (evalnb._unicode): a suite built in Python, not loaded,
    # may hold lone surrogates too; they become U+FFFD. A loaded document was cleaned whole.
    if is_cleaned():
        return obj
    for name in list(fields):
        value = getattr(obj, name)
        if isinstance(value, (str, dict, list)):
            cleaned = clean_data(value)
            if cleaned is not value:
                object.__setattr__(obj, name, cleaned)
    return obj


_SLIM = ConfigDict(extra="forbid", defer_build=True)


class Message(_Model):
    """One earlier message of a conversation."""

    role: str
    content: str


# --------------------------------------------------------------------------------------------------
# Check specs
# --------------------------------------------------------------------------------------------------


class _CheckBase(_Model):
    @property
    def name(self) -> str:
        """The check's name as the suite writes it (the ``check`` column of ``result.scores``)."""
        return str(self.type)  # type: ignore[attr-defined]

    @property
    def judged(self) -> bool:
        """Whether this check needs a judge."""
        return False

    @property
    def needs_expected(self) -> bool:
        """Whether this check compares with the turn's expected response (and so means nothing without one)."""
        return False

    def options(self) -> dict[str, Any]:
        """The check's options with their final values (what a saved run records)."""
        return self.model_dump(exclude={"type"}, mode="json")


class ExitCodeCheck(_CheckBase):
    """docs/tasks-toml.md, keys and assertions: passes when the run's exit code equals ``equals``."""

    type: Literal["exit_code"] = "exit_code"
    equals: int


class FileExistsCheck(_CheckBase):
    """docs/tasks-toml.md, keys and assertions: passes when ``path`` exists after the run: a relative path in the
    run's working directory, an absolute one as written."""

    type: Literal["file_exists"] = "file_exists"
    path: str


class RegexCheck(_CheckBase):
    """docs/tasks-toml.md, keys and assertions: ``pattern`` searched (not full-matched) in ``stdout`` or the final
    ``result`` text."""

    type: Literal["regex"] = "regex"
    on: Literal["stdout", "result"]
    pattern: str


class _Labelled(_CheckBase):
    label: str | None = (
        None  # the name the suite gives the check: a promptfoo assert's `metric`, else its type
    )

    @property
    def name(self) -> str:
        return self.label or str(self.type)  # type: ignore[attr-defined]

    def options(self) -> dict[str, Any]:
        return self.model_dump(exclude={"type", "label"}, mode="json")

    @model_serializer(mode="wrap")
    def _label_when_given(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A label nobody gave is not written: suites saved before labels existed keep their options and hash.
        data = handler(self)
        if self.label is None and isinstance(data, dict):
            data.pop("label", None)
        return data


class LLMJudgeCheck(_Labelled):
    """docs/tasks-toml.md, keys and assertions: a judge rates the output against ``rubric``; the rubric is the whole
    criterion (``label``: a promptfoo assert's name, docs/promptfoo.md)."""

    type: Literal["llm_judge"] = "llm_judge"
    rubric: str

    @property
    def judged(self) -> bool:
        return True


class JudgedMetricCheck(_CheckBase):
    """Relevance, Coherence, Groundedness or Similarity, 1..5, passes at ``score >= threshold``
    (docs/dataset-json.md, evaluators)."""

    type: Literal["Relevance", "Coherence", "Groundedness", "Similarity"]
    # docs/dataset-json.md, evaluators: the threshold is a number in 1..5, so 3.5 is allowed.
    threshold: float = Field(default=3.0, ge=1, le=5)

    @property
    def judged(self) -> bool:
        return True

    @property
    def needs_expected(self) -> bool:
        return self.type == "Similarity"  # Similarity rates the response against the expected response


class SemanticSimilarityCheck(_Labelled):
    """The cosine of sentence embeddings of the response and the expected response; passes at
    ``cosine >= threshold``. Like promptfoo's ``similar``, with no API: the embeddings are wordllama's
    (offline, the ``offline-judge`` extra).

    ``value`` compares with that text instead of the turn's expected response. The default threshold, 0.5, is
    where, on the fit half of the labelled pairs, most answers labelled 4-5 for Similarity pass and most
    labelled 1-2 do not; static embeddings give paraphrases cosines of 0.4-0.7, lower than API models do.
    """

    # Each format's own spelling, kept as the check name; promptfoo's `not-similar` passes below the threshold.
    type: Literal["SemanticSimilarity", "semantic_similarity", "similar", "not-similar"] = (
        "SemanticSimilarity"
    )
    threshold: float = Field(default=0.5, ge=-1, le=1)
    value: str | None = None

    @property
    def needs_expected(self) -> bool:
        return self.value is None


class TextMatchCheck(_Labelled):
    """The response text against ``values`` (promptfoo's string asserts, docs/promptfoo.md): ``how`` is ``equals``,
    ``contains``, ``starts_with``, ``any`` / ``all`` (of the values) or ``regex`` (a search); ``negate`` passes
    when the plain check fails. Case-insensitive compares Unicode case-folded text. Its value is 1.0 or 0.0."""

    type: Literal["text_match"] = "text_match"
    how: Literal["equals", "contains", "starts_with", "any", "all", "regex"]
    values: list[str] = Field(min_length=1)
    case_sensitive: bool = True
    negate: bool = False


class JsonCheck(_Labelled):
    """The response as JSON: ``how`` ``is`` (the whole text parses), ``contains`` (some JSON object or array in it
    parses) or ``equals`` (it parses to ``value``); ``json_schema``: a JSON Schema the parsed value must meet."""

    type: Literal["json"] = "json"
    how: Literal["is", "contains", "equals"] = "is"
    json_schema: dict[str, Any] | None = None
    value: Any = None
    negate: bool = False


class LevenshteinCheck(_Labelled):
    """The edit distance to ``value`` (its value, lower is better); passes at ``distance <= threshold``."""

    type: Literal["levenshtein"] = "levenshtein"
    value: str
    threshold: float = Field(default=5.0, ge=0)
    negate: bool = False


class LimitCheck(_Labelled):
    """promptfoo's ``latency`` (ms, ``Response.latency_ms``) and ``cost`` (USD, the response's ``meta["cost"]`` or
    ``usage["cost"]``): the measure is the value; passes at ``value <= threshold`` (a cost without one is only
    recorded). A measure the response lacks is not evaluated: the check fails, saying so."""

    type: Literal["latency", "cost"]
    threshold: float | None = Field(default=None, ge=0)


class CitationsCheck(_CheckBase):
    """docs/dataset-json.md, evaluators: counts citations in the response; passes at ``count >= threshold``."""

    type: Literal["Citations"] = "Citations"
    threshold: int = Field(default=1, ge=1)
    # docs/dataset-json.md, citations: an open string; a format evalnb does not know counts the citations of every
    # known one
    citation_format: str = Field(default="oai_unicode", min_length=1)


class ExactMatchCheck(_CheckBase):
    """docs/dataset-json.md, text comparison: the response contains the expected string (both trimmed)."""

    type: Literal["ExactMatch"] = "ExactMatch"
    case_sensitive: bool = False

    @property
    def needs_expected(self) -> bool:
        return True


class PartialMatchCheck(_CheckBase):
    """Token-level F1 against the expected response; passes at ``value >= threshold`` (docs/dataset-json.md,
    evaluators)."""

    type: Literal["PartialMatch"] = "PartialMatch"
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    case_sensitive: bool = False

    @property
    def needs_expected(self) -> bool:
        return True


class RetrievalQueryCheck(_CheckBase):
    """RetrievalQuery, options as the schema defines them (kept verbatim; docs/dataset-json.md, evaluators).

    Scored only when the response carries retrieval diagnostics; otherwise reported as not evaluated.
    """

    type: Literal["RetrievalQuery"] = "RetrievalQuery"
    settings: dict[str, Any] = Field(default_factory=dict)


class RetrievalResultCheck(_CheckBase):
    """RetrievalResult, options as the schema defines them (kept verbatim; docs/dataset-json.md, evaluators)."""

    type: Literal["RetrievalResult"] = "RetrievalResult"
    settings: dict[str, Any] = Field(default_factory=dict)


class ToolRef(_Model):
    """A tool identity as a dataset names it: ``plugin_name`` and ``function_name`` (docs/dataset-json.md, tool calls
    and allowlists)."""

    plugin_name: str = Field(min_length=1)
    function_name: str = Field(min_length=1)

    @property
    def label(self) -> str:
        """``plugin_function``: the full identifier allowlists use."""
        return f"{self.plugin_name}_{self.function_name}"


class ExpectedToolCall(_Model):
    """One expected call of a tool-call evaluator: the tool, and an optional label for diagnostics."""

    tool: ToolRef
    id: str | None = Field(default=None, min_length=1)


class _ToolCallCheck(_CheckBase):
    calls: list[ExpectedToolCall] = Field(min_length=1)

    def options(self) -> dict[str, Any]:
        # docs/dataset-json.md, tool calls and allowlists: `id` is a string when given, never null
        return self.model_dump(exclude={"type"}, exclude_none=True, mode="json")


class ToolCallSelectionCheck(_ToolCallCheck):
    """ToolCallSelection (docs/dataset-json.md, tool calls and allowlists): which tools the agent selected (called,
    whatever became of the call). Every expected tool must be among them (repeats count once); with
    ``allow_additional_calls`` false, no other tool may be."""

    type: Literal["ToolCallSelection"] = "ToolCallSelection"
    allow_additional_calls: bool = True


class ToolCallExecutionCheck(_ToolCallCheck):
    """ToolCallExecution (docs/dataset-json.md, tool calls and allowlists): successful executions per tool: an
    identity listed N times needs at least N calls of it whose status is ``succeeded``."""

    type: Literal["ToolCallExecution"] = "ToolCallExecution"


class IntentCheck(_CheckBase):
    """docs/cube-yaml.md, numbers and text in rows: ``expectedIntent``, compared case-insensitively (stored
    upper-case)."""

    type: Literal["intent"] = "intent"
    expected: Literal["QUERY", "INSIGHT", "VIEW_CHANGE", "REFUSED"]


class RefusalCheck(_CheckBase):
    """docs/cube-yaml.md, numbers and text in rows: ``expectedRefusalContains``, a case-sensitive substring of the
    refusal reason."""

    type: Literal["refusal"] = "refusal"
    contains: str


class InsightCheck(_CheckBase):
    """docs/cube-yaml.md, numbers and text in rows: ``expectedInsightContains``, case-sensitive substrings of the
    insight markdown."""

    type: Literal["insight"] = "insight"
    contains: list[str]


class Tolerance(_Model):
    """docs/cube-yaml.md, row comparison: a cell passes if ``|a-e| <= absolute`` or ``|a-e|/|e| <= relative``; both
    default 0."""

    absolute: float = Field(default=0.0, ge=0.0)
    relative: float = Field(default=0.0, ge=0.0)


class ReferenceQuery(_Model):
    """docs/cube-yaml.md, structured reference queries: ground truth computed live. Either ``sql`` or the structured
    form."""

    sql: str | None = None
    measures: list[dict[str, Any]] = Field(default_factory=list)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    filters: list[Any] = Field(default_factory=list)


class RowsCheck(_CheckBase):
    """docs/cube-yaml.md, row comparison: rows compared with key normalisation, lenient numbers and tolerance.

    Exactly one of ``expected`` (static ``expectedRows``) and ``reference_query`` is set.
    """

    type: Literal["rows"] = "rows"
    expected: list[dict[str, Any]] | None = None
    reference_query: ReferenceQuery | None = None
    order_matters: bool = True
    tolerance: Tolerance = Field(default_factory=Tolerance)
    decimal_comma: bool = False
    """Numbers written as text take a comma as the decimal mark and dots between thousands (``"1.234,5"``)."""


class CustomCheck(_CheckBase):
    """A check registered by the user (a dataset file's custom evaluator names one).

    ``settings`` are passed to the check as keyword options. ``threshold`` (docs/dataset-json.md, evaluators:
    a custom evaluator): when set, the check passes when its value is ``>= threshold``, whatever it said itself.
    ``higher_is_better``: which way this use of the check is better (``None``: as the check was registered or
    declared, see ``evalnb.checks.scales.higher_is_better``); recorded with the run's options, so a comparison
    of saved runs reads it (docs/comparison.md, direction).
    """

    type: Literal["custom"] = "custom"
    check: str
    settings: dict[str, Any] = Field(default_factory=dict)
    threshold: float | None = None
    higher_is_better: bool | None = None

    @property
    def name(self) -> str:
        return self.check

    @model_serializer(mode="wrap")
    def _said_only_when_said(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A direction nobody gave is not written: suites and runs from before it existed keep their options
        # and their content hash.
        data = handler(self)
        if self.higher_is_better is None and isinstance(data, dict):
            data.pop("higher_is_better", None)
        return data


CheckSpec = Annotated[
    ExitCodeCheck
    | FileExistsCheck
    | RegexCheck
    | LLMJudgeCheck
    | JudgedMetricCheck
    | SemanticSimilarityCheck
    | CitationsCheck
    | ExactMatchCheck
    | PartialMatchCheck
    | RetrievalQueryCheck
    | RetrievalResultCheck
    | ToolCallSelectionCheck
    | ToolCallExecutionCheck
    | IntentCheck
    | RefusalCheck
    | InsightCheck
    | RowsCheck
    | TextMatchCheck
    | JsonCheck
    | LevenshteinCheck
    | LimitCheck
    | CustomCheck,
    Field(discriminator="type"),
]


# --------------------------------------------------------------------------------------------------
# Suite, Case, Turn
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True, config=_SLIM)
class Turn(_Slim):
    """One prompt sent to the agent and what decides whether its answer passes.

    Attributes:
        prompt: the text sent to the agent.
        expected: the expected response (dataset ``expected_response``), if any.
        history: messages written in the file that precede this prompt (cube ``history``). The runner adds
            the agent's own earlier answers for later turns of a multi-turn case.
        context: grounding text the file gives for this turn (dataset ``context``).
        checks: the final, resolved list of checks for this turn.
        allowed_tools: the tools the agent may call in this turn (a dataset's resolved ``allowed_tools``), or
            ``None`` when the suite declares no allowlist: then no tool call is checked against one.
        meta: extra data the file gives for the turn (a dataset's ``tags``, output keys ...).
    """

    prompt: str
    expected: str | None = None
    history: list[Message] = Field(default_factory=list)
    context: str | None = None
    checks: list[CheckSpec] = Field(default_factory=list)
    allowed_tools: list[str] | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _encodable(self) -> Any:
        return _encodable(self, self.__dataclass_fields__)

    @model_serializer(mode="wrap")
    def _without_unset_allowlist(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # No allowlist is no key at all: the saved definition (and the content hash) of a suite without one is
        # what it was before allowlists existed.
        out: dict[str, Any] = handler(self)
        if out.get("allowed_tools", ()) is None:
            out.pop("allowed_tools")
        return out

    def check_ids(self) -> list[str]:
        """Unique ids of this turn's checks: ``regex``, ``regex#2`` for a second regex (docs/results.md, `scores`)."""
        seen: Counter[str] = Counter()
        ids = []
        for spec in self.checks:
            seen[spec.name] += 1
            n = seen[spec.name]
            ids.append(spec.name if n == 1 else f"{spec.name}#{n}")
        return ids


@dataclass(slots=True, kw_only=True, config=_SLIM)
class Case(_Slim):
    """One evaluation case: a task, a cube question or a dataset item.

    Attributes:
        id: task ``id``, case ``name``, item ``testId`` or ``name``, or a stable generated id.
        name: a display name.
        category: a category tag for per-category analysis.
        runs: how many times the case runs (TOML default 3; cube and dataset 1).
        agent: the agent id the case names, if any.
        turns: one turn, or several for a multi-turn conversation (run in order as one conversation).
        notes: free-form notes.
    """

    id: str
    name: str
    category: str | None = None
    runs: int = Field(default=1, ge=0, le=2**32 - 1)
    agent: str | None = None
    turns: list[Turn] = Field(min_length=1)
    notes: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _encodable(self) -> Any:
        return _encodable(self, self.__dataclass_fields__)


class Suite(_Model):
    """A loaded suite of any format.

    Example::

        suite = evalnb.load(evalnb.examples.path("foodmart-sales"))
        suite.format, len(suite.cases)
        # ('cube-yaml', 12)
        suite.to_frame().columns[:3].tolist()
        # ['case_id', 'case_name', 'category']
    """

    name: str
    description: str | None = None
    format: FormatName
    cases: list[Case] = Field(default_factory=list)
    path: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    # What loading noticed that is no error (rows whose checks were left out, defaults a legacy file got), one
    # sentence each; not part of what defines the suite (the content hash leaves it out, as it does `path`).
    warnings: list[str] = Field(default_factory=list)

    @classmethod
    def _trusted(cls, **fields: Any) -> Suite:
        """A suite of values validated already (a loader's, from its own validated document), built without
        validating them again, as :meth:`Turn._trusted`: the suite's validator is not built for a suite nobody
        validates."""
        return cls.model_construct(**fields)

    def content_hash(self) -> str:
        """A short hash of everything that defines the suite (not where it was loaded from)."""
        from evalnb._canonical import content_hash

        return content_hash(self)

    def case(self, case_id: str) -> Case:
        """The case with this id.

        Raises:
            KeyError: when no case has that id.
        """
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(case_id)

    def to_frame(self) -> pd.DataFrame:
        """One row per case: id, name, category, runs, agent, number of turns, checks, first prompt.

        Example::

            evalnb.load(evalnb.examples.path("tasks")).to_frame()[["case_id", "runs"]]
        """
        import pandas as pd

        rows = [
            {
                "case_id": c.id,
                "case_name": c.name,
                "category": c.category,
                "runs": c.runs,
                "agent": c.agent,
                "turns": len(c.turns),
                "checks": ", ".join(dict.fromkeys(cid for t in c.turns for cid in t.check_ids())),
                "prompt": c.turns[0].prompt,
                "expected": c.turns[0].expected,
                "notes": c.notes,
            }
            for c in self.cases
        ]
        dtypes = {
            "case_id": "string",
            "case_name": "string",
            "category": "string",
            "runs": "Int64",
            "agent": "string",
            "turns": "Int64",
            "checks": "string",
            "prompt": "string",
            "expected": "string",
            "notes": "string",
        }
        frame = pd.DataFrame(rows, columns=list(dtypes))
        return frame.astype(dtypes)

    def _repr_html_(self) -> str:
        head = f"<b>{_esc(self.name)}</b> ({self.format}, {len(self.cases)} cases)"
        head += "".join(f"<p>&#9888; {_esc(w)}</p>" for w in self.warnings)
        return head + self.to_frame().to_html(index=False, escape=True)

    def __repr__(self) -> str:
        more = f", warnings={len(self.warnings)}" if self.warnings else ""
        return f"Suite(name={self.name!r}, format={self.format!r}, cases={len(self.cases)}{more})"

    # pydantic's __str__ prints every field; a suite with many cases would flood a notebook cell.
    __str__ = __repr__


def _esc(text: str) -> str:
    import html

    return html.escape(text)
