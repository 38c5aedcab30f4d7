"""`axischeck lsp` end to end: a real LSP client (pytest-lsp) talks to the server over stdio.

Each test starts `python -m axischeck lsp` as an editor would, opens documents and asks
what an editor asks: diagnostics, hover, quick fixes, inlay hints.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

import pytest

pygls = pytest.importorskip("pygls", reason="needs the lsp extra (pygls), which the dev extra installs")
import pytest_lsp  # noqa: E402
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

pytestmark = pytest.mark.slow

SERVER = [sys.executable, "-m", "axischeck", "lsp", "--debounce-ms=20"]

SOURCE = """\
import jax
import jax.numpy as jnp


def op(x, y, z):
    return jnp.einsum("ab,bc->ac", x, y) + z


batched = jax.vmap(op, in_axes=(0, 1, 0), out_axes=0)
out = batched(jnp.ones((16, 8, 4)), jnp.ones((4, 15, 2)), jnp.ones((16, 8, 2)))
pm = jax.pmap(op, in_axes=[0, 1, 0])
"""
BAD_CALL = SOURCE.splitlines()[9]
GOOD_CALL = BAD_CALL.replace("(4, 15, 2)", "(4, 16, 2)")

SIGNED = """\
import axischeck as ax
import jax.numpy as jnp


def op(x, y, z):
    return jnp.einsum("ab,bc->ac", x, y) + z


batched = ax.vmap(op, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
out = batched(jnp.ones((16, 8, 4)), jnp.ones((4, 16, 2)), jnp.ones((16, 8, 2)))
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=dict(os.environ)))
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"), process_id=os.getpid())
    )
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    return uri


async def _diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The next diagnostics published for `uri`."""
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 30)
        if params.uri == uri:
            return list(params.diagnostics)


def _replace_line(client: LanguageClient, uri: str, version: int, line: int, old: str, new: str) -> None:
    """Line `line` (from 0), `old`, becomes `new`: an incremental change, as editors send."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(line, 0), types.Position(line, len(old))), text=new
                )
            ],
        )
    )


@pytest.mark.asyncio
async def test_diagnostics_on_open_carry_code_message_and_related_places(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = _open(client, tmp_path / "train.py", SOURCE)
    batch, pmap_list = await _diagnostics(client, uri)
    assert (batch.code, batch.range.start.line, batch.range.start.character) == ("AX013", 9, 6)
    assert (pmap_list.code, pmap_list.range.start.line, pmap_list.range.start.character) == ("AX002", 10, 26)
    assert pmap_list.range.end.character == 35 and pmap_list.message.endswith("(fix: in_axes=(0, 1, 0))")
    assert batch.source == "axischeck" and batch.severity == types.DiagnosticSeverity.Error
    assert "the mapped axes disagree on the batch size" in batch.message and "\n" not in batch.message
    related = [(r.location.uri, r.location.range.start.character, r.message) for r in batch.related_information or []]
    assert related == [
        (uri, 14, "axis 0 of x (shape (16, 8, 4)) has size 16"),
        (uri, 36, "axis 1 of y (shape (4, 15, 2)) has size 15"),
    ]


@pytest.mark.asyncio
async def test_a_change_that_fixes_a_finding_clears_it(client: LanguageClient, tmp_path: Path) -> None:
    uri = _open(client, tmp_path / "train.py", SOURCE)
    assert [d.code for d in await _diagnostics(client, uri)] == ["AX013", "AX002"]
    _replace_line(client, uri, 2, 9, BAD_CALL, GOOD_CALL)
    assert [d.code for d in await _diagnostics(client, uri)] == ["AX002"]
    _replace_line(client, uri, 3, 9, GOOD_CALL, BAD_CALL)  # and back: it is found again
    assert [d.code for d in await _diagnostics(client, uri)] == ["AX013", "AX002"]


@pytest.mark.asyncio
async def test_the_quick_fix_edits_the_document_and_clears_the_finding(client: LanguageClient, tmp_path: Path) -> None:
    uri = _open(client, tmp_path / "train.py", SOURCE)
    found = await _diagnostics(client, uri)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=found[1].range,
            context=types.CodeActionContext(diagnostics=[found[1]]),
        )
    )
    assert actions is not None and len(actions) == 1
    (action,) = actions
    assert isinstance(action, types.CodeAction) and action.kind == types.CodeActionKind.QuickFix
    assert action.title == "axischeck: in_axes=(0, 1, 0)" and action.edit is not None
    (change,) = action.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
    (edit,) = change.edits
    assert isinstance(edit, types.TextEdit) and edit.new_text == "(0, 1, 0)"
    assert (edit.range.start.line, edit.range.start.character, edit.range.end.character) == (10, 26, 35)
    # AX013 has no fix lint is sure of: no action is offered for it.
    none = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=found[0].range,
            context=types.CodeActionContext(diagnostics=[found[0]]),
        )
    )
    assert not none
    line = SOURCE.splitlines()[10]
    fixed = line[: edit.range.start.character] + edit.new_text + line[edit.range.end.character :]
    _replace_line(client, uri, 2, 10, line, fixed)
    assert [d.code for d in await _diagnostics(client, uri)] == ["AX013"]


@pytest.mark.asyncio
async def test_hover_shows_the_shapes_lint_knows_and_unknown_elsewhere(client: LanguageClient, tmp_path: Path) -> None:
    uri = _open(client, tmp_path / "model.py", SIGNED)
    await _diagnostics(client, uri)

    async def hover(line: int, character: int) -> str | None:
        found = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, character))
        )
        if found is None:
            return None
        assert isinstance(found.contents, types.MarkupContent)
        return found.contents.value

    call = await hover(9, 8)  # on `batched` in the call
    assert call is not None and "(call)" in call
    assert "| x | (16, 8, 4) | 0 | (8, 4) | (a, b) |" in call
    assert "| y | (4, 16, 2) | 1 | (4, 2) | (b, c) |" in call
    assert "result: per-example (8, 2), batched (16, 8, 2) (out_axes=0); batch size 16" in call
    made = await hover(8, 14)  # on `ax.vmap`
    assert made is not None and "(transform)" in made and "| x | unknown | 0 | unknown | (a, b) |" in made
    assert "result: per-example unknown, batched unknown" in made
    returned = await hover(8, 2)  # on `batched =`
    assert returned is not None and "(mapped function)" in returned
    assert await hover(5, 8) is None  # inside op: no transform there


@pytest.mark.asyncio
async def test_inlay_hints_show_a_mapped_calls_predicted_shape(client: LanguageClient, tmp_path: Path) -> None:
    uri = _open(client, tmp_path / "model.py", SIGNED)
    await _diagnostics(client, uri)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(types.Position(0, 0), types.Position(10, 0)),
        )
    )
    assert hints is not None
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [(9, 79, " -> (16, 8, 2)")]


@pytest.mark.asyncio
async def test_it_survives_what_editors_send(client: LanguageClient, tmp_path: Path) -> None:
    """Half-typed code, a huge file, a file that vanishes, requests for unknown documents."""
    half = _open(client, tmp_path / "half.py", "import jax\nf = jax.vmap(lambda x: x, in_axes=(0,\n")
    assert await _diagnostics(client, half) == []
    huge = "import jax\n" + "x = 1\n" * 200_000 + "g = jax.pmap(lambda x: x, in_axes=[0])\n"
    big = _open(client, tmp_path / "huge.py", huge)
    assert [d.code for d in await _diagnostics(client, big)] == ["AX002"]
    gone = tmp_path / "gone.py"
    gone.write_text(SOURCE)
    uri = _open(client, gone, SOURCE)
    await _diagnostics(client, uri)
    gone.unlink()  # deleted on disk while open: the buffer is what is linted
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert [d.code for d in await _diagnostics(client, uri)] == ["AX013", "AX002"]
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert await _diagnostics(client, uri) == []
    never = (tmp_path / "never.py").as_uri()
    assert await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(never), types.Position(0, 0))
    ) is None  # fmt: skip
    start_of_file = types.Range(types.Position(0, 0), types.Position(1, 0))
    assert await client.text_document_inlay_hint_async(
        types.InlayHintParams(types.TextDocumentIdentifier(uri), start_of_file)
    ) is None  # fmt: skip
    # A hover past the end of the text, in a binary-looking document: answered, not fatal.
    odd = _open(client, tmp_path / "odd.py", "\x00\ufeff jax.vmap(\n")
    await _diagnostics(client, odd)
    assert await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(odd), types.Position(40, 7))
    ) is None  # fmt: skip
    # Still serving.
    assert [d.code for d in await _diagnostics(client, _open(client, tmp_path / "again.py", SOURCE))] == [
        "AX013",
        "AX002",
    ]


@pytest.mark.asyncio
async def test_columns_are_the_clients_utf16_units(client: LanguageClient, tmp_path: Path) -> None:
    """A line with an accented letter and an emoji before the finding: lint counts
    characters, the client UTF-16 code units (the emoji is two)."""
    line = 'note = "é😀"; pm = jax.pmap(op, in_axes=[0, 1, 0])'
    uri = _open(client, tmp_path / "wide.py", SOURCE.replace(SOURCE.splitlines()[10], line))
    found = [d for d in await _diagnostics(client, uri) if d.code == "AX002"]
    (diag,) = found
    start = line.index("[")
    units = len(line[:start].encode("utf-16-le")) // 2
    assert units == start + 1  # the emoji
    assert (diag.range.start.character, diag.range.end.character) == (units, units + len("[0, 1, 0]"))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext([diag]))
    )
    (action,) = actions or []
    assert isinstance(action, types.CodeAction) and action.edit is not None
    (change,) = action.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    (edit,) = change.edits
    assert (edit.range.start.character, edit.range.end.character) == (units, units + len("[0, 1, 0]"))


@pytest.mark.asyncio
async def test_the_config_of_pyproject_toml_applies(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.axischeck.lint]\ndisable = ["AX002"]\nexclude = ["generated"]\n')
    (tmp_path / "generated").mkdir()
    uri = _open(client, tmp_path / "train.py", SOURCE)
    assert [d.code for d in await _diagnostics(client, uri)] == ["AX013"]
    skipped = _open(client, tmp_path / "generated" / "train.py", SOURCE)
    assert await _diagnostics(client, skipped) == []


def test_the_server_stops_when_its_client_dies(tmp_path: Path) -> None:
    """The editor is gone (its end of stdin closes): the server exits by itself."""
    server = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}'
    server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    server.stdin.flush()
    time.sleep(0.5)
    server.stdin.close()
    try:
        server.wait(timeout=30)
    finally:
        server.kill()
        for pipe in (server.stdout, server.stderr):
            assert pipe is not None
            pipe.close()
    assert server.returncode is not None


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_until(stream: IO[bytes], wanted: str, limit: float = 60) -> dict[str, Any]:
    """The first message whose method (or id) is `wanted`."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        length = 0
        while True:
            line = stream.readline()
            assert line, "the server closed its output"
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message: dict[str, Any] = json.loads(stream.read(length))
        if message.get("method") == wanted or str(message.get("id")) == wanted:
            return message
    raise AssertionError(f"no {wanted} from the server")


def test_the_server_never_runs_the_users_code(tmp_path: Path) -> None:
    """Started in the project's folder (as editors do; `-P`, as docs/editors.md says for
    `python -m`, keeps the folder off `sys.path` from the start), with modules there named
    like the standard library's and a file whose top level would leave a mark if run or
    imported: nothing of it runs, and its findings arrive."""
    marks = tmp_path / "marks"
    marks.mkdir()
    for name in ("ast", "json", "tomllib", "typing"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n")
    user = tmp_path / "train.py"
    user.write_text(f"open({str(marks / 'train')!r}, 'w').close()\n" + SOURCE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    command = [SERVER[0], "-P", *SERVER[1:]]
    server = subprocess.Popen(command, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}))
        server.stdin.flush()
        _read_until(server.stdout, "1")
        item = {"uri": user.as_uri(), "languageId": "python", "version": 1, "text": user.read_text()}
        server.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        server.stdin.write(
            _frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}})
        )
        server.stdin.flush()
        published = _read_until(server.stdout, "textDocument/publishDiagnostics")
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["AX013", "AX002"]
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        server.stdout.close()
    assert list(marks.iterdir()) == []


def test_handled_notifications_are_let_go() -> None:
    """Each didChange is forgotten once handled (pygls 2.1 alone keeps a future per
    notification it handles with one of its own generator handlers, for ever)."""
    from axischeck._lsp._server import build

    server = build(debounce=0)
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            pass

    server.protocol.set_writer(Writer())

    def send(message: dict[str, Any]) -> None:
        parsed = json.loads(json.dumps({"jsonrpc": "2.0", **message}), object_hook=server.protocol.structure_message)
        server.protocol.handle_message(parsed)

    async def session() -> None:
        send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
        send({"method": "initialized", "params": {}})
        item = {"uri": "file:///tmp/edited.py", "languageId": "python", "version": 0, "text": SOURCE}
        send({"method": "textDocument/didOpen", "params": {"textDocument": item}})
        for version in range(1, 201):
            old, new = (BAD_CALL, GOOD_CALL) if version % 2 else (GOOD_CALL, BAD_CALL)
            change = {"range": {"start": {"line": 9, "character": 0}, "end": {"line": 9, "character": len(old)}}}
            send(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": item["uri"], "version": version},
                        "contentChanges": [{**change, "text": new}],
                    },
                }
            )
        await asyncio.sleep(0)

    asyncio.run(session())
    published = [w for w in written if b"publishDiagnostics" in w]
    assert len(published) == 201  # open, then every change, linted at once (no pause)
    assert server.protocol._request_futures == {}


def test_a_clear_message_without_pygls(tmp_path: Path) -> None:
    """Without the extra, the command says what to install (and exits 2)."""
    blocker = tmp_path / "pygls.py"
    blocker.write_text("raise ImportError('pygls is not installed (blocked by the test)')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", "import sys; from axischeck._lsp import main; sys.exit(main())"],
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert "axischeck lsp needs pygls" in done.stderr and "pip install 'axischeck[lsp]'" in done.stderr
