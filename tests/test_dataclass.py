"""trainlint._dataclass.dataclass behaves as the standard library's `dataclasses.dataclass` for the options trainlint
uses: the same fields, signature, docstring, repr, equality, hash, ordering, frozen errors, replace/asdict, params;
and every class trainlint makes with it looks the same as the standard library would make it."""

from __future__ import annotations

import dataclasses
import inspect
import json
import pickle
import subprocess
import sys
import types
from dataclasses import FrozenInstanceError, field
from typing import ClassVar, Generic, TypeVar

import pytest

import trainlint._dataclass as fast_module
from trainlint._dataclass import dataclass as fast

T = TypeVar("T")
OPTIONS = [{}, {"eq": False}, {"frozen": True}, {"frozen": True, "order": True}, {"order": True}]


def _namespace(kind: str, field=field) -> dict:
    ns: dict = {"__module__": __name__, "__qualname__": f"Made_{kind}",
                "__annotations__": {"a": "int", "b": "str", "c": "list", "d": "float", "e": "int", "f": "dict"},
                "b": "x", "c": field(default_factory=list), "d": field(default=1.5, repr=False),
                "e": field(default=3, compare=False), "f": field(default_factory=dict, init=False, hash=False)}
    if kind == "doc":
        ns["__doc__"] = "Documented."
    if kind == "post_init":
        def __post_init__(self):
            object.__setattr__(self, "f", {"seen": self.a})
        ns["__post_init__"] = __post_init__
    if kind == "explicit":
        ns["__repr__"] = lambda self: "custom"
        ns["__eq__"] = lambda self, other: True
    if kind == "explicit_hash":
        ns["__hash__"] = lambda self: 7
    return ns


def _pair(kind: str, options: dict, bases: tuple = ()):
    made = []
    for decorator, make_field in ((dataclasses.dataclass, dataclasses.field), (fast, fast_module.field)):
        ns = _namespace(kind, make_field)
        cls = types.new_class(f"Made_{kind}", bases, exec_body=lambda body: body.update(ns))
        made.append(decorator(**options)(cls))
    return made


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
@pytest.mark.parametrize("kind", ["plain", "doc", "post_init", "explicit", "explicit_hash", "generic"])
@pytest.mark.parametrize("compile_after", [50, 0], ids=["stand-in init", "compiled init"])
def test_same_behaviour_as_the_standard_library(kind, options, compile_after, monkeypatch):
    monkeypatch.setattr(fast_module, "_COMPILE_AFTER", compile_after)
    bases = (Generic[T],) if kind == "generic" else ()
    std, ours = _pair(kind, options, bases)
    assert str(inspect.signature(ours)) == str(inspect.signature(std))
    assert ours.__doc__ == std.__doc__
    assert ours.__match_args__ == std.__match_args__
    assert [(f.name, f.type, f.init, f.repr, f.compare, f.hash) for f in dataclasses.fields(ours)] == \
        [(f.name, f.type, f.init, f.repr, f.compare, f.hash) for f in dataclasses.fields(std)]
    assert repr(ours.__dataclass_params__) == repr(std.__dataclass_params__)
    assert dataclasses.is_dataclass(ours)
    assert ours.__init__.__qualname__ == std.__init__.__qualname__
    assert ("__hash__" in ours.__dict__) == ("__hash__" in std.__dict__)
    assert (ours.__hash__ is None) == (std.__hash__ is None)

    def behaviour(cls):
        one, same, other = cls(1, "y", [2]), cls(1, "y", [2], e=9), cls(2)
        results = [repr(one), repr(cls(1, d=2.0)), one == same, one == other, one != same, one == "text",
                   dataclasses.asdict(one), repr(dataclasses.replace(one, a=5)), one.f, dataclasses.astuple(other)]
        results.append(_outcome(lambda: hash(one) == hash(same)))
        # both kept alive: with eq=False the hash is the identity's, and a freed temporary's address may be reused
        twins = (cls(1, "y", (2,)), cls(1, "y", (2,)))
        results.append(_outcome(lambda: hash(twins[0]) == hash(twins[1])))
        results.append(_outcome(lambda: one < other))
        results.append(_outcome(lambda: one >= same))
        results.append(_outcome(lambda: setattr(one, "a", 3)))
        results.append(_outcome(lambda: delattr(one, "b")))
        results.append(_outcome(lambda: setattr(one, "extra", 3)))
        results.append(_outcome(lambda: cls()))
        results.append(_outcome(lambda: cls(1, 2, 3, 4, 5, 6)))
        results.append(_outcome(lambda: cls(1, f={})))
        results.append(_outcome(lambda: pickle.loads(pickle.dumps(cls(4))) == cls(4)))
        return results

    globals()[std.__name__] = std  # pickling finds the class by name: each in turn
    std_results = behaviour(std)
    globals()[ours.__name__] = ours
    assert behaviour(ours) == std_results


def test_recursive_repr_and_subclass_of_a_frozen_class():
    std, ours = _pair("plain", {})
    for cls in (std, ours):
        obj = cls(1)
        obj.c.append(obj)
        assert repr(obj) == f"{cls.__qualname__}(a=1, b='x', c=[...], e=3, f={{}})"
    std, ours = _pair("plain", {"frozen": True})
    for cls in (std, ours):
        sub = type("Sub", (cls,), {})  # a plain subclass may set new attributes, not the fields
        obj = sub(1)
        obj.extra = 1
        with pytest.raises(FrozenInstanceError, match="cannot assign to field 'a'"):
            obj.a = 2


def test_inheritance_and_the_standard_library_s_own_fields_and_bases():
    base = fast(type("Base", (), {"__annotations__": {"a": "int"}, "__module__": __name__}))
    child = fast(frozen=False)(type("Child", (base,), {"__annotations__": {"b": "int"}, "__module__": __name__}))
    assert [f.name for f in dataclasses.fields(child)] == ["a", "b"]
    assert repr(child(1, 2)) == "Child(a=1, b=2)"
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        fast(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1, "__module__": __name__}))
    with pytest.raises(TypeError):
        fast(frozen=True)(type("Own", (), {"__annotations__": {"a": "int"}, "__module__": __name__,
                                           "__setattr__": lambda self, k, v: None}))


_DUMP = """
import dataclasses, importlib, inspect, json, pkgutil, sys
import trainlint, trainlint._dataclass as fast
if sys.argv[1] == "stdlib":
    fast._process = fast._standard_library
out = {}
for info in pkgutil.walk_packages(trainlint.__path__, "trainlint."):
    if info.name == "trainlint.__main__":
        continue
    module = importlib.import_module(info.name)
    for name, cls in vars(module).items():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == info.name:
            out[f"{info.name}.{name}"] = [str(inspect.signature(cls)), cls.__doc__, cls.__match_args__,
                                          repr(cls.__dataclass_params__), cls.__hash__ is None,
                                          [(f.name, str(f.type), f.init, f.repr, f.compare, f.hash)
                                           for f in dataclasses.fields(cls)]]
print(json.dumps(out))
"""


def test_every_trainlint_dataclass_is_made_as_the_standard_library_makes_it():
    dumps = [json.loads(subprocess.run([sys.executable, "-c", _DUMP, how], capture_output=True, text=True,
                                       check=True, timeout=120).stdout) for how in ("stdlib", "fast")]
    assert len(dumps[0]) > 50
    assert dumps[1] == dumps[0]


def test_init_is_compiled_after_some_instances_only():
    for options in OPTIONS:
        std, ours = _pair("post_init", options)
        stand_in = ours.__init__
        assert stand_in.__code__.co_filename != "<string>"  # nothing compiled when the class is made
        assert str(inspect.signature(stand_in)) == str(inspect.signature(std.__init__))
        assert repr(stand_in.__defaults__) == repr(std.__init__.__defaults__)  # (each its own `<factory>` sentinel)
        assert stand_in.__annotations__ == std.__init__.__annotations__
        assert _outcome(lambda: stand_in(ours.__new__(ours))) == _outcome(lambda: std())
        sub = type("Sub", (ours,), {})
        for n in range(fast_module._COMPILE_AFTER):  # (the call above failed before its body ran)
            assert sub(n, "y").f == {"seen": n} and ours.__init__ is stand_in
        assert sub(1, "y").f == {"seen": 1}  # the next instance, a subclass's: the compiled one goes on the class
        compiled = ours.__init__
        assert compiled is not stand_in and compiled.__code__.co_filename == "<string>"
        assert ours(2).f == {"seen": 2} and ours(3, c=[1]).c == [1] and ours.__init__ is compiled


def test_what_it_does_not_handle_goes_to_the_standard_library():
    slotted = fast(type("Slotted", (), {"__annotations__": {"a": "int"}, "__slots__": ("a",), "__module__": __name__,
                                        "b": 1}))
    assert "Slotted(a: 'int')" == slotted.__doc__ and slotted.__dataclass_params__.__class__.__module__ == "dataclasses"
    with_classvar = fast(type("WithClassVar", (), {"__annotations__": {"a": "int", "k": ClassVar[int], "x": "int"}, "k": 3,
                                                   "x": fast_module.field(default=2), "__module__": __name__}))
    assert [f.name for f in dataclasses.fields(with_classvar)] == ["a", "x"] and with_classvar.k == 3
    assert with_classvar(1).x == 2


def test_a_standard_library_field_or_base_is_read_as_its_own():
    base = dataclasses.dataclass(type("StdBase", (), {"__annotations__": {"a": "int"}, "a": field(default=1),
                                                      "__module__": __name__}))
    child = fast(type("Child", (base,), {"__annotations__": {"b": "list"}, "b": field(default_factory=list),
                                         "__module__": __name__}))
    assert repr(child()) == "Child(a=1, b=[])" and child(2, [3]).b == [3]
    assert str(inspect.signature(child)) == "(a: 'int' = 1, b: 'list' = <factory>) -> None"
    one = child()
    assert fast_module.replace(one, a=5) == child(5) and dataclasses.replace(one, b=[1]) == child(1, [1])
    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        fast(frozen=True)(type("Frozen", (base,), {"__module__": __name__}))
    with pytest.raises(TypeError, match="'x' is a field but has no type annotation"):
        fast(type("Loose", (), {"x": fast_module.field(default=1), "__module__": __name__}))
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field a is not allowed"):
        fast(type("Mutable", (), {"__annotations__": {"a": "list"}, "a": [], "__module__": __name__}))


def test_making_classes_does_not_import_the_standard_library_s_dataclasses():
    probe = ("import sys, trainlint.plan, trainlint.memory.model, trainlint.engine\n"
             "print(sorted({'dataclasses', 'inspect', 'typing'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60).stdout
    assert "dataclasses" not in out and "inspect" not in out, out


def test_fields_set_at_once_leave_the_instance_as_the_generated_init_does():
    """A class whose fields all come from parameters gets them in one update of the instance dictionary; a class
    that intercepts sets (its own __setattr__, a descriptor named like a field) or a subclass instance gets them one
    by one, as the generated __init__ sets them."""
    calls = []

    def spy(self, name, value):
        calls.append(name)
        object.__setattr__(self, name, value)

    for options in ({}, {"frozen": True}):
        made = [decorator(**options)(type("Plain", (), {"__annotations__": {"a": "int", "b": "str"}, "b": "x",
                                                        "__module__": __name__}))
                for decorator in (dataclasses.dataclass, fast)]
        assert [list(vars(cls(1)).items()) for cls in made] == [[("a", 1), ("b", "x")]] * 2
        sub = type("Sub", (made[1],), {})
        assert list(vars(sub(2, "y")).items()) == [("a", 2), ("b", "y")]
    spied = fast(type("Spied", (), {"__annotations__": {"a": "int"}, "__setattr__": spy, "__module__": __name__}))
    spied(1)
    assert calls == ["a"]
