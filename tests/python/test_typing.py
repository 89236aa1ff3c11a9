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
