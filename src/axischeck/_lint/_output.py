"""Findings as text, JSON, SARIF 2.1.0 (code scanning) or GitHub workflow annotations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import quote

from ._rules import RULES, Finding

FORMATS = ("text", "json", "sarif", "github")

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(findings: Sequence[Finding], fmt: str, version: str) -> str:
    if fmt == "json":
        return json.dumps([f.as_dict() for f in findings], indent=2)
    if fmt == "sarif":
        return json.dumps(sarif(findings, version), indent=2)
    if fmt == "github":
        return "\n".join(github(f) for f in findings)
    return "\n".join(text(f) for f in findings)


def text(f: Finding) -> str:
    """`path:line:col: AX001 message (fix: ...)` (`path:cell 3:line:col: ...` in a notebook)."""
    fix = f" (fix: {f.fix})" if f.fix else ""
    return f"{f.where()}: {f.code} {f.message}{fix}"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(f: Finding) -> str:
    """A workflow command: `::error file=...,line=...,col=...,title=AXnnn::message`. A
    notebook's line is not a line of its file (JSON), so its annotation names the file
    only, and its message starts with the cell and line."""
    level = "warning" if RULES[f.code].level == "warning" else "error"
    message = f.message + (f" (fix: {f.fix})" if f.fix else "")
    where = f"line={f.line},col={f.column},"
    if f.cell is not None:
        where, message = "", f"cell {f.cell}, line {f.line}, column {f.column}: {message}"
    return f"::{level} file={_escape_property(f.path)},{where}title={_escape_property(f.code)}::{_escape_data(message)}"


def sarif(findings: Sequence[Finding], version: str) -> dict[str, object]:
    """A SARIF 2.1.0 log with one run: every rule described, one result per finding."""
    codes = list(RULES)
    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.title},
            "fullDescription": {"text": r.title},
            "defaultConfiguration": {"level": r.level},
        }
        for r in RULES.values()
    ]
    results = []
    for f in findings:
        result: dict[str, object] = {
            "ruleId": f.code,
            "ruleIndex": codes.index(f.code),
            "level": RULES[f.code].level,
            "message": {"text": f.message + (f" Fix: {f.fix}." if f.fix else "")},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": quote(f.path.replace("\\", "/"))},
                        "region": {"startLine": f.line, "startColumn": f.column},
                    }
                }
            ],
        }
        properties: dict[str, object] = {}
        if f.fix:
            properties["fix"] = f.fix
        if f.cell is not None:
            # A notebook's cell: SARIF's regions count lines of the file's text, which for a
            # notebook is JSON; the cell and its line are given as a logical location too.
            properties["cell"] = f.cell
            result["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": quote(f.path.replace("\\", "/"))},
                    },
                    "logicalLocations": [{"name": f"cell {f.cell}", "kind": "notebookCell"}],
                    "properties": {"cell": f.cell, "line": f.line, "column": f.column},
                }
            ]
        if properties:
            result["properties"] = properties
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "axischeck",
                        "version": version,
                        "informationUri": "https://pypi.org/project/axischeck/",
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
