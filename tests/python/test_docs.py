"""The ```python blocks of docs/python.md, run as a reader would run them: in order, each page's blocks in one
namespace, in a scratch directory. A block whose fence follows the marker `<!-- snippet: skip=REASON -->`
(tests/snippets/README.md) is not run; the reasons are listed, and kept rare."""

import re

import pytest

from conftest import ROOT

PAGES = ["docs/python.md"]
FENCE = re.compile(r"(?:<!-- snippet: (?P<marker>[^>]*) -->\n)?```python\n(?P<code>.*?)```", re.S)


def blocks(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start("code")) + 1
        yield line, m.group("marker") or "", m.group("code")


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run(page, tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__doc_snippets__"}
    ran, skipped = 0, []
    for line, marker, code in blocks(page):
        if marker.startswith("skip="):
            skipped.append((line, marker[5:]))
            continue
        assert not marker, f"{page}:{line}: unknown snippet marker {marker!r}"
        try:
            exec(compile(code, f"{page}:{line}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"{page}:{line}: the block raised {type(e).__name__}: {e}") from e
        ran += 1
    with capsys.disabled():
        print(f"\n{page}: {ran} python blocks run, {len(skipped)} skipped: " +
              "; ".join(f"line {n}: {why}" for n, why in skipped))
    assert ran >= 5
