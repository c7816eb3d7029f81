"""Small HTML pieces: escaping, status labels, tags, Gherkin. Every piece of text goes through ``esc``.

Report messages, scenario names and table cells are data from implementations and feature files; none
of it may become markup. So text is escaped first and markup is added only around escaped text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from ..boundary._visible import visible_text
from ..reporting import RequirementRow, ScenarioResult, requirement_verdict_text
from ..spec._pinned import Requirement
from ._gherkin import ScenarioDoc, StepDoc
from ._pages import counts_text, status_text, stopped_here, verdict_class

__all__ = [
    "esc",
    "gherkin_block",
    "inline",
    "prose",
    "requirement_cell",
    "spec_block",
    "status_pill",
    "table",
    "tags",
]

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_PLACEHOLDER = re.compile(r"&lt;([^&<>]+?)&gt;")  # an escaped Scenario Outline <param>


def esc(text: object) -> str:
    """``text`` as HTML text or attribute value: nothing in it can open a tag or end an attribute."""
    return html.escape(visible_text(str(text)), quote=True)  # an implementation's ESC is shown, not sent


def inline(text: str) -> str:
    """The spec's inline Markdown (`code`, **bold**) as HTML, the text itself escaped first."""
    escaped = esc(text)
    escaped = _CODE.sub(r"<code>\1</code>", escaped)
    return _BOLD.sub(r"<strong>\1</strong>", escaped)


def prose(text: str) -> str:
    """A feature description: blank lines separate paragraphs; the file's line wrapping is dropped."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "".join(f'<p class="prose">{inline(p)}</p>' for p in paragraphs)


def status_pill(result: ScenarioResult | None, requirement_id: str | None = None) -> str:
    """A scenario's status; on ``requirement_id``'s page, another requirement's failure reads stopped."""
    status = result.status if result else "not-run"
    if stopped_here(result, requirement_id):
        status = "blocked"
    return f'<span class="status s-{esc(status)}">{esc(status_text(result, requirement_id))}</span>'


def requirement_cell(row: RequirementRow | None) -> str:
    """A matrix cell: the verdict, and the counts under it."""
    if row is None:
        return '<span class="status s-not-run">not run</span>'
    # The verdict with how much of it was judged: "CONFORMS (3 of 8 judged)", as the table says it.
    text = requirement_verdict_text(row)
    pill = f'<span class="status s-{verdict_class(row.verdict)}">{esc(text)}</span>'
    return f'{pill}<span class="sub">{esc(counts_text(row.summary, row.blocked_by))}</span>'


def tags(values: Iterable[str]) -> str:
    out = []
    for tag in values:
        kind = "spec" if tag.startswith("spec:") else "derived" if tag == "derived" else ""
        out.append(f'<span class="tag {kind}">@{esc(tag)}</span>')
    return "".join(out)


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, escaped: bool = False) -> str:
    """An HTML table; cells are escaped unless ``escaped`` says they already are markup."""
    cell = (lambda c: c) if escaped else esc
    head = "".join(f"<th>{cell(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _step_text(text: str) -> str:
    return _PLACEHOLDER.sub(r"<var>&lt;\1&gt;</var>", esc(text))


def _data_table(rows: Sequence[Sequence[str]]) -> str:
    """A step's data table. Gherkin does not say whether its first row is a header (in a key-value
    table it is not), so every row is shown alike, as in the file; outline parameters are marked."""
    body = "".join("<tr>" + "".join(f"<td>{_step_text(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tbody>{body}</tbody></table>"


def _steps(steps: Sequence[StepDoc]) -> str:
    out = []
    for step in steps:
        keyword = f'<span class="kw">{esc(step.keyword)}</span>'
        out.append(f'<div class="line step">{keyword} {_step_text(step.text)}</div>')
        if step.table:
            out.append(_data_table(step.table))
        if step.docstring is not None:
            out.append(f"<pre>{esc(step.docstring)}</pre>")
    return "".join(out)


def gherkin_block(scenario: ScenarioDoc) -> str:
    """The scenario as readable Gherkin: keywords bold, tables as tables, outline parameters marked."""
    parts = [f'<div class="line"><span class="kw">{esc(scenario.keyword)}:</span> {esc(scenario.name)}</div>']
    if scenario.description:
        parts.append(f'<div class="note">{esc(scenario.description)}</div>')
    parts.append(_steps(scenario.steps))
    for examples in scenario.examples:
        title = f": {esc(examples.name)}" if examples.name else ":"
        parts.append(f'<div class="line step"><span class="kw">Examples</span>{title}</div>')
        parts.append(table(examples.header, examples.rows))
    return f'<div class="gherkin">{"".join(parts)}</div>'


def background_block(steps: Sequence[StepDoc]) -> str:
    head = '<div class="line"><span class="kw">Background:</span></div>'
    return f'<div class="gherkin">{head}{_steps(steps)}</div>'


def spec_block(requirement: Requirement, checked_by: dict[str, list[tuple[str, str]]]) -> str:
    """The requirement as the pinned spec states it; each spec scenario links its transcriptions.

    ``checked_by`` maps a spec scenario hash to (scenario id, Gherkin name) pairs.
    """
    parts = [f"<p>{inline(requirement.text)}</p>"] if requirement.text else []
    for scenario in requirement.scenarios:
        links = ", ".join(
            f'<a href="#{esc(sid)}">{esc(name)}</a>' for sid, name in checked_by.get(scenario.hash, [])
        )
        checked = f"checked by {links}" if links else "not transcribed into Gherkin"
        parts.append(
            f"<h3>Scenario: {esc(scenario.name)} "
            f'<span class="tag spec">@spec:{esc(scenario.hash)}</span></h3>'
        )
        items = []
        for line in scenario.lines:
            keyword, _, rest = line.partition(" ")
            items.append(f"<li><strong>{esc(keyword)}</strong> {inline(rest)}</li>")
        parts.append(f'<ul>{"".join(items)}</ul><div class="sub note">{checked}</div>')
    return f'<div class="spec-text">{"".join(parts)}</div>'
