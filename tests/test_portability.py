"""Machine independence of the package itself: text files are read and written as UTF-8 whatever the locale.

Configs, captions and docs carry non-ASCII text (λ, ε, ·, —); ``open``/``read_text``/``write_text`` without an
``encoding`` use the locale's encoding, which is cp1252 on Windows and ASCII or Latin-1 under some POSIX locales: a
config that loads on one machine would fail, or a report be written differently, on another.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dpbench"
TEXT_CALLS = {"open", "read_text", "write_text", "NamedTemporaryFile", "fdopen", "TextIOWrapper"}


def _name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _binary_mode(call: ast.Call, name: str) -> bool:
    mode = next((k.value for k in call.keywords if k.arg == "mode"), None)
    position = {"open": 1, "fdopen": 1, "NamedTemporaryFile": 0}.get(name)
    if mode is None and position is not None and len(call.args) > position:
        mode = call.args[position]
    if mode is None:
        return name == "NamedTemporaryFile"  # its default mode is "w+b"
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "b" in mode.value


def text_io_without_encoding(source: str) -> list[int]:
    """Line numbers of text-mode file calls that do not name an encoding."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node)
        if name not in TEXT_CALLS or any(k.arg == "encoding" for k in node.keywords):
            continue
        if name in {"read_text", "write_text"} and not isinstance(node.func, ast.Attribute):
            continue  # a project function of that name (e.g. an atomic writer), not pathlib's method
        if (
            name == "open"
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "open"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in {"os", "gzip_module"}
        ):
            continue  # os.open returns a descriptor (bytes)
        if name == "TextIOWrapper" or not _binary_mode(node, name):
            lines.append(node.lineno)
    return lines


def test_the_checker_sees_a_missing_encoding_and_accepts_binary_and_explicit_ones():
    assert text_io_without_encoding("open('a')\nPath('a').read_text()\np.write_text(s)\n") == [1, 2, 3]
    assert text_io_without_encoding("open('a', 'rb')\np.read_text(encoding='utf-8')\nos.open('a', 0)\n") == []
    assert text_io_without_encoding("write_text(path, text)\n") == []  # an atomic writer of the project's own


def test_every_text_file_the_package_opens_names_its_encoding():
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in text_io_without_encoding(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "text I/O without encoding=… (locale-dependent): " + ", ".join(offenders)
