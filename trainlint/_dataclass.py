"""`dataclass`, as the standard library's, with one compiled function per class at creation instead of up to seven.

Python 3.11's `dataclasses.dataclass` compiles each generated method (`__init__`, `__repr__`, `__eq__`, `__hash__`,
the frozen `__setattr__` and `__delattr__`, the orderings) from source when the class is created: about 0.3 ms
for a frozen class, which over the ~70 classes a check imports was a quarter of a check's CPU time. Here the
standard library still reads the fields (so `dataclasses.fields`, `replace`, `asdict`, `is_dataclass` and
`__match_args__` are its own); `__init__` is a stand-in with the generated one's signature that sets the fields as
it does, replaced after a few dozen instances by the generated one, compiled as it compiles it (most classes make a
few instances in a check); `__eq__`, the orderings and `__hash__` are compiled from the same source as its own, on
their first call (most classes are never compared or hashed in a run); `__repr__` and the frozen `__setattr__` / `__delattr__` are shared closures that behave as the generated ones
(same results, same exceptions and messages, `repr` guarded against recursion). `tests/test_dataclass.py` holds
all of it to `dataclasses.dataclass`.

Supported: `frozen`, `eq`, `order` (the options trainlint uses); anything else (other options, a dataclass base,
`InitVar` or `ClassVar` fields, `__slots__`) is handed to `dataclasses.dataclass` unchanged.
"""

from __future__ import annotations

import _thread
import builtins
import dataclasses
import inspect
import sys
import types
from dataclasses import MISSING, FrozenInstanceError

__all__ = ["dataclass"]

# The sentinel a field with a default_factory has as its __init__ default (shown as `<factory>` in signatures).
_HAS_DEFAULT_FACTORY = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", MISSING)


def dataclass(cls=None, /, *, frozen: bool = False, eq: bool = True, order: bool = False):
    def wrap(cls):
        return _process(cls, frozen, eq, order)

    return wrap if cls is None else wrap(cls)


def _fallback(cls) -> bool:
    if "__slots__" in cls.__dict__ or _HAS_DEFAULT_FACTORY is MISSING:
        return True
    return any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:])


def _process(cls, frozen: bool, eq: bool, order: bool):
    if order and not eq:
        raise ValueError("eq must be true if order is true")
    if _fallback(cls):
        return dataclasses.dataclass(cls, frozen=frozen, eq=eq, order=order)
    body = cls.__dict__
    if frozen and ("__setattr__" in body or "__delattr__" in body):
        name = "__setattr__" if "__setattr__" in body else "__delattr__"
        raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    if order:
        for name in ("__lt__", "__le__", "__gt__", "__ge__"):
            if name in body:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}. Consider using "
                                "functools.total_ordering")
    class_hash = body.get("__hash__", MISSING)
    has_explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in body))
    documented = bool(getattr(cls, "__doc__"))
    if not documented:
        cls.__doc__ = "-"  # the standard library would describe the class before it has its __init__
    # The standard library reads the fields and sets __dataclass_fields__ and __match_args__; it generates nothing.
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__):  # ClassVar / InitVar pseudo-fields: leave it to the original
        raise TypeError(f"{cls.__name__}: ClassVar and InitVar fields are not supported by trainlint's dataclass")

    compared = tuple(f.name for f in fields if f.compare)
    compiled: dict[str, tuple[str, ...]] = {}  # method -> the fields it reads (compiled together, in one source)
    if eq and "__eq__" not in body:
        compiled["__eq__"] = compared
    if order:
        compiled.update((name, compared) for name in _ORDER)
    if eq and not has_explicit_hash:
        if frozen:
            compiled["__hash__"] = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        else:
            cls.__hash__ = None
    if "__init__" not in body:
        cls.__init__ = _lazy_init(cls, fields, frozen)
    for name, names in compiled.items():  # compiled on first use: most classes are never compared or hashed
        setattr(cls, name, _on_first_use(cls, name, names))
    if "__repr__" not in body:
        cls.__repr__ = _named(cls, _repr(tuple(f.name for f in fields if f.repr)), "__repr__")
    if frozen:
        names = tuple(f.name for f in fields)
        cls.__setattr__ = _named(cls, _frozen_setattr(cls, names), "__setattr__")
        cls.__delattr__ = _named(cls, _frozen_delattr(cls, names), "__delattr__")
    params = cls.__dataclass_params__  # the standard library's, made by the call above: say what was made
    params.init, params.repr, params.eq, params.order, params.frozen = True, True, eq, order, frozen
    if not documented:
        cls.__doc__ = None
        if "__init__" in body:
            cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        else:
            cls.__doc__ = _doc(cls, fields)
    return cls


def _doc(cls, fields) -> str:
    """The docstring the standard library gives a class without one (its name and `inspect.signature`), written
    from the fields as the signature would show them."""
    parts = []
    for f in fields:
        if not f.init:
            continue
        text = f"{f.name}: {inspect.formatannotation(f.type)}"  # as inspect.Parameter writes it
        if f.default is not MISSING:
            text += f" = {f.default!r}"
        elif f.default_factory is not MISSING:
            text += f" = {_HAS_DEFAULT_FACTORY!r}"
        parts.append(text)
    return f"{cls.__name__}({', '.join(parts)})"


def _named(cls, fn, name: str):
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    return fn


_ORDER = {"__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="}


def _tuple(obj: str, names: tuple[str, ...]) -> str:
    return f"({','.join(f'{obj}.{name}' for name in names)},)" if names else "()"


def _compile(cls, fields, frozen: bool, init: bool, methods: dict[str, tuple[str, ...]]) -> dict:
    """`__init__` (when `init`) and the comparison methods (`methods`: name -> the fields it compares or hashes),
    from the source the standard library writes for each, compiled together with the class's module as globals."""
    local = {"MISSING": MISSING, "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
             "__dataclass_builtins_object__": object, "_return_type": None}
    defs: list[str] = []
    if init:
        params, lines = ["self"], []
        seen_default = False
        for f in fields:
            local[f"_type_{f.name}"] = f.type
            default_name = f"_dflt_{f.name}"
            if f.default_factory is not MISSING:
                local[default_name] = f.default_factory
                value = f"{default_name}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}" if f.init \
                    else f"{default_name}()"
            elif f.init:
                if f.default is not MISSING:
                    local[default_name] = f.default
                value = f.name
            else:
                value = None
            if f.init:
                has_default = not (f.default is MISSING and f.default_factory is MISSING)
                if has_default:
                    seen_default = True
                elif seen_default:
                    raise TypeError(f"non-default argument {f.name!r} follows default argument")
                default = (f"=_dflt_{f.name}" if f.default is not MISSING else "=_HAS_DEFAULT_FACTORY"
                           if has_default else "")
                params.append(f"{f.name}:_type_{f.name}{default}")
            if value is not None:
                lines.append(f"__dataclass_builtins_object__.__setattr__(self,{f.name!r},{value})" if frozen
                             else f"self.{f.name}={value}")
        if hasattr(cls, "__post_init__"):
            lines.append("self.__post_init__()")
        body = "\n".join(f"  {line}" for line in lines or ["pass"])
        defs.append(f" def __init__({','.join(params)})->_return_type:\n{body}")
    for name, names in methods.items():
        if name == "__hash__":
            defs.append(f" def __hash__(self):\n  return hash({_tuple('self', names)})")
        else:
            op = "==" if name == "__eq__" else _ORDER[name]
            defs.append(f" def {name}(self,other):\n  if other.__class__ is self.__class__:\n"
                        f"   return {_tuple('self', names)}{op}{_tuple('other', names)}\n  return NotImplemented")
    made = (["__init__"] if init else []) + list(methods)
    if not made:
        return {}
    source = f"def __create_fn__({', '.join(local)}):\n" + "\n".join(defs) + f"\n return ({', '.join(made)},)"
    module = sys.modules.get(cls.__module__)
    namespace: dict = {}
    code = compile(source, "<string>", "exec", dont_inherit=True)  # not this module's `annotations` future
    exec(code, module.__dict__ if module is not None else {}, namespace)  # noqa: S102 - as dataclasses does
    return {name: _named(cls, fn, name) for name, fn in zip(made, namespace["__create_fn__"](**local))}


def __init__(self):  # the stand-in's template: its code object, with the class's parameters, calls _first
    return _first(locals())


_INIT_CODE = __init__.__code__
del __init__


# How many instances a class's stand-in `__init__` makes before the compiled one replaces it: compiling costs about
# as much as a hundred calls of the stand-in, and most classes make a few instances in a check, some thousands.
_COMPILE_AFTER = 50


def _lazy_init(cls, fields, frozen: bool):
    """A stand-in for `__init__` with its signature (the same parameters, defaults and annotations: the template's
    code object with the class's parameter names, so nothing is compiled). It sets the fields as the generated
    `__init__` does (the default factories called, `object.__setattr__` on a frozen class, then `__post_init__`);
    after `_COMPILE_AFTER` instances it compiles the generated one and puts it on the class in its place (a class
    that makes a handful of instances in a check never pays for the compilation). Until then its globals are its
    own: `_first`, the builtins and the module's name."""
    params, defaults, annotations, steps = [], [], {}, []
    seen_default = False
    for f in fields:
        factory = f.default_factory if f.default_factory is not MISSING else None
        if f.init or factory is not None:
            steps.append((f.name, f.init, factory))
        if not f.init:
            continue
        has_default = not (f.default is MISSING and factory is None)
        if has_default:
            seen_default = True
            defaults.append(f.default if f.default is not MISSING else _HAS_DEFAULT_FACTORY)
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        params.append(f.name)
        annotations[f.name] = f.type
    if "self" in params:  # the template's own name: compile it now
        return _compile(cls, fields, frozen, True, {})["__init__"]
    annotations["return"] = None
    stand_in = None
    calls = 0
    assign = object.__setattr__ if frozen else setattr
    post_init = hasattr(cls, "__post_init__")

    def first(values: dict):
        nonlocal calls
        calls += 1
        self = values["self"]
        if calls > _COMPILE_AFTER:
            fn = _compile(cls, fields, frozen, True, {})["__init__"]
            if cls.__dict__.get("__init__") is stand_in:
                cls.__init__ = fn
            del values["self"]
            return fn(self, **values)
        for name, init, factory in steps:
            if not init:
                value = factory()
            else:
                value = values[name]
                if factory is not None and value is _HAS_DEFAULT_FACTORY:
                    value = factory()
            assign(self, name, value)
        if post_init:
            self.__post_init__()
        return None

    names = ("self", *params)
    replace = {"co_argcount": len(names), "co_nlocals": len(names), "co_varnames": names}
    if hasattr(_INIT_CODE, "co_qualname"):  # Python 3.11+: as the standard library's (made in __create_fn__)
        replace["co_qualname"] = "__create_fn__.<locals>.__init__"
    scope = {"__builtins__": builtins, "__name__": cls.__module__, "_first": first, "locals": locals}
    stand_in = types.FunctionType(_INIT_CODE.replace(**replace), scope, "__init__", tuple(defaults) or None)
    stand_in.__annotations__ = annotations
    return _named(cls, stand_in, "__init__")


def _on_first_use(cls, name: str, names: tuple[str, ...]):
    """A stand-in for a comparison method or `__hash__` that compiles the real one (as the standard library writes
    it) on its first call, puts it on the class in its place, and returns its result."""
    def first_use(self, *other):
        fn = _compile(cls, (), False, False, {name: names})[name]
        setattr(cls, name, fn)
        return fn(self, *other)

    return _named(cls, first_use, name)


def _repr(names: tuple[str, ...]):
    running: set = set()

    def __repr__(self):
        key = (id(self), _thread.get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            return (self.__class__.__qualname__ + "("
                    + ", ".join(f"{name}={getattr(self, name)!r}" for name in names) + ")")
        finally:
            running.discard(key)

    return __repr__


def _frozen_setattr(cls, names: tuple[str, ...]):
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls, names: tuple[str, ...]):
    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__
