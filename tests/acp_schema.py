"""The official ACP v1 JSON Schema as the test oracle for every message the agent writes.

The schema file is never copied into this repository. It comes from its npm package,
`@agentclientprotocol/sdk` 2.4.0 (file `schema/v1/schema.json`), pinned with acpx in
tests/npm/package.json and package-lock.json and installed by the same `npm ci` on first use
(tests/npm_oracles.py). Where it is looked for, in order:
1. the file named by `ACP_SCHEMA_PATH` (optional; used as is, never a fallback);
2. tests/npm/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json, after `npm ci`
   there when Node.js is installed and the file is not there yet;
3. `<repo>/../shared/acp-schema/v1/schema.json` (optional, a copy beside the clone).
With none of them (no Node.js, no copy), a test that needs the schema is skipped with what to
install, except under CI (`CI` set), where it fails. The npm and shared copies must have the
pinned sha256 (`SCHEMA_SHA256`).

    validator = AgentWireValidator(strict_roots=True)
    validator.note_client_message(initialize_request)   # so its response can be matched
    validator.check(message_written_by_the_agent)        # AssertionError when invalid
    validator.check_lines(raw_lines)                     # bytes or str, one message a line

What `check` validates, for a message written by the agent:
- the envelope against the schema root's branch for the agent and the message's kind
  (`Agent` -> Request / Response / Notification, or `ProtocolLevel` for `$/...`): a subset
  of the root's `anyOf`, so stricter than the root (a request cannot pass as a notification);
- a request's or notification's `params` against the def whose `x-method` is the method,
  taken from the defs the root lists for agent-sent messages (e.g. `session/update` ->
  `SessionNotification`); an unknown non-extension method is an error;
- a response's `result` against the response def of the method the client called (recorded
  by `note_client_message`), an `error` against `Error`; a result for an id the client never
  sent, or an id answered twice, is an error.
With `strict_roots=True` it also flags keys a spec type does not declare (ACP: "MUST NOT add
any custom fields at the root of a type that's part of the specification"); `_meta` and
free-form maps are exempt. Compiled validators are cached at module level.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match
from npm_oracles import INSTALL_HINT, NPM_DIR, installed, node_problem
from referencing import Registry
from referencing.jsonschema import DRAFT202012

__all__ = [
    "SCHEMA_ENV",
    "SCHEMA_PACKAGE",
    "SCHEMA_SHA256",
    "AgentWireValidator",
    "MethodDefs",
    "ObjectShape",
    "SchemaNotFound",
    "SchemaUnavailable",
    "agent_sent_defs",
    "assert_matches_def",
    "client_sent_defs",
    "load_schema",
    "npm_schema_path",
    "object_shape",
    "schema",
    "schema_path",
    "shared_schema_path",
    "undeclared_keys",
]

SCHEMA_ENV = "ACP_SCHEMA_PATH"
SCHEMA_PACKAGE = "@agentclientprotocol/sdk@2.4.0"
SCHEMA_SHA256 = "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a"
_SCHEMA_URI = "urn:acp-bridge:official-acp-schema:v1"
_JSONRPC_KEYS = frozenset({"jsonrpc", "id", "method", "params", "result", "error"})


class SchemaNotFound(FileNotFoundError):
    """The official ACP schema file is not where the tests look for it, or not that file."""


class SchemaUnavailable(SchemaNotFound):
    """No copy of the schema here, and no Node.js to install it: a skip outside CI."""


def npm_schema_path() -> Path:
    """Where `npm ci` in tests/npm puts the schema of the pinned `@agentclientprotocol/sdk`."""
    package = NPM_DIR / "node_modules" / "@agentclientprotocol" / "sdk"
    return package / "schema" / "v1" / "schema.json"


def shared_schema_path() -> Path:
    """The optional copy beside the clone: `<repo>/../shared/acp-schema/v1/schema.json`."""
    repo = Path(__file__).resolve().parent.parent
    return repo.parent / "shared" / "acp-schema" / "v1" / "schema.json"


def schema_path(*, install: bool = True) -> Path:
    """The schema file to use: `$ACP_SCHEMA_PATH`, else the npm copy (installed with `npm ci`
    first when Node.js is there and `install`), else `../shared`'s copy.

    Raises SchemaNotFound when there is none; `schema()` turns that into a skip outside CI.
    """
    configured = os.environ.get(SCHEMA_ENV)
    if configured:
        return Path(configured)
    npm = npm_schema_path()
    if npm.is_file():
        return npm
    if install and node_problem() is None:
        return installed(npm, f"the official ACP schema ({SCHEMA_PACKAGE})")
    shared = shared_schema_path()
    if shared.is_file():
        return shared
    raise SchemaUnavailable(
        f"the official ACP v1 JSON schema ({SCHEMA_PACKAGE}, schema/v1/schema.json) comes "
        f"from npm and Node.js is not usable ({node_problem()}): {INSTALL_HINT}; "
        f"or set {SCHEMA_ENV} to that schema file"
    )


def load_schema(path: Path) -> dict[str, Any]:
    """Reads and sanity-checks the schema file at `path` (uncached)."""
    if not path.is_file():
        raise SchemaNotFound(
            f"the official ACP v1 JSON schema is not at {path}: set {SCHEMA_ENV} to the "
            f"schema file, or unset it to use {SCHEMA_PACKAGE} from tests/npm"
        )
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not (
        isinstance(loaded, dict)
        and "2020-12" in str(loaded.get("$schema", ""))
        and isinstance(loaded.get("$defs"), dict)
        and isinstance(loaded.get("anyOf"), list)
    ):
        raise SchemaNotFound(f"{path} is not the ACP v1 JSON schema (draft 2020-12 with $defs)")
    return loaded


def _check_pinned(path: Path, data: bytes) -> None:
    if os.environ.get(SCHEMA_ENV):
        return  # the caller's own choice of schema file
    digest = hashlib.sha256(data).hexdigest()
    if digest != SCHEMA_SHA256:
        raise SchemaNotFound(
            f"{path} has sha256 {digest}, not the pinned {SCHEMA_PACKAGE} schema's "
            f"{SCHEMA_SHA256}: run `npm ci` in {NPM_DIR} again"
        )


_outcome: list[dict[str, Any] | BaseException] = []


def schema() -> dict[str, Any]:
    """The official schema, found and loaded once per test session.

    Missing (no Node.js, no copy): the calling test is skipped with what to install, or
    fails under CI. Any other problem (a failed `npm ci`, a wrong file) fails every caller
    with the same message, without trying again.
    """
    if not _outcome:
        try:
            path = schema_path()
            loaded = load_schema(path)
            _check_pinned(path, path.read_bytes())
            _outcome.append(loaded)
        except (SchemaNotFound, AssertionError) as exc:
            _outcome.append(exc)
    outcome = _outcome[0]
    if isinstance(outcome, dict):
        return outcome
    if isinstance(outcome, SchemaUnavailable):
        if not os.environ.get("CI"):
            pytest.skip(str(outcome))
        raise SchemaUnavailable(f"CI must run this test: {outcome}")
    raise outcome


# --- compiled validators -----------------------------------------------------------------

_STANDARD_ONE_OF = Draft202012Validator.VALIDATORS["oneOf"]
_NO_CONST = object()


def _selected_branch(node: dict[str, Any], branches: list[Any], instance: Any) -> int | None:
    """The one branch of a discriminated `oneOf` that `instance`'s tag selects, if every
    branch pins the tag with `properties.<tag>.const` and exactly one matches."""
    discriminator = node.get("discriminator")
    tag = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
    if not (tag and isinstance(instance, dict) and tag in instance):
        return None
    consts = [
        branch.get("properties", {}).get(tag, {}).get("const", _NO_CONST)
        if isinstance(branch, dict)
        else _NO_CONST
        for branch in branches
    ]
    if _NO_CONST in consts or consts.count(instance[tag]) != 1:
        return None
    return consts.index(instance[tag])


def _tagged_one_of(
    validator: Any, branches: list[Any], instance: Any, node: dict[str, Any]
) -> Iterator[ValidationError]:
    """`oneOf` that evaluates only the branch a `discriminator` tag selects.

    Exact, not an approximation: it applies only when every branch pins the tag with
    `properties.<tag>.const` and exactly one branch's const equals the instance's tag, so
    every other branch fails on the tag anyway. It makes validation many times faster and
    the error point at the selected variant ("'title' is a required property").
    """
    selected = _selected_branch(node, branches, instance)
    if selected is None:
        yield from _STANDARD_ONE_OF(validator, branches, instance, node)
    else:
        yield from validator.descend(instance, branches[selected], schema_path=selected)


_Validator = validators.extend(Draft202012Validator, {"oneOf": _tagged_one_of})


@functools.cache
def _registry() -> Registry[Any]:
    resource = DRAFT202012.create_resource(schema())
    return Registry().with_resource(_SCHEMA_URI, resource)


@functools.cache
def _validator(pointer: str) -> Any:
    """A compiled validator for the schema node at JSON pointer `pointer` ("" is the root)."""
    return _Validator({"$ref": f"{_SCHEMA_URI}#{pointer}"}, registry=_registry())


@functools.cache
def _header_validator(branch: int) -> Any:
    """The root branch `branch` without its `anyOf` (its own jsonrpc/type constraints)."""
    own = {k: v for k, v in schema()["anyOf"][branch].items() if k != "anyOf"}
    return _Validator(own, registry=_registry())


def _def_pointer(name: str) -> str:
    if name not in schema()["$defs"]:
        raise AssertionError(f"the ACP schema has no def named {name!r}")
    return f"/$defs/{name}"


def _node(pointer: str) -> Any:
    node: Any = schema()
    for part in pointer.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


# --- readable failures -------------------------------------------------------------------


def _where(path: Iterable[Any], prefix: str = "") -> str:
    where = prefix
    for part in path:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where or "(root)"


def _shorten(value: Any, limit: int = 600) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= limit else text[:limit] + " ..."


def _first_error(pointer: str, instance: Any) -> ValidationError | None:
    validator = _validator(pointer)
    if validator.is_valid(instance):
        return None
    error: ValidationError | None = best_match(validator.iter_errors(instance))
    return error


def assert_matches_def(
    name: str, instance: Any, *, strict_roots: bool = False, label: str = ""
) -> None:
    """Raises AssertionError unless `instance` is valid against `$defs/<name>` (and, with
    `strict_roots`, declares no key the def does not)."""
    pointer = _def_pointer(name)
    error = _first_error(pointer, instance)
    if error is not None:
        raise AssertionError(
            f"{label or 'value'} does not match ACP def {name} at "
            f"{_where(error.absolute_path)}: {error.message}\n  value: {_shorten(instance)}"
        )
    if strict_roots:
        extra = undeclared_keys(name, instance)
        if extra:
            raise AssertionError(
                f"{label or 'value'} adds keys that ACP def {name} does not declare "
                f"(custom data belongs in _meta): {', '.join(extra)}\n"
                f"  value: {_shorten(instance)}"
            )


# --- undeclared keys (strict roots) --------------------------------------------------------


@dataclass
class _Level:
    """What the schema declares for one object/array of the instance."""

    properties: dict[str, list[str]] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    items: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    typed: bool = False
    open: bool = False


def _gather(pointer: str, instance: Any, level: _Level) -> None:
    node = _node(pointer)
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        _gather(ref[1:], instance, level)
    for index, _ in enumerate(node.get("allOf", ())):
        _gather(f"{pointer}/allOf/{index}", instance, level)
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword, ())
        selected = _selected_branch(node, branches, instance) if keyword == "oneOf" else None
        for index, _ in enumerate(branches):
            branch = f"{pointer}/{keyword}/{index}"
            if selected is not None:
                if index == selected:
                    _gather(branch, instance, level)
            elif _validator(branch).is_valid(instance):
                _gather(branch, instance, level)
    properties = node.get("properties")
    if isinstance(properties, dict) and properties:
        level.typed = True
        for key in properties:
            level.properties.setdefault(key, []).append(f"{pointer}/properties/{_escape(key)}")
    required = node.get("required")
    if isinstance(required, list):
        level.required.update(key for key in required if isinstance(key, str))
    extra = node.get("additionalProperties")
    if extra is True or node.get("unevaluatedProperties") is True:
        level.open = True
    elif isinstance(extra, dict):
        level.values.append(f"{pointer}/additionalProperties")
    if isinstance(node.get("items"), dict):
        level.items.append(f"{pointer}/items")


def _walk(pointer: str, instance: Any, path: str, found: list[str]) -> None:
    level = _Level()
    _gather(pointer, instance, level)
    if isinstance(instance, dict):
        for key, value in instance.items():
            if key == "_meta":
                continue
            where = f"{path}.{key}" if path else key
            if key in level.properties:
                for sub in level.properties[key]:
                    _walk(sub, value, where, found)
            elif level.values:
                for sub in level.values:
                    _walk(sub, value, where, found)
            elif level.typed and not level.open:
                found.append(where)
    elif isinstance(instance, list):
        for index, item in enumerate(instance):
            for sub in level.items:
                _walk(sub, item, f"{path}[{index}]", found)


def undeclared_keys(name: str, instance: Any) -> list[str]:
    """Paths of keys in `instance` that the spec type (and the types inside it) do not
    declare; `_meta` contents and free-form maps are never flagged."""
    found: list[str] = []
    _walk(_def_pointer(name), instance, "", found)
    return sorted(set(found))


@dataclass(frozen=True)
class ObjectShape:
    """What a def declares for one object instance (following the branches it matches):
    each property's schema nodes, and the required keys."""

    properties: Mapping[str, tuple[Mapping[str, Any], ...]]
    required: frozenset[str]


def object_shape(name: str, instance: Any) -> ObjectShape:
    level = _Level()
    _gather(_def_pointer(name), instance, level)
    return ObjectShape(
        properties={
            key: tuple(_node(pointer) for pointer in pointers)
            for key, pointers in level.properties.items()
        },
        required=frozenset(level.required),
    )


# --- which def a method's message uses ----------------------------------------------------


@dataclass(frozen=True)
class MethodDefs:
    """Def names by `x-method` for the messages one side sends."""

    requests: Mapping[str, str]
    responses: Mapping[str, str]
    notifications: Mapping[str, str]


def _referenced_method_defs(node: Any) -> dict[str, str]:
    defs = schema()["$defs"]
    found: dict[str, str] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = ref.removeprefix("#/$defs/")
                method = defs.get(target, {}).get("x-method")
                if isinstance(method, str):
                    found[method] = target
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return found


def _root_branch(title: str) -> int:
    for index, branch in enumerate(schema()["anyOf"]):
        if branch.get("title") == title:
            return index
    raise AssertionError(f"the ACP schema root has no {title!r} branch")


def _kind_branch(side_branch: int, kind: str) -> int:
    for index, sub in enumerate(schema()["anyOf"][side_branch]["anyOf"]):
        if sub.get("title") == kind:
            return index
    raise AssertionError(f"the ACP schema root branch {side_branch} has no {kind!r} branch")


def _sent_defs(side: str) -> MethodDefs:
    defs = schema()["$defs"]
    protocol = _referenced_method_defs(schema()["anyOf"][_root_branch("ProtocolLevel")])
    return MethodDefs(
        requests=_referenced_method_defs(defs[f"{side}Request"]),
        responses=_referenced_method_defs(defs[f"{side}Response"]),
        notifications={**_referenced_method_defs(defs[f"{side}Notification"]), **protocol},
    )


@functools.cache
def agent_sent_defs() -> MethodDefs:
    """What the agent may send: requests the client handles, its responses, notifications."""
    return _sent_defs("Agent")


@functools.cache
def client_sent_defs() -> MethodDefs:
    return _sent_defs("Client")


# --- the validator -----------------------------------------------------------------------


def _id_key(request_id: Any) -> str:
    # JSON identity: 1, "1" and true are different ids.
    return json.dumps(request_id, sort_keys=True)


def _decode(message: Any) -> Any:
    if isinstance(message, bytes | bytearray):
        message = message.decode("utf-8")
    if isinstance(message, str):
        return json.loads(message)
    return message


class AgentWireValidator:
    """Validates messages written by the agent against the official ACP v1 schema."""

    def __init__(self, *, strict_roots: bool = False) -> None:
        self.strict_roots = strict_roots
        self.checked = 0
        self._pending: dict[str, str] = {}
        self._answered: set[str] = set()

    def note_client_message(self, message: Any) -> None:
        """Records a client request (id -> method), so the agent's response can be matched."""
        decoded = _decode(message)
        if isinstance(decoded, dict) and "id" in decoded and isinstance(decoded.get("method"), str):
            self._pending[_id_key(decoded["id"])] = decoded["method"]

    def check_lines(self, lines: Iterable[bytes | str]) -> int:
        """Checks every non-empty line (one JSON message each); returns how many."""
        count = 0
        for number, line in enumerate(lines, 1):
            text = line.decode("utf-8") if isinstance(line, bytes | bytearray) else line
            if not text.strip():
                continue
            try:
                message = json.loads(text)
            except json.JSONDecodeError as exc:
                raise AssertionError(f"agent line {number} is not JSON ({exc}): {text!r}") from None
            self.check(message)
            count += 1
        return count

    def check(self, message: Any) -> None:
        """Raises AssertionError, naming the message and the path, unless it is valid ACP."""
        message = _decode(message)
        self.checked += 1
        if not isinstance(message, dict):
            self._fail("a message that is not a JSON object", "(root)", "not an object", message)
        if "method" in message:
            self._check_call(message)
        elif "result" in message or "error" in message:
            self._check_response(message)
        else:
            self._fail("a message", "(root)", "neither request, notification nor response", message)

    # -- requests and notifications --

    def _check_call(self, message: dict[str, Any]) -> None:
        method = message["method"]
        is_request = "id" in message
        kind = "request" if is_request else "notification"
        label = f"{method!r} {kind}"
        defs = agent_sent_defs()
        table = defs.requests if is_request else defs.notifications
        if isinstance(method, str) and method.startswith("$/"):
            self._check_at(f"/anyOf/{_root_branch('ProtocolLevel')}", message, label, "")
        else:
            self._check_envelope("Request" if is_request else "Notification", message, label)
        if isinstance(method, str) and method.startswith("_"):
            return  # an extension method: only the envelope is specified
        def_name = table.get(method) if isinstance(method, str) else None
        if def_name is None:
            self._fail(label, "method", f"the agent may not send a {kind} {method!r}", message)
        self._check_def(def_name, message.get("params"), label, "params", message)
        if self.strict_roots:
            self._check_envelope_keys(message, label)

    # -- responses --

    def _check_response(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        key = _id_key(request_id)
        method = self._pending.pop(key, None)
        label = (
            f"response to {method!r} (id {request_id!r})"
            if method
            else f"response (id {request_id!r})"
        )
        self._check_envelope("Response", message, label)
        if key in self._answered and request_id is not None:
            self._fail(label, "id", "this request id was already answered", message)
        if method is not None:
            self._answered.add(key)
        if "error" in message:
            self._check_def("Error", message["error"], label, "error", message)
        elif method is None:
            self._fail(label, "id", "a result for an id the client never sent", message)
        elif not method.startswith("_"):
            def_name = agent_sent_defs().responses.get(method)
            if def_name is None:
                self._fail(label, "result", f"{method!r} has no result in ACP v1", message)
            self._check_def(def_name, message["result"], label, "result", message)
        if self.strict_roots:
            self._check_envelope_keys(message, label)

    # -- helpers --

    def _check_envelope(self, kind: str, message: dict[str, Any], label: str) -> None:
        side = _root_branch("Agent")
        error = _first_error(f"/anyOf/{side}/anyOf/{_kind_branch(side, kind)}", message)
        header = _header_validator(side)
        if error is None and not header.is_valid(message):
            error = best_match(header.iter_errors(message))
        if error is not None:
            self._fail(label, _where(error.absolute_path), f"envelope: {error.message}", message)

    def _check_at(self, pointer: str, instance: Any, label: str, prefix: str) -> None:
        error = _first_error(pointer, instance)
        if error is not None:
            self._fail(label, _where(error.absolute_path, prefix), error.message, instance)

    def _check_def(
        self, def_name: str, value: Any, label: str, prefix: str, message: dict[str, Any]
    ) -> None:
        error = _first_error(_def_pointer(def_name), value)
        if error is not None:
            where = _where(error.absolute_path, prefix)
            self._fail(label, where, f"{error.message} (ACP def {def_name})", message)
        if self.strict_roots:
            extra = undeclared_keys(def_name, value)
            if extra:
                where = ", ".join(f"{prefix}.{path}" for path in extra)
                problem = f"key not declared by ACP def {def_name} (custom data belongs in _meta)"
                self._fail(label, where, problem, message)

    def _check_envelope_keys(self, message: dict[str, Any], label: str) -> None:
        extra = sorted(set(message) - _JSONRPC_KEYS)
        if extra:
            self._fail(label, ", ".join(extra), "not a JSON-RPC envelope key", message)

    def _fail(self, label: str, where: str, problem: str, message: Any) -> NoReturn:
        raise AssertionError(
            f"agent message #{self.checked} ({label}) is not valid ACP v1 at {where}: "
            f"{problem}\n  message: {_shorten(message)}"
        )
