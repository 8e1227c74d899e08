"""The one base model every ACP v1 type derives from, and the two functions that cross the wire.

Contract:
- Python side: snake_case field names; wire side: camelCase aliases (PROTO-CAMEL-001).
- Every type carries `field_meta`, which is `_meta` on the wire (PROTO-META-001). `_meta` is
  opaque: it never feeds or overrides another field (PROTO-META-002).
- Unknown input fields are dropped, never stored, so they can never be emitted
  (PROTO-UNKNOWN-001, PROTO-ROOT-001).
- `to_wire` emits only fields that were set (plus union tags), so optional absent fields are
  omitted while an explicit `None` (e.g. "clear the title") stays a JSON `null`.
- `from_wire` reads by wire alias only and applies the schema's lenient-decoding hints
  (`x-deserialize-*`, PROTO-LENIENT-001); constructing a model in Python stays strict, so
  our own output is never silently "repaired".
- Validators are built on first use (`defer_build`), which keeps the import cheap
  (PROTO-COLD-001).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import (
    Annotated,
    Any,
    ClassVar,
    Literal,
    TypeAlias,
    TypeVar,
    get_args,
    get_origin,
    overload,
)

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticUseDefault

__all__ = [
    "UNION_CONFIG",
    "WIRE_CONFIG",
    "AcpModel",
    "Bool",
    "DefaultOnError",
    "EmptyOnError",
    "Meta",
    "NullAsEmpty",
    "NullAsEmptyObject",
    "SkipInvalidItems",
    "UInt16",
    "UInt32",
    "UInt64",
    "from_wire",
    "to_wire",
]

# Set in the validation context by `from_wire`: only then do the lenient hints apply.
_FROM_WIRE = "acp_bridge.from_wire"
_WIRE_CONTEXT: dict[str, bool] = {_FROM_WIRE: True}

WIRE_CONFIG = ConfigDict(
    alias_generator=to_camel,  # PROTO-CAMEL-001
    validate_by_name=True,  # snake_case in Python; `from_wire` turns this off
    validate_by_alias=True,
    serialize_by_alias=True,
    extra="ignore",  # PROTO-UNKNOWN-001: dropped, so never re-emitted (PROTO-ROOT-001)
    frozen=True,  # wire messages are values
    defer_build=True,  # PROTO-COLD-001: no validator is built at import
)
"""The configuration of every ACP model (see the module docstring)."""

UNION_CONFIG = ConfigDict(defer_build=True)
"""The configuration of the module-level union adapters: built on first use, like the models."""

Meta: TypeAlias = dict[str, JsonValue] | None
"""The `_meta` value: an object whose keys the bridge never interprets, or null."""

# JSON booleans only: pydantic's lax mode would read "yes" or 1 as true.
Bool = Annotated[bool, Field(strict=True)]
UInt16 = Annotated[int, Field(ge=0, le=0xFFFF)]
UInt32 = Annotated[int, Field(ge=0, le=0xFFFF_FFFF)]
UInt64 = Annotated[int, Field(ge=0, le=0xFFFF_FFFF_FFFF_FFFF)]


def _reading_wire(info: ValidationInfo) -> bool:
    context = info.context
    return isinstance(context, dict) and bool(context.get(_FROM_WIRE))


def _default_on_error(
    value: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> object:
    try:
        return handler(value)
    except ValidationError:
        if _reading_wire(info):
            raise PydanticUseDefault() from None
        raise


def _empty_on_error(
    value: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> object:
    try:
        return handler(value)
    except ValidationError:
        if _reading_wire(info):
            return []
        raise


def _skip_invalid_items(
    value: object, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> object:
    try:
        return handler(value)
    except ValidationError:
        if not (_reading_wire(info) and isinstance(value, list)):
            raise
    kept: list[object] = []
    for item in value:
        try:
            kept.extend(handler([item]))
        except ValidationError:
            continue
    return kept


def _null_as_empty(empty: Callable[[], object]) -> BeforeValidator:
    return BeforeValidator(lambda value: empty() if value is None else value)


DefaultOnError = WrapValidator(_default_on_error)
"""Schema `x-deserialize-default-on-error`: a malformed value read from the wire becomes the
field's default instead of failing the whole message."""

EmptyOnError = WrapValidator(_empty_on_error)
"""`x-deserialize-default-on-error` on a required array: malformed becomes `[]`."""

SkipInvalidItems = WrapValidator(_skip_invalid_items)
"""Schema `x-deserialize-skip-invalid-items`: bad array items read from the wire are dropped."""

NullAsEmpty = _null_as_empty(list)
"""Schema `x-deserialize-default-on-null` on an array: `null` reads as `[]`."""

NullAsEmptyObject = _null_as_empty(dict)
"""Schema `x-deserialize-default-on-null` on a string map: `null` reads as `{}`."""


def _is_tag(annotation: object) -> bool:
    return get_origin(annotation) is Literal and len(get_args(annotation)) == 1


class AcpModel(BaseModel):
    """Base of every ACP v1 type. Construct with snake_case names; cross the wire with
    `to_wire` / `from_wire`."""

    model_config = WIRE_CONFIG

    # Union tags (single-value Literal fields) are emitted even when left at their default.
    __acp_tags__: ClassVar[frozenset[str]] = frozenset()

    field_meta: Annotated[Meta, DefaultOnError] = Field(default=None, alias="_meta")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.__acp_tags__ = frozenset(
            name for name, field in cls.model_fields.items() if _is_tag(field.annotation)
        )

    def model_post_init(self, context: Any, /) -> None:
        # The schema requires every union tag; `to_wire` drops unset fields, so mark them set.
        if self.__acp_tags__:
            self.__pydantic_fields_set__.update(self.__acp_tags__)


M = TypeVar("M", bound=AcpModel)
T = TypeVar("T")


def to_wire(model: AcpModel) -> dict[str, JsonValue]:
    """The JSON object for `model`: camelCase keys, `_meta` when set, absent fields omitted."""
    wire: dict[str, JsonValue] = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return wire


@overload
def from_wire(target: type[M], params: object) -> M: ...
@overload
def from_wire(target: TypeAdapter[T], params: object) -> T: ...
def from_wire(target: type[M] | TypeAdapter[T], params: object) -> M | T:
    """Reads a wire value (a request's `params`, a `result`, a union member) into `target`.

    Absent params (`None`) read as `{}` for a model. Keys are matched by wire alias only;
    unknown keys are ignored. Raises `pydantic.ValidationError` (the JSON-RPC layer answers
    it with -32602 and field locations).
    """
    if isinstance(target, TypeAdapter):
        return target.validate_python(params, context=_WIRE_CONTEXT, by_alias=True, by_name=False)
    return target.model_validate(
        {} if params is None else params, context=_WIRE_CONTEXT, by_alias=True, by_name=False
    )
