"""The language server: documents in, diagnostics, hovers, quick fixes and inlay hints out.

Every answer comes from lint's query API (`axischeck._lint._query`) on the document's
text as the editor holds it. Nothing the editor sends may stop the server: a handler that
fails answers nothing (and logs why), half-typed code is what lint already reads (a file
that does not parse has no findings until it does), and a document that is closed, or was
never opened, has no answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from .._lint import Finding
from .._lint._config import Config
from .._lint._query import call_hints, facts_at, findings_for, settings_for
from ._convert import diagnostic, from_client, inlay_hint, overlaps, quick_fix, within

log = logging.getLogger("axischeck.lsp")

DEBOUNCE = 0.05
"""Seconds of quiet that end a burst of changes. A change after a quiet spell is linted at
once (its diagnostics come as soon as lint is done); a change that follows another, or a
lint, within this time waits until the document has been unchanged this long, so a burst
(fast typing, a paste, a rename, an editor's several changes per keystroke) is linted
once, at its end."""

LARGEST = 5_000_000
"""Characters above which a document is not linted (a generated file, a data dump opened
by mistake): the server logs why, publishes no findings and stays responsive."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Linted:
    """The findings of one version of a document, with its diagnostics in the same order."""

    version: int | None
    findings: tuple[Finding, ...]
    diagnostics: tuple[types.Diagnostic, ...]


def path_of(uri: str) -> str:
    """The file path a document's URI names (an `untitled:` buffer gets a name of its own)."""
    if urlparse(uri).scheme == "file":
        path = to_fs_path(uri)
        if path is not None:
            return path
    return f"{urlparse(uri).scheme or 'buffer'}-{abs(hash(uri))}.py"


def is_python(doc: TextDocument) -> bool:
    return doc.language_id == "python" or Path(path_of(doc.uri)).suffix in (".py", ".pyi")


class Protocol(LanguageServerProtocol):
    """pygls's protocol, letting go of each notification once it is handled.

    pygls 2.1 handles `didOpen`, `didChange`, `didSave` and `didClose` with generator
    handlers of its own, and files the future of each in the table of pending requests,
    under a key made for it, which nothing removes: about 2 KB a keystroke, for as long as
    the editor runs (10 MB over 5,000 edits of `benchmarks/bench_lsp.py`). This one takes
    the future out when the notification is done."""

    def _check_handler_result(self, future: Future[Any]) -> None:
        super()._check_handler_result(future)
        done = [key for key, pending in self._request_futures.items() if pending is future]
        for key in done:
            self._request_futures.pop(key, None)


class AxisCheckServer(LanguageServer):
    """One editor's session: the documents' latest findings and pending lint runs."""

    def __init__(self, debounce: float = DEBOUNCE) -> None:
        super().__init__("axischeck", _version(), protocol_cls=Protocol)
        self.debounce = debounce
        self.linted: dict[str, Linted] = {}  # one entry per open document, replaced at each lint
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.last: dict[str, float] = {}  # when each document last changed or was linted (monotonic)

    # ------------------------------------------------------------- documents

    def config(self, path: str) -> Config:
        """`[tool.axischeck.lint]` for `path`, read at each lint (an edit of pyproject.toml
        counts from the next change)."""
        return settings_for(path)

    def document(self, uri: str) -> TextDocument | None:
        """The open document at `uri`, or None (closed, never opened, or not Python)."""
        if uri not in self.workspace.text_documents:
            return None
        doc = self.workspace.get_text_document(uri)
        return doc if is_python(doc) else None

    def lint_now(self, uri: str) -> None:
        """Lint the document as it is now and publish its diagnostics."""
        self.pending.pop(uri, None)
        doc = self.document(uri)
        if doc is None:
            return
        source = doc.source
        findings: list[Finding] = []
        if len(source) > LARGEST:
            self.window_log_message(
                types.LogMessageParams(types.MessageType.Warning, f"axischeck: {uri} is too large to lint")
            )
        else:
            path = path_of(uri)
            findings = _guarded(lambda: findings_for(path, source, self.config(path)), [], f"lint {uri}")
        lines = doc.lines
        diagnostics = tuple(diagnostic(doc, f, lines) for f in findings)
        self.linted[uri] = Linted(doc.version, tuple(findings), diagnostics)
        self.last[uri] = time.monotonic()
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=list(diagnostics), version=doc.version)
        )

    def changed(self, uri: str) -> None:
        """A change: lint now after a quiet spell, else when the burst it belongs to ends."""
        now = time.monotonic()
        waiting = self.pending.pop(uri, None)
        if waiting is None and now - self.last.get(uri, float("-inf")) >= self.debounce:
            self.lint_now(uri)
            return
        if waiting is not None:
            waiting.cancel()
        self.last[uri] = now
        loop = asyncio.get_running_loop()
        self.pending[uri] = loop.call_later(self.debounce, lambda: _guarded(lambda: self.lint_now(uri), None, "lint"))

    def forget(self, uri: str) -> None:
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.linted.pop(uri, None)
        self.last.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def current(self, uri: str) -> tuple[TextDocument, Linted] | None:
        """The document and its findings for its current version (linted now if stale)."""
        doc = self.document(uri)
        if doc is None:
            return None
        linted = self.linted.get(uri)
        if linted is None or linted.version != doc.version:
            self.lint_now(uri)
            linted = self.linted.get(uri)
        return (doc, linted) if linted is not None else None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("axischeck")
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        return "0+unknown"


def _guarded(run: Callable[[], T], fallback: T, what: str) -> T:
    """`run()`, or `fallback` when it fails: one bad document or request never stops the server."""
    try:
        return run()
    except Exception:
        log.exception("axischeck lsp: %s failed", what)
        return fallback


def build(debounce: float = DEBOUNCE) -> AxisCheckServer:
    """The server with its features registered."""
    server = AxisCheckServer(debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AxisCheckServer, params: types.DidOpenTextDocumentParams) -> None:
        _guarded(lambda: ls.lint_now(params.text_document.uri), None, "open")

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AxisCheckServer, params: types.DidChangeTextDocumentParams) -> None:
        _guarded(lambda: ls.changed(params.text_document.uri), None, "change")

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AxisCheckServer, params: types.DidSaveTextDocumentParams) -> None:
        _guarded(lambda: ls.lint_now(params.text_document.uri), None, "save")

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AxisCheckServer, params: types.DidCloseTextDocumentParams) -> None:
        _guarded(lambda: ls.forget(params.text_document.uri), None, "close")

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AxisCheckServer, params: types.HoverParams) -> types.Hover | None:
        def answer() -> types.Hover | None:
            doc = ls.document(params.text_document.uri)
            if doc is None or len(doc.source) > LARGEST:
                return None
            line, column = from_client(doc, params.position)
            facts = facts_at(path_of(doc.uri), doc.source, line, column)
            if facts is None:
                return None
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, facts.markdown()))

        return _guarded(answer, None, "hover")

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: AxisCheckServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        def answer() -> list[types.CodeAction] | None:
            found = ls.current(params.text_document.uri)
            if found is None:
                return None
            doc, linted = found
            workspace = ls.client_capabilities.workspace
            edits = workspace.workspace_edit if workspace is not None else None
            versioned = bool(edits is not None and edits.document_changes)
            actions = []
            for f, diag in zip(linted.findings, linted.diagnostics, strict=True):
                if overlaps(diag.range, params.range):
                    action = quick_fix(doc, f, diag, versioned)
                    if action is not None:
                        actions.append(action)
            return actions

        return _guarded(answer, None, "code action")

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    def inlay_hints(ls: AxisCheckServer, params: types.InlayHintParams) -> list[types.InlayHint] | None:
        def answer() -> list[types.InlayHint] | None:
            doc = ls.document(params.text_document.uri)
            if doc is None or len(doc.source) > LARGEST:
                return None
            lines = range(params.range.start.line, params.range.end.line + 1)
            hints = within(call_hints(path_of(doc.uri), doc.source), lines)
            return [inlay_hint(doc, h) for h in hints]

        return _guarded(answer, None, "inlay hints")

    return server


def serve(argv: Sequence[str] = ()) -> int:
    """Serve over stdio until the client exits (or its end of the pipe closes)."""
    debounce = DEBOUNCE
    for arg in argv:
        if arg.startswith("--debounce-ms="):
            debounce = int(arg.split("=", 1)[1]) / 1000
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    start = time.perf_counter()
    server = build(debounce)
    log.info("axischeck lsp: ready in %.0f ms", 1000 * (time.perf_counter() - start))
    server.start_io()
    return 0
