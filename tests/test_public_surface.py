"""The public surface, pinned: which modules are public, what each exports, and where its objects say they live.

A name that appears in an ``__all__`` is a promise to users (docs/ and the README document it); a module
without a leading underscore is one too. Adding either is a decision, made here in the same change: an
accidental export, or an implementation module left public, fails. Tests may import private modules.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from tests.support.imports import module_files

PUBLIC_MODULES = [
    "evalnb",
    "evalnb.__main__",
    "evalnb.agents",
    "evalnb.browser",
    "evalnb.chat",
    "evalnb.checks",
    "evalnb.checks.scales",
    "evalnb.cli",
    "evalnb.comparison",
    "evalnb.config",
    "evalnb.data",
    "evalnb.demo",
    "evalnb.demo.analytics",
    "evalnb.demo.kb",
    "evalnb.demo.task_agent",
    "evalnb.errors",
    "evalnb.examples",
    "evalnb.examples.__main__",
    "evalnb.examples.foodmart",
    "evalnb.examples.foodmart.build",
    "evalnb.executors",
    "evalnb.export",
    "evalnb.formats",
    "evalnb.formats.promptfoo",
    "evalnb.judges",
    "evalnb.judges.embedding",
    "evalnb.judges.facts",
    "evalnb.judges.labels",
    "evalnb.judges.offline",
    "evalnb.judges.offline.fitting",
    "evalnb.plots",
    "evalnb.preference",
    "evalnb.results",
    "evalnb.results.outputs",
    "evalnb.running",
    "evalnb.store",
    "evalnb.suite",
    "evalnb.typing",
]
SURFACE = {
    "evalnb": [
        "Budget",
        "Case",
        "ConfigError",
        "EvalnbError",
        "Request",
        "Response",
        "Result",
        "RunOptions",
        "Store",
        "Suite",
        "SuiteError",
        "ToolCall",
        "TransientError",
        "Turn",
        "__version__",
        "agents",
        "checks",
        "compare",
        "discover",
        "errors",
        "examples",
        "executors",
        "from_frame",
        "judges",
        "load",
        "pairwise",
        "plots",
        "power",
        "rank",
        "read_inspect_log",
        "read_results",
        "rescore",
        "run",
        "run_async",
        "upgrade",
    ],
    "evalnb.agents": [
        "Agent",
        "BuildContext",
        "Command",
        "HTTP",
        "OpenAIChat",
        "Record",
        "Replay",
        "Request",
        "Response",
        "ToolCall",
        "register_agent_type",
        "to_response",
    ],
    "evalnb.browser": ["explore_comparison", "explore_pairwise", "explore_result"],
    "evalnb.chat": ["ChatClient", "ChatError", "ChatReply"],
    "evalnb.checks": [
        "CheckContext",
        "Score",
        "check",
        "citation_count",
        "compare_rows",
        "exact_match",
        "get",
        "known",
        "partial_match_f1",
        "register",
        "unregister",
    ],
    "evalnb.checks.scales": ["Scale", "declare", "higher_is_better", "scale_of"],
    "evalnb.cli": ["app", "main"],
    "evalnb.comparison": ["Comparison", "Comparisons", "PowerPlan", "Sequential", "compare", "gate", "power"],
    "evalnb.config": ["Config", "find_config", "load_config", "named_agent", "resolve_agent"],
    "evalnb.data": ["connect"],
    "evalnb.demo": ["FoodMartAgent", "foodmart_db"],
    "evalnb.demo.analytics": ["FoodMartAgent", "analyst"],
    "evalnb.demo.kb": ["KBAssistant", "Section", "handbook_path"],
    "evalnb.demo.task_agent": ["CAPITALS", "command", "main", "solve"],
    "evalnb.errors": [
        "AgentCode",
        "AgentError",
        "ChatCode",
        "ChatError",
        "CheckCode",
        "Code",
        "ConfigCode",
        "ConfigError",
        "CostWarning",
        "EvalnbCode",
        "EvalnbError",
        "FailuresError",
        "JudgeCode",
        "JudgeError",
        "ReferenceQueryError",
        "RegexTimeout",
        "RunCode",
        "RunError",
        "StoreCode",
        "StoreError",
        "SuiteCode",
        "SuiteError",
        "SuiteWarning",
        "TransientError",
    ],
    "evalnb.examples": ["CACHE_ENV", "cache_dir", "foodmart_db", "load", "names", "path", "resource"],
    "evalnb.executors": ["Executor", "Local", "Ray", "as_executor", "register_executor"],
    "evalnb.export": [
        "DOCUMENT_SCHEMA_VERSION",
        "gate_markdown",
        "junit_xml",
        "read_inspect_log",
        "read_results",
        "store_to_mlflow",
        "store_to_parquet",
        "summary_markdown",
        "to_csv",
        "to_document",
        "to_excel",
        "to_html",
        "to_junit",
        "to_mlflow",
        "to_parquet",
        "to_summary",
        "write",
    ],
    "evalnb.formats": [
        "Format",
        "Sniff",
        "Text",
        "discover",
        "for_path",
        "from_frame",
        "get",
        "json_schema",
        "load",
        "load_upgrading",
        "names",
        "register",
        "suffix_files",
        "suffixes",
        "unregister",
        "upgrade",
        "write_starter",
    ],
    "evalnb.formats.promptfoo": [
        "MAPPED",
        "PROMPTFOO_TYPES",
        "is_config",
        "read_asserts",
        "schema",
    ],
    "evalnb.judges": [
        "CallableJudge",
        "EmbeddingJudge",
        "HeuristicJudge",
        "Judge",
        "JudgeCache",
        "JudgeOptions",
        "JudgeReply",
        "OpenAIJudge",
        "agreement",
        "as_judge",
        "evaluate",
        "register_judge_string",
    ],
    "evalnb.judges.embedding": ["EmbeddingJudge", "Reading", "cosines", "read"],
    "evalnb.judges.facts": ["Facts", "Quantity", "compare"],
    "evalnb.judges.labels": [
        "compare_judges",
        "judge_pairs",
        "kappa_gains",
        "labels_frame",
        "markdown_table",
        "measure",
        "read_pairs",
    ],
    "evalnb.judges.offline": [
        "Calibration",
        "EmbeddingJudge",
        "HeuristicJudge",
        "Reading",
        "compare_judges",
        "cosines",
        "judge_pairs",
        "kappa_gains",
        "labels_frame",
        "load_calibration",
        "markdown_table",
        "measure",
        "read",
        "read_pairs",
    ],
    "evalnb.judges.offline.fitting": ["LABELS", "fit", "main"],
    "evalnb.plots": ["agreement", "categories", "compare", "ranking", "scorecard", "tradeoff", "trend"],
    "evalnb.preference": [
        "Pairwise",
        "PairwiseOptions",
        "Ranking",
        "pairwise",
        "pairwise_async",
        "rank",
        "rank_async",
    ],
    "evalnb.results": ["Result", "RunMeta"],
    "evalnb.results.outputs": ["register_writer", "suffixes", "writer", "writer_for"],
    "evalnb.running": [
        "Budget",
        "CaseRunRecord",
        "Prior",
        "Recorder",
        "RunInfo",
        "RunOptions",
        "StopRule",
        "TurnRecord",
        "rescore",
        "rescore_async",
        "run",
        "run_async",
    ],
    "evalnb.store": ["Store"],
    "evalnb.suite": [
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
    ],
    "evalnb.typing": ["AgentLike", "DataLike", "JudgeLike", "StoreLike"],
}


def _public(module: str) -> bool:
    return not any(
        p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in module.split(".")
    )


def test_every_module_not_named_private_is_one_of_the_public_modules() -> None:
    public = sorted(m for m in module_files() if _public(m))
    assert public == PUBLIC_MODULES, (
        "a module without a leading underscore is public: name implementation modules _name.py, or add the "
        "module to PUBLIC_MODULES (and document it)"
    )


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_each_public_module_exports_exactly_its_pinned_names(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == SURFACE[module]
    for name in mod.__all__:
        assert getattr(mod, name) is not None, f"{module}.{name} does not resolve"


def test_every_public_module_but_the_scripts_has_an_all() -> None:
    scripts = {
        "evalnb.__main__",
        "evalnb.examples.__main__",
        "evalnb.examples.foodmart",
        "evalnb.examples.foodmart.build",
    }
    assert set(PUBLIC_MODULES) - set(SURFACE) == scripts


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_exported_objects_name_their_public_home(module: str) -> None:
    mod = importlib.import_module(module)
    for name in mod.__all__:
        obj = getattr(mod, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        home = obj.__module__
        if not home.startswith("evalnb"):
            continue  # a standard library or third-party object re-exported (none today)
        assert _public(home), f"{module}.{name} says it lives in the private {home}"
        # the home it names holds it, under the same name: pickles and docs links resolve
        assert getattr(importlib.import_module(home), obj.__name__) is obj, f"{home}.{obj.__name__}"


def test_a_repr_shows_the_public_path() -> None:
    import evalnb

    assert repr(evalnb.Result) == "<class 'evalnb.results.Result'>"
    assert evalnb.judges.OpenAIJudge.__module__ == "evalnb.judges"
    assert evalnb.agents.Command.__module__ == "evalnb.agents"  # lazily exported, the same home
    assert evalnb.checks.compare_rows.__module__ == "evalnb.checks"
    assert evalnb.judges.labels.compare_judges.__module__ == "evalnb.judges.offline"
    assert evalnb.judges.embedding.cosines is evalnb.judges.offline.cosines
