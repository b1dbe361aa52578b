"""JavaScript and TypeScript functions defined by assignment (`X.y = function`, `X.prototype.y =`,
`exports.f =`, `module.exports = {...}`), object-literal methods, functions assigned to consts and
the module pattern are definitions with scopes, in the leaves and in the facts (real parses)."""

from __future__ import annotations

import pytest

from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters

COUNTER = get_counter()
# Small leaves, so each definition stands in its own and its scope can be read off it.
MEMBERS = Parameters(minimum_chunk_token_length=0, maximum_chunk_token_length=48, leaf_minimums="")

MODULE_PATTERN = """\
var Common = require('../core/Common');

var Body = {};

module.exports = Body;

(function() {

    Body._inertiaScale = 4;

    /**
     * Sets the mass of the body.
     * @param {body} body
     */
    Body.setMass = function(body, mass) {
        var moment = body.inertia / (body.mass / 6);
        body.inertia = moment * (mass / 6);
        body.inverseInertia = 1 / body.inertia;
        body.mass = mass;
        body.inverseMass = 1 / body.mass;
        body.density = body.mass / body.area;
    };

    /** Moves a body by a given vector relative to its current position. */
    Body.translate = function(body, translation, updateVelocity) {
        Body.setPosition(body, Vector.add(body.position, translation), updateVelocity);
    };

})();
"""

PROTOTYPES = """\
'use strict';

/** A queue of jobs run one at a time. */
function Queue(options) {
  this.jobs = [];
  this.options = options || {};
}

/** Add a job at the end of the queue and start it when the queue is idle. */
Queue.prototype.push = function push(job) {
  this.jobs.push(job);
  if (this.jobs.length === 1) this.next();
  return this;
};

Queue.prototype = Object.assign(Queue.prototype, { size: 0 });

/** Read a whole stream into one buffer. */
exports.readAll = async (stream) => {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
};

module.exports.limit = 10;

module.exports = {
  /** Parse a header value into its parts. */
  parse(value) {
    return value.split(';').map((part) => part.trim());
  },
  /** Format parts into a header value. */
  format: function (parts) {
    return parts.filter(Boolean).join('; ');
  },
  name: 'header',
};
"""

TYPESCRIPT = """\
/** Helpers for routes. */
export const routes = {
  /** Join path segments with single slashes. */
  join(...parts: string[]): string {
    return parts.map((p) => p.replace(/^\\/+|\\/+$/g, '')).filter(Boolean).join('/');
  },
  /** Split a path into its segments. */
  split: (path: string): string[] => path.split('/').filter(Boolean).map((s) => decodeURIComponent(s)),
};

/** Match a path against a pattern with `:name` parameters. */
export const match = (pattern: string, path: string): Record<string, string> | null => {
  const names = pattern.split('/').filter((s) => s.startsWith(':'));
  return names.length ? Object.fromEntries(names.map((n) => [n.slice(1), path])) : null;
};

export default {
  /** Register a route with its handler. */
  add(path: string, handler: () => void): void {
    if (table.has(path)) throw new Error(`route ${path} is already registered`);
    table.set(path, handler);
  },
  /** Remove a route. */
  remove(path: string): boolean {
    return table.delete(path);
  },
};
"""


def cut(source: str, path: str, language: str):
    result = cut_file(source, path, language, MEMBERS, COUNTER)
    assert not result.error_lines, result.error_lines
    return result


def test_the_module_pattern_names_each_assigned_function() -> None:
    result = cut(MODULE_PATTERN, "body/Body.js", "javascript")
    scopes = {leaf.scope for leaf in result.leaves}
    assert {"body.Body.Body.setMass", "body.Body.Body.translate"} <= scopes
    set_mass = next(leaf for leaf in result.leaves if leaf.scope == "body.Body.Body.setMass")
    # The doc comment above stays with its function, and the function starts its leaf.
    assert set_mass.text.startswith("/**\n     * Sets the mass of the body.")
    found = {d.scope: d for d in result.definitions}
    assert found["body.Body.Body.setMass"].kind == "function"
    assert found["body.Body.Body.setMass"].name == "setMass"
    assert found["body.Body.Body.setMass"].signature == "Body.setMass = function(body, mass)"
    assert found["body.Body.Body.setMass"].doc == "Sets the mass of the body."
    assert found["body.Body.Body.translate"].doc.startswith("Moves a body by a given vector")
    # A value that is not a function is not a definition.
    assert "body.Body.Body._inertiaScale" not in found and "body.Body.exports" not in found


def test_prototypes_exports_and_module_exports_objects_are_definitions() -> None:
    result = cut(PROTOTYPES, "lib/queue.js", "javascript")
    found = {d.scope: d for d in result.definitions}
    assert found["lib.queue.Queue.push"].kind == "function"
    assert found["lib.queue.Queue.push"].doc.startswith("Add a job at the end")
    assert found["lib.queue.readAll"].signature.startswith("exports.readAll = async (stream) =>")
    assert found["lib.queue.exports"].kind == "object"
    assert found["lib.queue.exports.parse"].kind == "method"
    assert found["lib.queue.exports.format"].kind == "method"
    assert found["lib.queue.exports.format"].doc == "Format parts into a header value."
    # `X.prototype = Object.assign(...)`, `module.exports.limit = 10` and `name: 'header'` define nothing.
    assert "lib.queue.Queue" in found and found["lib.queue.Queue"].kind == "function"
    assert "lib.queue.limit" not in found and "lib.queue.exports.name" not in found
    scopes = [leaf.scope for leaf in result.leaves]
    for scope in ("lib.queue.Queue.push", "lib.queue.readAll", "lib.queue.exports.parse"):
        assert scope in scopes


def test_typescript_object_literals_and_default_exports_hold_methods() -> None:
    result = cut(TYPESCRIPT, "src/routes.ts", "typescript")
    found = {d.scope: d for d in result.definitions}
    assert found["src.routes.routes"].kind == "object"
    assert found["src.routes.routes.join"].kind == "method"
    assert found["src.routes.routes.split"].doc == "Split a path into its segments."
    assert found["src.routes.match"].kind == "function"
    assert found["src.routes.default.add"].doc == "Register a route with its handler."
    scopes = {leaf.scope for leaf in result.leaves}
    assert {"src.routes.routes.join", "src.routes.routes.split", "src.routes.default.add"} <= scopes


@pytest.mark.parametrize(
    "source",
    [
        "run({ onDone: function () { return 1; } });\n",  # a call's argument: not the module's
        "x.y = 5;\nitems[0] = function () {};\n",  # a value, and a computed member
        "(function () { var a = 1; })();\n",  # the module pattern with nothing in it
    ],
)
def test_other_assignments_and_calls_define_nothing(source: str) -> None:
    result = cut(source, "a.js", "javascript")
    assert [d.kind for d in result.definitions] == []
