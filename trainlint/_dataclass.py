"""`dataclass`, `field` and `replace` as the standard library's, without importing `dataclasses`.

Importing `dataclasses` (which imports `inspect`, `ast`, `dis`, `tokenize`, ...) costs about 8 ms of CPU, and
Python 3.11's `dataclasses.dataclass` compiles each generated method (`__init__`, `__repr__`, `__eq__`, `__hash__`,
the frozen `__setattr__` and `__delattr__`, the orderings) from source when the class is created: together about a
fifth of a one-file check. Here the fields are read as the standard library reads them (annotations in order, the
bases' fields first, `field()` or a plain default as the class attribute), and the class gets the same
`__dataclass_fields__`, `__dataclass_params__` and `__match_args__`, so `dataclasses.fields`, `replace`, `asdict`,
`astuple` and `is_dataclass` work on it as on theirs. `__init__` is a stand-in with the generated one's signature
that sets the fields as it does, and `__eq__`, the orderings and `__hash__` are stand-ins that compare or hash the
fields' tuples as the generated ones do; each is replaced by the generated method, compiled from the same source as
the standard library's, after `_COMPILE_AFTER` calls (a one-file check never gets there: compiling costs more than
its few hundred calls save). `__repr__` and the frozen `__setattr__` / `__delattr__` are shared closures that behave
as the generated ones (same results, same exceptions and messages, `repr` guarded against recursion; the frozen
error is `dataclasses.FrozenInstanceError`, imported when one is raised). `tests/test_dataclass.py` holds all of it to `dataclasses.dataclass`.

Supported: `frozen`, `eq`, `order` (the options trainlint uses) and `field(default, default_factory, init, repr,
hash, compare, metadata)`; a class with `__slots__`, `ClassVar` or `InitVar` annotations, or annotations Python does
not keep in `__annotations__`, is handed to `dataclasses.dataclass` (imported then), unless a base is one of ours.
"""

from __future__ import annotations

import _thread
import abc
import builtins
import operator
import sys
import types

__all__ = ["dataclass", "field", "replace"]


class _MissingType:
    """No default (the standard library's `MISSING` is another object: compare with ours)."""

    __slots__ = ()


class _FactoryType:
    __slots__ = ()

    def __repr__(self) -> str:  # how a signature shows a field with a default_factory
        return "<factory>"


MISSING = _MissingType()
_HAS_DEFAULT_FACTORY = _FactoryType()  # the __init__ default of a field with a default_factory
_EMPTY_METADATA = types.MappingProxyType({})


class Field:
    """One field, with the standard library's attributes."""

    __slots__ = ("name", "type", "default", "default_factory", "repr", "hash", "init", "compare", "metadata",
                 "kw_only")

    def __init__(self, default, default_factory, init, repr, hash, compare, metadata):  # noqa: A002 - its names
        self.name = None
        self.type = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.metadata = _EMPTY_METADATA if metadata is None else types.MappingProxyType(metadata)
        self.kw_only = False

    @property
    def _field_type(self):
        """What the standard library's `fields`, `asdict` and `replace` compare with: anyone calling them has
        imported `dataclasses`."""
        return sys.modules["dataclasses"]._FIELD

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r},type={self.type!r},default={self.default!r},"
                f"default_factory={self.default_factory!r},init={self.init!r},repr={self.repr!r},"
                f"hash={self.hash!r},compare={self.compare!r},metadata={self.metadata!r},kw_only=False)")

    def __set_name__(self, owner, name):  # a descriptor default learns its name, as with the standard library's
        set_name = getattr(type(self.default), "__set_name__", None)
        if set_name:
            set_name(self.default, owner, name)


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None, compare=True,  # noqa: A002
          metadata=None) -> Field:
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, hash, compare, metadata)


def replace(obj, /, **changes):
    """A copy of `obj` with `changes`, through its `__init__` (and `__post_init__`), as `dataclasses.replace`."""
    own = getattr(type(obj), "__dataclass_fields__", None)
    if own is None:
        raise TypeError("replace() should be called on dataclass instances")
    if not all(type(f) is Field for f in own.values()):  # the standard library's class: its own function
        import dataclasses
        return dataclasses.replace(obj, **changes)
    for f in own.values():
        if not f.init:
            if f.name in changes:
                error = TypeError if sys.version_info >= (3, 13) else ValueError
                raise error(f"field {f.name} is declared with init=False, it cannot be specified with replace()")
            continue
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


class _Params:
    """`__dataclass_params__`, with the standard library's attributes and repr for this Python."""

    _NAMES = ("init", "repr", "eq", "order", "unsafe_hash", "frozen") + (
        ("match_args", "kw_only", "slots", "weakref_slot") if sys.version_info >= (3, 12) else ())
    __slots__ = _NAMES

    def __init__(self, eq: bool, order: bool, frozen: bool):
        values = {"init": True, "repr": True, "eq": eq, "order": order, "unsafe_hash": False, "frozen": frozen,
                  "match_args": True, "kw_only": False, "slots": False, "weakref_slot": False}
        for name in self._NAMES:
            setattr(self, name, values[name])

    def __repr__(self) -> str:
        return "_DataclassParams(" + ",".join(f"{name}={getattr(self, name)!r}" for name in self._NAMES) + ")"


def dataclass(cls=None, /, *, frozen: bool = False, eq: bool = True, order: bool = False):
    def wrap(cls):
        return _process(cls, frozen, eq, order)

    return wrap if cls is None else wrap(cls)


# Annotations that make pseudo-fields (ClassVar, InitVar): the standard library handles those.
_PSEUDO_FIELD_PREFIXES = ("ClassVar", "typing.ClassVar", "t.ClassVar", "InitVar", "dataclasses.InitVar")


def _needs_standard_library(cls, annotations) -> bool:
    if annotations is None or "__slots__" in cls.__dict__:
        return True
    for annotation in annotations.values():
        if isinstance(annotation, str):
            if annotation.lstrip().startswith(_PSEUDO_FIELD_PREFIXES):
                return True
        elif type(annotation).__name__ == "InitVar" or getattr(annotation, "__origin__", annotation) is getattr(
                sys.modules.get("typing"), "ClassVar", MISSING):
            return True
    return False


def _standard_library(cls, frozen: bool, eq: bool, order: bool):
    """The standard library's dataclass, our `field()`s in the class turned into its own."""
    import dataclasses
    for name, value in list(cls.__dict__.items()):
        if type(value) is Field:
            setattr(cls, name, dataclasses.field(
                default=dataclasses.MISSING if value.default is MISSING else value.default,
                default_factory=dataclasses.MISSING if value.default_factory is MISSING else value.default_factory,
                init=value.init, repr=value.repr, hash=value.hash, compare=value.compare,
                metadata=dict(value.metadata)))
    return dataclasses.dataclass(cls, frozen=frozen, eq=eq, order=order)


def _own_field(value) -> Field | None:
    """Ours, or the standard library's `field()` / base-class field read as ours (None for its pseudo-fields)."""
    if type(value) is Field:
        return value
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is None or not isinstance(value, dataclasses.Field):
        return None
    if value._field_type not in (None, dataclasses._FIELD) or value.kw_only is True:
        return None

    def own(x):
        return MISSING if x is dataclasses.MISSING else x

    made = Field(own(value.default), own(value.default_factory), value.init, value.repr, value.hash, value.compare,
                 value.metadata or None)
    made.name, made.type = value.name, value.type
    return made


def _fields(cls, annotations: dict, frozen: bool) -> dict[str, Field]:
    """The class's fields as the standard library collects them: the bases' (in reverse method resolution
    order), then the class's own annotations, a redefined field keeping its place."""
    fields: dict[str, Field] = {}
    has_dataclass_bases, any_frozen_base, all_frozen_bases = False, False, True
    for base in cls.__mro__[-1:0:-1]:
        base_fields = getattr(base, "__dataclass_fields__", None)
        if base_fields is None:
            continue
        has_dataclass_bases = True
        for value in base_fields.values():
            f = _own_field(value)
            if f is None:
                raise TypeError(f"{cls.__name__}: base {base.__name__} has ClassVar, InitVar or keyword-only fields, "
                                "which trainlint's dataclass does not support")
            fields[f.name] = f
        if getattr(base, "__dataclass_params__").frozen:
            any_frozen_base = True
        else:
            all_frozen_bases = False
    standard = sys.modules.get("dataclasses")  # its field() objects are read too, when it is imported
    field_types = (Field, standard.Field) if standard is not None else (Field,)
    for name, annotation in annotations.items():
        default = getattr(cls, name, MISSING)
        given = isinstance(default, field_types)  # a field() as the class attribute
        f = _own_field(default) if given else None
        if f is None:
            if isinstance(default, types.MemberDescriptorType):
                default = MISSING
            f = Field(default, MISSING, True, True, None, True, None)
        f.name, f.type = name, annotation
        if f.default is not MISSING and f.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        fields[name] = f
        if given:
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    for name, value in cls.__dict__.items():
        if type(value) is Field and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    if has_dataclass_bases:
        if any_frozen_base and not frozen:
            raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
        if not all_frozen_bases and frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    return fields


def _process(cls, frozen: bool, eq: bool, order: bool):
    if order and not eq:
        raise ValueError("eq must be true if order is true")
    body = cls.__dict__
    annotations = body.get("__annotations__", {} if "__annotate__" not in body else None)
    if _needs_standard_library(cls, annotations):
        if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
            raise TypeError(f"{cls.__name__}: __slots__, ClassVar and InitVar are not supported by trainlint's "
                            "dataclass on a dataclass base")
        return _standard_library(cls, frozen, eq, order)
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
    by_name = _fields(cls, annotations, frozen)
    cls.__dataclass_fields__ = by_name
    cls.__dataclass_params__ = _Params(eq, order, frozen)
    fields = tuple(by_name.values())

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
    own_init = "__init__" in body  # (`body` is the live class dictionary)
    if not own_init:
        cls.__init__ = _lazy_init(cls, fields, frozen)
    for name, names in compiled.items():  # compiled on first use: most classes are never compared or hashed
        setattr(cls, name, _on_first_use(cls, name, names))
    if "__repr__" not in body:
        cls.__repr__ = _named(cls, _repr(tuple(f.name for f in fields if f.repr)), "__repr__")
    if frozen:
        names = tuple(f.name for f in fields)
        cls.__setattr__ = _named(cls, _frozen_setattr(cls, names), "__setattr__")
        cls.__delattr__ = _named(cls, _frozen_delattr(cls, names), "__delattr__")
    if sys.version_info >= (3, 13) and "__replace__" not in body:
        cls.__replace__ = replace
    if not getattr(cls, "__doc__"):
        cls.__doc__ = _LazyDoc(fields, own_init)
    if "__match_args__" not in body:
        cls.__match_args__ = tuple(f.name for f in fields if f.init)
    abc.update_abstractmethods(cls)
    return cls


class _LazyDoc:
    """The docstring the standard library gives a class without one, written when it is first read (a check never
    reads one): the type's `__doc__` hands a descriptor in the class dictionary the class, and the text then takes
    the descriptor's place."""

    __slots__ = ("fields", "own_init")

    def __init__(self, fields, own_init: bool):
        self.fields, self.own_init = fields, own_init

    def __get__(self, instance, owner):
        if owner is None:
            owner = type(instance)
        if self.own_init:
            import inspect
            text = owner.__name__ + str(inspect.signature(owner)).replace(" -> None", "")
        else:
            text = _doc(owner, self.fields)
        type.__setattr__(owner, "__doc__", text)
        return text


def _doc(cls, fields) -> str:
    """The docstring the standard library gives a class without one (its name and `inspect.signature`), written
    from the fields as the signature would show them."""
    parts = []
    for f in fields:
        if not f.init:
            continue
        text = f"{f.name}: {_annotation_text(f.type)}"  # as inspect.Parameter writes it
        if f.default is not MISSING:
            text += f" = {f.default!r}"
        elif f.default_factory is not MISSING:
            text += f" = {_HAS_DEFAULT_FACTORY!r}"
        parts.append(text)
    return f"{cls.__name__}({', '.join(parts)})"


def _annotation_text(annotation) -> str:
    if isinstance(annotation, str):  # what `from __future__ import annotations` leaves: `inspect` writes its repr
        return repr(annotation)
    import inspect
    return inspect.formatannotation(annotation)


def _frozen_error(message: str) -> Exception:
    from dataclasses import FrozenInstanceError  # the standard library's, so that `except` clauses name it
    return FrozenInstanceError(message)


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


# How many calls a stand-in (`__init__`, a comparison, `__hash__`) answers before the compiled method replaces it.
# Compiling one costs 0.1-0.8 ms (the first in a process more), a stand-in call 0.4-1.2 us more than the compiled
# method's: it pays after several hundred calls. The classes of a one-file check make at most a few hundred
# instances; a language server's run makes thousands.
_COMPILE_AFTER = 1000


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
    # Every field set from its parameter, nothing on the class to intercept a set (a custom __setattr__ on a class
    # that is not frozen, a descriptor named like a field): the instance dictionary can take them all at once, as
    # the generated __init__'s sets would leave it (in field order).
    at_once = all(init and factory is None for _, init, factory in steps) and len(steps) == len(params) and \
        (frozen or cls.__setattr__ is object.__setattr__) and not any(
            hasattr(type(klass.__dict__[name]), "__set__") or hasattr(type(klass.__dict__[name]), "__delete__")
            for name in params for klass in cls.__mro__ if name in klass.__dict__)

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
        if at_once and self.__class__ is cls:
            del values["self"]
            self.__dict__.update(values)
            if post_init:
                self.__post_init__()
            return None
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


_OPERATORS = {"__eq__": operator.eq, "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt,
              "__ge__": operator.ge}


def _on_first_use(cls, name: str, names: tuple[str, ...]):
    """A stand-in for a comparison method or `__hash__`: it answers as the generated one does (the fields' tuples
    compared or hashed; NotImplemented for another class), and after `_COMPILE_AFTER` calls compiles the real one
    (as the standard library writes it) and puts it on the class in its place."""
    calls = 0

    def values(obj) -> tuple:
        return tuple(getattr(obj, field) for field in names)

    def stand_in(self, *other):
        nonlocal calls
        calls += 1
        if calls > _COMPILE_AFTER:
            fn = _compile(cls, (), False, False, {name: names})[name]
            setattr(cls, name, fn)
            return fn(self, *other)
        if name == "__hash__":
            return hash(values(self))
        if other[0].__class__ is not self.__class__:
            return NotImplemented
        return _OPERATORS[name](values(self), values(other[0]))

    return _named(cls, stand_in, name)


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
            raise _frozen_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls, names: tuple[str, ...]):
    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise _frozen_error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__
