"""Lint's findings, edits and hints as LSP values.

Lint counts lines from 1 and columns in characters from 0 (1 for a finding's start); LSP
counts both from 0, columns in the client's code units (UTF-16 unless it chose another
encoding). Every conversion to the client goes through the document's position codec.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace import TextDocument

from .._lint import RULES, Finding
from .._lint._edits import Edit
from .._lint._query import CallHint

SOURCE = "axischeck"


def position(doc: TextDocument, line: int, column: int, lines: Sequence[str] | None = None) -> types.Position:
    """The client's position of lint's (line from 1, character column from 0); `lines`
    are the document's, when the caller has them already (splitting costs a copy)."""
    lines = doc.lines if lines is None else lines
    if not lines:
        return types.Position(0, 0)
    line0 = min(max(line - 1, 0), len(lines) - 1)
    text = lines[line0]
    column = min(max(column, 0), len(text.rstrip("\r\n")))
    return doc.position_codec.position_to_client_units(lines, types.Position(line0, column))


def from_client(doc: TextDocument, where: types.Position) -> tuple[int, int]:
    """Lint's (line from 1, character column from 0) of a client position."""
    server = doc.position_codec.position_from_client_units(doc.lines, where)
    return server.line + 1, server.character


def span(
    doc: TextDocument,
    line: int,
    column: int,
    end_line: int | None,
    end_column: int | None,
    lines: Sequence[str] | None = None,
) -> types.Range:
    lines = doc.lines if lines is None else lines
    start = position(doc, line, column, lines)
    if end_line is None or end_column is None:
        return types.Range(start, start)
    return types.Range(start, position(doc, end_line, end_column, lines))


def diagnostic(doc: TextDocument, f: Finding, lines: Sequence[str] | None = None) -> types.Diagnostic:
    """A finding as a diagnostic: its code, its message's first line, its related places."""
    lines = doc.lines if lines is None else lines
    severity = types.DiagnosticSeverity.Warning if RULES[f.code].level == "warning" else types.DiagnosticSeverity.Error
    related = [
        types.DiagnosticRelatedInformation(
            types.Location(doc.uri, span(doc, r.line, r.column, r.end_line, r.end_column, lines)), r.message
        )
        for r in f.related
    ]
    message = (f.message.splitlines() or [""])[0]
    if f.fix:
        message += f" (fix: {f.fix})"
    return types.Diagnostic(
        range=span(doc, f.line, f.column - 1, f.end_line, f.end_column, lines),
        message=message,
        severity=severity,
        code=f.code,
        source=SOURCE,
        related_information=related or None,
    )


def text_edit(doc: TextDocument, edit: Edit) -> types.TextEdit:
    return types.TextEdit(span(doc, edit.line, edit.column, edit.end_line, edit.end_column), edit.text)


def quick_fix(doc: TextDocument, f: Finding, diag: types.Diagnostic, versioned: bool = True) -> types.CodeAction | None:
    """A finding's sure fix as a quick fix that edits the document (None without one):
    an edit of the document's version when the client takes `documentChanges`, else a
    plain `changes` entry."""
    if f.edit is None:
        return None
    edits = [text_edit(doc, f.edit)]
    if versioned:
        document = types.OptionalVersionedTextDocumentIdentifier(doc.uri, doc.version)
        workspace_edit = types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, list(edits))])
    else:
        workspace_edit = types.WorkspaceEdit(changes={doc.uri: list(edits)})
    return types.CodeAction(
        title=f"axischeck: {f.fix}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=True,
        edit=workspace_edit,
    )


def inlay_hint(doc: TextDocument, hint: CallHint) -> types.InlayHint:
    return types.InlayHint(
        position=position(doc, hint.line, hint.column),
        label=f" {hint.text}",
        kind=types.InlayHintKind.Type,
        padding_left=False,
    )


def overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def within(hints: Sequence[CallHint], lines: range) -> list[CallHint]:
    return [h for h in hints if h.line - 1 in lines]
