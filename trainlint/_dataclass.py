"""`dataclass`, as the standard library's, made with one compiled function per class instead of up to seven.

Python 3.11's `dataclasses.dataclass` compiles each generated method (`__init__`, `__repr__`, `__eq__`, `__hash__`,
the frozen `__setattr__` and `__delattr__`, the orderings) from source when the class is created: about 0.3 ms
for a frozen class, which over the ~70 classes a check imports was a quarter of a check's CPU time. Here the
standard library still reads the fields (so `dataclasses.fields`, `replace`, `asdict`, `is_dataclass` and
`__match_args__` are its own), `__init__` is compiled as it compiles it, and the other methods are shared closures
over the field names that behave as the generated ones do (same results, same exceptions and messages, `repr`
guarded against recursion). `tests/test_dataclass.py` holds both to the same behaviour.

Supported: `frozen`, `eq`, `order` (the options trainlint uses); anything else (other options, a dataclass base,
`InitVar` or `ClassVar` fields, `__slots__`) is handed to `dataclasses.dataclass` unchanged.
"""

from __future__ import annotations

import _thread
import dataclasses
import inspect
import sys
from dataclasses import MISSING, FrozenInstanceError
from operator import attrgetter

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

    if "__init__" not in body:
        cls.__init__ = _init(cls, fields, frozen)
    if "__repr__" not in body:
        cls.__repr__ = _named(cls, _repr(tuple(f.name for f in fields if f.repr)), "__repr__")
    compared = tuple(f.name for f in fields if f.compare)
    if eq and "__eq__" not in body:
        cls.__eq__ = _named(cls, _eq(_key(compared)), "__eq__")
    if order:
        for name, op in (("__lt__", "__lt__"), ("__le__", "__le__"), ("__gt__", "__gt__"), ("__ge__", "__ge__")):
            setattr(cls, name, _named(cls, _order(_key(compared), op), name))
    if frozen:
        names = tuple(f.name for f in fields)
        cls.__setattr__ = _named(cls, _frozen_setattr(cls, names), "__setattr__")
        cls.__delattr__ = _named(cls, _frozen_delattr(cls, names), "__delattr__")
    if eq and not has_explicit_hash:
        if frozen:
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            cls.__hash__ = _named(cls, _hash(_key(hashed)), "__hash__")
        else:
            cls.__hash__ = None
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


def _init(cls, fields, frozen: bool):
    """`__init__`, compiled from the source the standard library would write, with its globals and names."""
    local = {"MISSING": MISSING, "_HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
             "__dataclass_builtins_object__": object, "_return_type": None}
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
            default = (f"=_dflt_{f.name}" if f.default is not MISSING else "=_HAS_DEFAULT_FACTORY" if has_default
                       else "")
            params.append(f"{f.name}:_type_{f.name}{default}")
        if value is not None:
            lines.append(f"__dataclass_builtins_object__.__setattr__(self,{f.name!r},{value})" if frozen
                         else f"self.{f.name}={value}")
    if hasattr(cls, "__post_init__"):
        lines.append("self.__post_init__()")
    body = "\n".join(f"  {line}" for line in lines or ["pass"])
    source = (f"def __create_fn__({', '.join(local)}):\n def __init__({','.join(params)})->_return_type:\n{body}\n"
              f" return __init__")
    module = sys.modules.get(cls.__module__)
    namespace: dict = {}
    code = compile(source, "<string>", "exec", dont_inherit=True)  # not this module's `annotations` future
    exec(code, module.__dict__ if module is not None else {}, namespace)  # noqa: S102 - as dataclasses does
    return _named(cls, namespace["__create_fn__"](**local), "__init__")


def _key(names: tuple[str, ...]):
    """obj -> the tuple of its `names` attributes."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return attrgetter(*names)


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


def _eq(key):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _order(key, op: str):
    compare = getattr(tuple, op)

    def method(self, other):
        if other.__class__ is self.__class__:
            return compare(key(self), key(other))
        return NotImplemented

    return method


def _hash(key):
    def __hash__(self):
        return hash(key(self))

    return __hash__


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
