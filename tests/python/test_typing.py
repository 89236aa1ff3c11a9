"""The package's types, for IDEs and type checkers (PEP 561): the py.typed marker and the extension's stubs
(_remat.pyi) installed beside the modules; every public function and method of remat and remat.torch
annotated, each parameter and the return; every public name of the extension remat._remat declared in
_remat.pyi, with each public member of its classes."""

import ast
import inspect
import pathlib

import pytest

import remat

PACKAGE = pathlib.Path(remat.__file__).resolve().parent


def test_marker_and_extension_stubs_are_installed():
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "_remat.pyi").is_file()


def _unannotated(name, function):
    """'name(parameter)' for each parameter without an annotation, 'name -> ' for a missing return."""
    signature = inspect.signature(function)
    missing = [f"{name}({p.name})" for p in signature.parameters.values()
               if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append(f"{name} -> ")
    return missing


def _python_members(obj):
    """The functions a Python-level public name brings: itself, or a class's __init__, public methods and
    properties (the extension's classes, without signatures to inspect, are _remat.pyi's)."""
    if inspect.isfunction(obj):
        return [(obj.__name__, obj)]
    if not inspect.isclass(obj) or not obj.__module__.startswith("remat.") or obj.__module__ == "remat._remat":
        return []
    members = []
    for n, m in vars(obj).items():
        if isinstance(m, property):
            members.append((f"{obj.__name__}.{n}", m.fget))
        elif inspect.isfunction(m) and (not n.startswith("_") or n == "__init__"):
            members.append((f"{obj.__name__}.{n}", m))
    return members


@pytest.mark.parametrize("module", ["remat", "remat.torch"])
def test_every_public_function_and_method_is_annotated(module):
    if module == "remat.torch":
        pytest.importorskip("torch")
    mod = __import__(module, fromlist=["__all__"])
    missing = []
    for name in mod.__all__:
        for member, function in _python_members(getattr(mod, name)):
            missing += _unannotated(f"{module}.{member}", function)
    assert not missing, f"not annotated: {missing}"


def test_extension_stubs_declare_every_public_name_and_member():
    tree = ast.parse((PACKAGE / "_remat.pyi").read_text())
    declared, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared.add(node.name)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | {
                n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        elif isinstance(node, ast.Assign):
            declared.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared.add(node.target.id)
    public = {n for n in dir(remat._remat) if not n.startswith("_")}
    assert not public - declared, f"not in _remat.pyi: {sorted(public - declared)}"
    for cls, names in members.items():
        actual = {n for n in dir(getattr(remat._remat, cls)) if not n.startswith("_")}
        assert not actual - names, f"{cls} members not in _remat.pyi: {sorted(actual - names)}"


def _stub_parameters(function: ast.FunctionDef):
    """(name, kind, default) of each parameter of a def, the name None where it is positional-only (no caller
    can pass it by name, so the name is no part of the signature)."""
    a = function.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + [ast.unparse(d) for d in a.defaults]
    out = [(None if p in a.posonlyargs else p.arg, "positional-only" if p in a.posonlyargs else "positional",
            d) for p, d in zip(positional, defaults)]
    if a.vararg:
        out.append((a.vararg.arg, "*args", None))
    out += [(p.arg, "keyword-only", None if d is None else ast.unparse(d)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append((a.kwarg.arg, "**kwargs", None))
    return out


def _extension_parameters(obj):
    """The parameters of an extension function as nanobind states them (__nb_signature__: its `def` line,
    each default written \\N and given as the N-th value), in _stub_parameters' form; None where it has none."""
    if isinstance(obj, property):
        obj = obj.fget
    overloads = getattr(obj, "__nb_signature__", None)
    if not overloads:
        return None
    assert len(overloads) == 1, f"{obj}: overloaded, which the stub would declare with @overload"
    line, _, defaults = overloads[0]
    for i, value in enumerate(defaults or ()):
        line = line.replace(f"\\{i}", repr(value), 1)
    return _stub_parameters(ast.parse(line.replace("def (", "def f(", 1) + ": ...").body[0])


def test_extension_stubs_state_each_signature_as_the_extension_takes_it():
    """Each function and method _remat.pyi declares takes the parameters the extension's does: the same names
    (those a caller may pass by name), kinds and defaults, against nanobind's own statement of the signature.
    Before, Advance.__eq__ and the other actions' were declared `(self, other)`, which a checker reads as
    `a.__eq__(other=b)` being valid; the extension takes its operand by position only."""
    tree = ast.parse((PACKAGE / "_remat.pyi").read_text())
    checked, wrong = 0, []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            pairs = [(node.name, node, getattr(remat._remat, node.name))]
        elif isinstance(node, ast.ClassDef):
            cls = getattr(remat._remat, node.name)
            pairs = [(f"{node.name}.{m.name}", m, vars(cls).get(m.name)) for m in node.body
                     if isinstance(m, ast.FunctionDef)]
        else:
            continue
        for name, stub, actual in pairs:
            assert actual is not None, f"_remat.pyi declares {name}, which the extension does not define"
            stated = _extension_parameters(actual)
            if stated is None:  # a slot wrapper (__iter__, __next__): CPython's own signature, no nanobind's
                continue
            checked += 1
            if _stub_parameters(stub) != stated:
                wrong.append(f"{name}: stub {_stub_parameters(stub)} != extension {stated}")
    assert not wrong, "\n".join(wrong)
    assert checked >= 40  # every action's fields and methods, the plan functions, the cursor, the disk level
