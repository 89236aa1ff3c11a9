"""The ```python blocks of docs/python.md, run as a reader would run them: in order, each page's blocks in one
namespace, in a scratch directory. A block whose fence follows the marker `<!-- snippet: skip=REASON -->`
(tests/snippets/README.md) is not run; the reasons are listed, and kept rare. A line that is an expression
followed by a comment starting with a Python literal (`plan.forward_steps, plan.peak_slots    # (15, 3)`,
optionally `: why`) shows what the reader gets: the expression's value must equal that literal."""

import ast
import dataclasses
import re

import pytest

from conftest import ROOT

PAGES = ["docs/python.md"]
FENCE = re.compile(r"(?:<!-- snippet: (?P<marker>[^>]*) -->\n)?```python\n(?P<code>.*?)```", re.S)


def shown_values(code):
    """(line offset, expression, literal) of each line `EXPRESSION  # LITERAL[: text]` of a block."""
    for i, text in enumerate(code.splitlines()):
        if "#" not in text or text.lstrip().startswith("#"):
            continue
        expression, comment = (part.strip() for part in text.split("#", 1))
        try:
            ast.parse(expression, mode="eval")
            literal = ast.literal_eval(comment.split(":", 1)[0].strip())
        except (SyntaxError, ValueError):
            continue  # a statement, or a comment in words
        yield i, expression, literal


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
    ran, shown, skipped = 0, 0, []
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
        for i, expression, literal in shown_values(code):
            got = eval(expression, namespace)
            assert got == literal, f"{page}:{line + i}: {expression} is {got!r}; the page shows {literal!r}"
            shown += 1
    with capsys.disabled():
        print(f"\n{page}: {ran} python blocks run, {shown} shown values checked, {len(skipped)} skipped: " +
              "; ".join(f"line {n}: {why}" for n, why in skipped))
    assert ran >= 5 and shown >= 4


def _count(text):
    return int(text.replace(",", ""))


def test_the_12_layer_table_figures_that_do_not_depend_on_time():
    """The figures of docs/python.md's 12-layer auto_checkpoint table (its measurement is skipped: minutes) that
    no profiled second changes, computed again from two untimed profiles (about 5 s each on the loaded VM):
    plain autograd's activations, the least budgets, and the plans without taped advances below plain
    autograd's peak (remat.chain's store-all plan, whatever the times)."""
    pytest.importorskip("torch")
    import remat.torch

    text = (ROOT / "docs/python.md").read_text(encoding="utf-8")
    code = next(c for _, marker, c in blocks("docs/python.md") if "the measurement behind the table" in marker)
    table = text[text.index("| budget | taped | method | predicted peak"):]
    lines = table.splitlines()
    lines = lines[2:next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert len(rows) == 8 and all(len(r) == 7 for r in rows)
    plain = _count(re.search(r"Plain autograd's activations:\s+([\d,]+) bytes", text).group(1))
    least = {m.group(1): _count(m.group(2))
             for m in re.finditer(r"`(remat\.chain(?:_taped)?)` ([\d,]+) bytes", text)}

    namespace = {}
    exec(code[:code.index("for budget in")], namespace)  # the model and the sample, as the page makes them
    model, x = namespace["model"], namespace["x"]
    taped = remat.torch.auto_checkpoint(model, x, budget="1GiB", taped=True, repeats=0)
    assert taped.plain_peak_bytes == plain and taped.least_budget_bytes == least["remat.chain_taped"]
    untaped = remat.torch.auto_checkpoint(model, x, budget="60MiB", taped=False, repeats=0)
    assert untaped.least_budget_bytes == least["remat.chain"]
    for budget, is_taped, method, predicted, measured, recomputed, _ in rows:
        assert _count(measured) <= _count(predicted)
        if method == "plain autograd":
            assert _count(predicted) == _count(measured) == plain and recomputed == "0"
        elif is_taped == "False":  # planned without running it: an iteration costs 5 s more
            assert (method, _count(predicted), int(recomputed)) == (
                untaped.method, untaped.predicted_peak_bytes, untaped.recomputed_blocks)
        else:  # the taped plans follow the profiled seconds: only what every plan keeps
            assert _count(predicted) < plain


def listed_names(start, end):
    """The `names` in backticks of docs/python.md's passage from `start` to the next `end` (the page's line breaks
    read as spaces)."""
    text = " ".join((ROOT / "docs/python.md").read_text(encoding="utf-8").split())
    i = text.index(start) + len(start)
    return set(re.findall(r"`(\w+)`", text[i:text.index(end, i)]))


def test_the_plan_fields_listed_are_a_plans_attributes():
    """"A `remat.Plan` has as attributes exactly the fields of `remat plan --format json` (...)": the list is
    the dataclass's (test_plans.py checks those against the tool's report)."""
    import remat

    listed = listed_names("for the same plan (", "the others are `None`") - set(remat.__all__)  # `taped_revolve`
    assert listed == {f.name for f in dataclasses.fields(remat.Plan) if not f.name.startswith("_")}


def test_the_taped_chain_plan_fields_listed_are_its_report():
    """"It returns a `remat.TapedChainPlan`: `actions` ... and `steps`, ...": its actions and its report's fields."""
    import remat

    plan = remat.chain_taped([remat.ChainStep(1.0, 2.0, 1024)] * 4, budget=8 * 1024)
    listed = listed_names("It returns a `remat.TapedChainPlan`:", "Two are equal where")
    assert listed == {"actions", *plan.as_dict()}
    assert all(getattr(plan, name) is not None for name in listed)


def test_the_tradeoff_fields_listed_are_its_attributes():
    """"It returns a `remat.torch.Tradeoff`: `plain` ...": the Tradeoff's fields and methods and its points' fields
    (`plain` was listed as a list, and `rounds` and `refused_budgets` left out)."""
    pytest.importorskip("torch")
    import remat.torch

    start, end = "It returns a `remat.torch.Tradeoff`:", "The picture:"
    listed = listed_names(start, end) - set(remat.torch.__all__)  # `auto_checkpoint`
    point = {f.name for f in dataclasses.fields(remat.torch.TradeoffPoint)} | {"label"}
    assert listed == {f.name for f in dataclasses.fields(remat.torch.Tradeoff)} | {"points"} | point
    text = " ".join((ROOT / "docs/python.md").read_text(encoding="utf-8").split())
    passage = text[text.index(start):text.index(end)]
    assert set(re.findall(r"`(\w+)\(", passage)) == {
        n for n, m in vars(remat.torch.Tradeoff).items() if callable(m) and not n.startswith("_")}
    # one point, not a list: as the page says
    assert remat.torch.Tradeoff.__dataclass_fields__["plain"].type == "TradeoffPoint"
    assert "`plain` (plain autograd's `remat.torch.TradeoffPoint`)" in passage
