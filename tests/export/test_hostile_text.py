"""Exports under hostile text: every XML-based file (JUnit XML, the Excel workbook) parses with a strict parser
whatever a case id or an answer holds, and the Markdown job summary renders user text as text, never as HTML
or Markdown syntax."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import junitparser
import pytest
import xmlschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

import evalnb
from evalnb import export
from evalnb._unicode import clean, xml_text
from evalnb.export._summary import _cell
from evalnb.suite import Case, ExactMatchCheck, RegexCheck, Suite, Turn

ROOT = Path(__file__).resolve().parents[2]
XSD = ROOT / "tests" / "support" / "junit" / "junit.xsd"

# What XML 1.0 cannot hold: U+FFFE/U+FFFF, C0 controls other than tab/LF/CR, NUL, DEL's neighbours are fine.
NOT_XML = ["\ufffe", "\uffff", "\x00", "\x01", "\x0b", "\x0c", "\x1b", "\x1f"]
HOSTILE_IDS = [f"id {ch} end" for ch in NOT_XML]
HOSTILE_ANSWER = "answer \ufffe and \uffff, bell \x07, escape \x1b[31m, tab\tand CR\r kept"

PROFILE = settings(
    max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
# Any code point, surrogates included (hypothesis leaves them out of text() unless asked).
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


def hostile_result(ids: list[str], answer: str, *, suite_name: str = "suite \uffff") -> evalnb.Result:
    cases = [
        Case(
            id=cid,
            name=cid,
            category=f"cat {cid}",
            turns=[
                Turn(
                    prompt=cid,
                    expected="nope",
                    checks=[ExactMatchCheck(), RegexCheck(on="result", pattern="x")],
                )
            ],
        )
        for cid in ids
    ]
    suite = Suite(name=suite_name, format="tasks-toml", cases=cases)
    return evalnb.run(suite, lambda prompt: answer, progress=False)


# -- the rule ------------------------------------------------------------------------------------------------


@PROFILE
@given(ANY_TEXT)
def test_xml_text_parses_strictly_and_changes_only_what_xml_cannot_hold(text: str) -> None:
    safe = xml_text(text)
    doc = f"<a v={quoteattr(safe)}>{safe.replace('&', '&amp;').replace('<', '&lt;')}</a>"
    root = ET.fromstring(doc.encode("utf-8"))  # expat: a strict XML 1.0 parser
    assert (root.text or "") == xml_lines(safe)
    assert root.get("v") == safe
    ok = all(
        ch in "\t\n\r" or 0x20 <= ord(ch) <= 0xD7FF or 0xE000 <= ord(ch) <= 0xFFFD or ord(ch) > 0xFFFF
        for ch in text
    )
    assert (safe == text) == ok


@pytest.mark.parametrize("ch", [*NOT_XML, "\ud800", "\udfff"])
def test_each_forbidden_code_point_becomes_a_visible_escape(ch: str) -> None:
    out = xml_text(f"a{ch}b")
    if 0xD800 <= ord(ch) <= 0xDFFF:
        assert out == "a\ufffdb"  # the package's rule for lone surrogates (evalnb._unicode.clean)
    else:
        assert out == "a" + (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}") + "b"
    assert xml_text("a😀\ud83d\ude00b") == clean("a😀\ud83d\ude00b") == "a😀😀b"


# -- JUnit XML -----------------------------------------------------------------------------------------------


def test_junit_with_noncharacters_parses_strictly_and_validates(tmp_path: Path) -> None:
    result = hostile_result(HOSTILE_IDS, HOSTILE_ANSWER)
    path = export.to_junit([result], tmp_path / "junit.xml")
    root = ET.parse(path).getroot()  # raised "not well-formed (invalid token)" on U+FFFE/U+FFFF
    xmlschema.XMLSchema(str(XSD)).validate(str(path))
    (suite,) = list(junitparser.JUnitXml.fromfile(str(path)))
    assert suite.name == "suite \\uffff"
    names = [c.name for c in suite]
    assert names == [xml_text(i) for i in HOSTILE_IDS]
    assert "id \\ufffe end" in names and "id \\x00 end" in names
    failures = root.findall(".//failure")
    assert len(failures) == len(HOSTILE_IDS)
    assert all("\\ufffe" in (f.text or "") or "\\ufffe" in f.get("message", "") for f in failures)


@PROFILE
@given(case_id=ANY_TEXT.filter(lambda t: t.strip() != ""), answer=ANY_TEXT)
def test_junit_of_any_text_parses_strictly(case_id: str, answer: str) -> None:
    result = hostile_result([case_id], answer, suite_name=case_id)
    root = ET.fromstring(export.junit_xml(result).encode("utf-8"))
    (tc,) = root.iter("testcase")
    assert tc.get("name") == xml_text(result.suite.cases[0].id)


# -- Excel ---------------------------------------------------------------------------------------------------


def xml_lines(text: str) -> str:
    """Text as an XML parser reads it back: every line end a line feed."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def workbook_text(path: Path) -> dict[str, list[Any]]:
    import openpyxl

    book = openpyxl.load_workbook(path)  # raised on U+FFFE/U+FFFF: the sheet XML does not parse
    return {
        sheet.title: [cell.value for row in sheet.iter_rows() for cell in row if isinstance(cell.value, str)]
        for sheet in book.worksheets
    }


def test_excel_with_noncharacters_reads_back(tmp_path: Path) -> None:
    result = hostile_result(HOSTILE_IDS, HOSTILE_ANSWER)
    path = result.to_excel(tmp_path / "card.xlsx")
    cells = workbook_text(path)
    assert set(cells) == {"summary", "categories", "cases", "scores"}
    for cid in HOSTILE_IDS:
        assert xml_text(cid) in cells["cases"]
        assert xml_text(f"cat {cid}") in cells["cases"]
    # the answer as a reader sees it: escapes where XML cannot hold a character, tab and CR kept
    assert xml_lines(xml_text(HOSTILE_ANSWER)) in [xml_lines(v) for v in cells["cases"]]


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case_id=ANY_TEXT.filter(lambda t: t.strip() != ""), answer=ANY_TEXT)
def test_excel_of_any_text_reads_back(
    case_id: str, answer: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    result = hostile_result([case_id], answer)
    path = result.to_excel(tmp_path_factory.mktemp("xlsx") / "card.xlsx")
    cells = workbook_text(path)
    assert xml_lines(xml_text(result.suite.cases[0].id)) in [xml_lines(v) for v in cells["cases"]]


# -- the Markdown summary ------------------------------------------------------------------------------------

INJECTIONS = [
    "<details><summary>open me</summary>",
    '<img src=x onerror="alert(1)">',
    "<b>bold</b>",
    "<!-- the rest is a comment",
    "<script>alert(1)</script>",
    "[click](https://evil.example) ![pixel](https://evil.example/p.png)",
    "**strong** _em_ ~~gone~~ `code` $x$",
    "# heading",
    "> quote",
    "1. listed",
    "&lt;b&gt; entity",
    "a | b \\| c",
    "<https://evil.example>",
]


class Elements(HTMLParser):
    """The elements, comments and text of rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.comments: list[str] = []
        self.text: list[str] = []
        self.strong: list[str] = []
        self._in_strong = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_strong += tag == "strong"

    def handle_endtag(self, tag: str) -> None:
        self._in_strong -= tag == "strong"

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_strong:
            self.strong.append(data)


def render(markdown: str) -> Elements:
    """Markdown rendered as GitHub does for the parts that matter here: CommonMark with raw HTML, GFM tables."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    parsed = Elements()
    parsed.feed(md.render(markdown))
    return parsed


SUMMARY_TAGS = {"h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong"}


def test_summary_renders_injected_html_and_markdown_as_text() -> None:
    result = hostile_result(INJECTIONS, "<details>the answer", suite_name="<b>suite</b> *x*")
    markdown = export.summary_markdown([result])
    page = render(markdown)
    assert set(page.tags) <= SUMMARY_TAGS, sorted(set(page.tags) - SUMMARY_TAGS)
    assert page.comments == []
    # every case is listed, its header as written (nothing folded away), and the table counts them all
    headers = "".join(page.strong).split("<b>suite</b> *x* / ")[1:]
    assert [h.strip() for h in headers] == [" ".join(i.split()) for i in INJECTIONS]
    text = "".join(page.text)
    assert "<b>suite</b> *x*" in text and f"0/{len(INJECTIONS)} cases passed" in text
    assert page.tags.count("li") >= 3 * len(INJECTIONS)  # the case and its two failed checks
    # the Markdown itself stays readable: ids without syntax are written as they are
    assert "**<b>" not in markdown and "sales_by_country" in _cell("sales_by_country")


@PROFILE
@given(ANY_TEXT.filter(lambda t: t.strip() != ""))
def test_any_text_renders_as_itself_in_a_cell_and_a_list_item(text: str) -> None:
    want = " ".join(text.split()).replace("\x00", "\ufffd")  # one line; CommonMark reads NUL as U+FFFD
    places = {
        "table cell": (
            f"| a |\n| --- |\n| {_cell(text)} |\n",
            {"table", "thead", "tbody", "tr", "th", "td"},
            "a",
        ),
        "list item": (f"- {_cell(text)}\n", {"ul", "li"}, ""),
        "case header": (f"- ❌ **x / {_cell(text)}** (failed)\n", {"ul", "li", "strong"}, "❌ x / "),
    }
    for where, (markdown, tags, before) in places.items():
        page = render(markdown)
        assert set(page.tags) == tags and page.comments == [], (where, page.tags)
        shown = "".join(page.text).replace("\n", "")
        after = " (failed)" if where == "case header" else ""
        assert shown == before + want + after, where
