"""Comments, docstrings and strings in evalnb/ cite the project's own docs (``docs/cube-yaml.md, row comparison:
...``), never a document outside the repository; every page they cite exists, and so does the section named
after it (``docs/X.md, section``, matched against the page's headings)."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from tests.support.imports import PACKAGE

ROOT = PACKAGE.parent

#: Phrases that point at documents outside the repository (the format rules live in docs/).
OUTSIDE = re.compile(
    r"\b(?:cube|dataset|tasks?)(?: and tasks?)? specs?\b|\bapi contract\b|\bthe issue\b|\bspec rule\b", re.I
)
#: The upstream JSON schema of the dataset format is cited through the page that says what evalnb supports of it.
SCHEMA = re.compile(r"\b(?:published|dataset) (?:dataset )?schema\b", re.I)
CITATION = re.compile(r"\b(docs/[\w.-]+\.md|README\.md)(?:,\s+([^:;()\n]+?))?(?=[:;()]|\.\s|\.$|$)", re.M)


def _texts(path: Path) -> list[tuple[int, str]]:
    """The comments (consecutive comment lines joined) and string literals of one module, with their line."""
    out: list[tuple[int, str]] = []
    block: list[str] = []
    start = last = 0
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type == tokenize.COMMENT and not tok.line.lstrip().startswith("#"):
            out.append((tok.start[0], tok.string.lstrip("#: ")))  # a comment after code stands alone
        elif tok.type == tokenize.COMMENT:
            if block and tok.start[0] != last + 1:
                out.append((start, " ".join(block)))
                block = []
            if not block:
                start = tok.start[0]
            block.append(re.sub(r"^#:?\s?", "", tok.string))
            last = tok.start[0]
        elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            out.append((tok.start[0], tok.string))
    if block:
        out.append((start, " ".join(block)))
    return [(line, re.sub(r"\s+", " ", text)) for line, text in out]


def _all_texts() -> list[tuple[str, int, str]]:
    return [
        (str(path.relative_to(ROOT)), line, text)
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, text in _texts(path)
    ]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[`\"']", "", text)).strip().lower()


def _headings(page: Path) -> list[str]:
    lines = page.read_text(encoding="utf-8").splitlines()
    fenced = False
    found = []
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"^#{1,4} ", line):
            found.append(_norm(line.lstrip("#")))
    return found


def _section_exists(headings: list[str], section: str) -> bool:
    cited = _norm(section)
    return any(h.startswith(cited) or cited.startswith(h.split(":")[0].strip()) for h in headings)


def test_nothing_cites_a_document_outside_the_repository() -> None:
    found = [
        f"{where}:{line}: {m.group(0)!r}"
        for where, line, text in _all_texts()
        for m in OUTSIDE.finditer(text)
    ]
    assert not found, "cite the docs page instead (docs/X.md, section: rule):\n" + "\n".join(found)


def test_the_published_schema_is_cited_through_its_docs_page() -> None:
    found = [
        f"{where}:{line}: {text[:100]!r}"
        for where, line, text in _all_texts()
        if SCHEMA.search(text) and "docs/dataset-json.md" not in text
    ]
    assert not found, "name docs/dataset-json.md beside the published schema:\n" + "\n".join(found)


def test_every_cited_page_and_section_exists() -> None:
    pages: dict[str, list[str]] = {}
    missing = []
    cited = 0
    for where, line, text in _all_texts():
        for m in CITATION.finditer(text):
            page, section = m.group(1), m.group(2)
            path = ROOT / page
            if not path.is_file():
                missing.append(f"{where}:{line}: {page} does not exist")
                continue
            cited += 1
            if section is None or not section.strip():
                continue
            headings = pages.setdefault(page, _headings(path))
            if not _section_exists(headings, section):
                missing.append(f"{where}:{line}: {page} has no section {section.strip()!r}")
    assert cited > 100  # the check reads the citations (the package cites its docs in about 200 places)
    assert not missing, "\n".join(missing)


def test_the_section_match_is_strict() -> None:
    headings = _headings(ROOT / "docs/cube-yaml.md")
    assert _section_exists(headings, "row comparison")
    assert _section_exists(headings, "numbers and text in rows")
    assert not _section_exists(headings, "rows")
    assert not _section_exists(headings, "the cube spec")
    assert OUTSIDE.search("(cube spec, Row comparison)") and OUTSIDE.search("tasks spec rule 4")
    assert OUTSIDE.search("dataset and task specs") and OUTSIDE.search("the API contract")
    assert not OUTSIDE.search("a check spec from the suite")
