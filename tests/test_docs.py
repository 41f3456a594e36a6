"""The README and docs/ as a reader meets them: every relative link resolves, the README stays one screenful of
orientation (≤ 220 lines) and the numbers it states are current."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
#: the pages a newcomer is sent to from the README's first screens
NEWCOMER_PAGES = ("ihm", "performance", "leaderboard", "configs", "library", "byo_tutorial")
FENCE = re.compile(r"^```.*?^```", flags=re.S | re.M)


def relative_links(page: Path) -> list[str]:
    """Targets of the page's Markdown links and images outside code blocks, without URLs and in-page anchors."""
    text = FENCE.sub("", page.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code is not a link
    targets = [m.group(1) for m in LINK.finditer(text)]
    return [t for t in targets if not re.match(r"^(?:[a-z]+:|#)", t)]


def test_every_relative_link_in_the_readme_and_docs_resolves():
    broken = []
    for page in PAGES:
        for target in relative_links(page):
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert broken == []
    assert sum(len(relative_links(page)) for page in PAGES) > 20  # the check looked at something


def test_readme_is_at_most_220_lines():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 220


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)


def test_the_readmes_library_example_prints_what_it_says():
    """The README's estimator example runs and its comment states the numbers it prints (to the digits shown)."""
    import pytest

    pytest.importorskip("sklearn")
    (code,) = [block for block in python_blocks(ROOT / "README.md") if "DPLinearRegression" in block]
    namespace: dict = {}
    exec(compile(code.replace("print(", "_shown = ("), "README.md", "exec"), namespace)  # noqa: S102
    model, X, y = namespace["model"], namespace["X"], namespace["y"]
    comment = code.split("print(")[1].split("#", 1)[1]
    numbers = [float(v.replace("−", "-")) for v in re.findall(r"[−-]?\d+\.\d+", comment)]
    coef, intercept, r2, ols = numbers[:3], numbers[3], numbers[4], numbers[5]
    assert [round(float(c), 2) for c in model.coef_] == coef
    assert round(model.intercept_, 2) == intercept and round(model.score(X, y), 3) == r2
    from sklearn.linear_model import LinearRegression

    assert round(LinearRegression().fit(X, y).score(X, y), 3) == ols


def test_the_readmes_mechanism_is_the_tutorials_tested_one():
    (code,) = [block for block in python_blocks(ROOT / "README.md") if "register_mechanism" in block]
    assert code.strip() in (ROOT / "docs" / "byo_tutorial.md").read_text()  # run by tests/test_tutorial.py


def test_the_readmes_wall_times_are_the_measured_ones():
    """Every wall time in the README's paper table and the reproduce-all total appear in docs/performance.md."""
    readme = (ROOT / "README.md").read_text()
    performance = (ROOT / "docs" / "performance.md").read_text()
    table = readme[readme.index("## What the five papers reproduce") : readme.index("## The privacy audit")]
    times = re.findall(r"\| (\d+\.\d) min \|", table)
    assert len(times) == 5
    for minutes in [*times, re.search(r"(\d+\.\d) min measured", readme).group(1)]:
        assert f"**{minutes} min**" in performance, minutes


def test_every_repository_path_the_readme_and_docs_name_exists():
    """`dpbench/…`, `tests/…`, `configs/…` paths in code spans: a module that moved leaves no old path behind."""
    named = re.compile(r"`((?:dpbench|tests|configs|mk|docs|datasets)/[A-Za-z0-9_./-]+)`")
    pages = [ROOT / "README.md", *(ROOT / "docs" / f"{name}.md" for name in NEWCOMER_PAGES)]
    missing = [
        f"{page.relative_to(ROOT)}: {path}"
        for page in pages
        for path in named.findall(page.read_text())
        if not (ROOT / path.rstrip("/.")).exists()
    ]
    assert missing == []


# ----------------------------------------------------------------------------------------------------------------
# docs/architecture.md: every path it names, and every file its tree lists under a folder, exists

ARCHITECTURE = ROOT / "docs" / "architecture.md"
TOP = ("dpbench", "tests", "configs", "docs", "datasets", "mk", "scripts")
FULL_PATH = re.compile(rf"(?<![\w/.])((?:{'|'.join(TOP)})/[A-Za-z0-9_./-]*)")
#: a name listed under a folder of the tree: file.py / file.md / folder/ (not "find/load")
LISTED = re.compile(r"(?<![\w/.<])([A-Za-z_][\w.-]*\.(?:py|md|yaml)|[A-Za-z_]\w*/)(?=[\s·,)(:]|$)")


def named_paths(text: str) -> set[str]:
    """Full paths anywhere (placeholders such as ``<family>`` skipped), plus the tree's names under their folder."""
    paths = {m.rstrip(".,:)") for m in FULL_PATH.findall(text) if "<" not in m and "*" not in m}
    tree = text.split("```", 2)[1]
    folder = None
    for line in tree.splitlines():
        head = line.split(maxsplit=1)
        if line and not line[0].isspace() and head and head[0].endswith("/"):
            folder, rest = head[0], (head[1] if len(head) > 1 else "")
        else:
            rest = line
        if folder is None:
            continue
        for name in LISTED.findall(re.sub(FULL_PATH, " ", rest)):
            paths.add(folder + name)
    return paths


def test_every_path_the_architecture_page_names_exists():
    missing = sorted(p for p in named_paths(ARCHITECTURE.read_text()) if not (ROOT / p).exists())
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_check_reads_both_kinds_of_names():
    paths = named_paths(ARCHITECTURE.read_text())
    assert "dpbench/analysis/stats.py" in paths  # a full path
    assert "dpbench/analysis/figures/curves.py" in paths  # listed under its folder in the tree
    assert not any(p.endswith("find/") for p in paths)  # prose such as "find/load" is not a path
