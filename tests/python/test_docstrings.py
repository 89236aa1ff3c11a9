"""The docstrings of the public API: their `>>>` examples run and give what they show (doctest), and every
public function, class and method has one, naming each of its parameters (help() is what an IDE user reads
first)."""

import doctest
import importlib
import inspect
import re

import pytest

import remat

MODULES = ["remat", "remat._plans", "remat._tradeoff", "remat._bytes"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"remat": remat}, optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples failed (run " \
                               f"python -m doctest -v on it)"


def public_members(module):
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            yield f"{module.__name__}.{name}", obj
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__iter__":
                    continue
                if isinstance(member, property):
                    yield f"{module.__name__}.{name}.{attr}", member.fget
                elif inspect.isfunction(member):
                    yield f"{module.__name__}.{name}.{attr}", member
        elif callable(obj):
            yield f"{module.__name__}.{name}", obj


def public_modules():
    modules = [remat]
    try:
        modules.append(importlib.import_module("remat.torch"))
    except ImportError:  # PyTorch missing: remat alone
        pass
    return modules


def test_every_public_function_and_method_has_a_docstring():
    modules = public_modules()
    missing = [name for module in modules for name, obj in public_members(module) if not inspect.getdoc(obj)]
    assert not missing, f"no docstring: {missing}"
    assert remat.parse_bytes.__doc__.count(">>>") >= 1


def test_every_parameter_is_named_in_its_docstring():
    """help(f) says what each of f's parameters is: step_cost and reverse_cost of the plan functions, chain's
    granularity, horizon and greedy_fallback were accepted and named nowhere but in the signature."""
    unnamed = []
    for module in public_modules():
        for name, obj in public_members(module):
            if not inspect.isfunction(obj):  # the extension's, whose signatures are _remat.pyi's
                continue
            doc = inspect.getdoc(obj) or ""
            for p in inspect.signature(obj).parameters:
                if p not in ("self", "cls") and not re.search(rf"\b{p}\b", doc):
                    unnamed.append(f"{name}({p})")
    assert not unnamed, f"parameters their docstrings do not name: {unnamed}"
