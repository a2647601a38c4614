import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = (doc: unknown) => string;
type RouteDefinition = Parameters<ReturnType<SerializerFactory>>[0];

/** A union of one object shape and one array shape (the publish answer: one message, or one per endpoint). */
function objectOrArray(schema: unknown): { object: unknown; array: unknown } | undefined {
  const anyOf = (schema as { anyOf?: { type?: unknown }[] } | undefined)?.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return undefined;
  const object = anyOf.find((s) => s.type === "object");
  const array = anyOf.find((s) => s.type === "array");
  return object && array ? { object, array } : undefined;
}

/**
 * Fastify's own serializer compiler (fast-json-stringify), with two changes of when and how, never of what is
 * written (docs/architecture.md "Wire shapes"):
 * - a route's serializer is compiled on the route's first answer, not at start-up: a node compiles only the
 *   serializers of the routes it answers;
 * - an answer that is an object or an array of objects (the publish answer) is written by the branch its JavaScript
 *   type picks. fast-json-stringify would pick the branch of a union by validating the answer against each with
 *   its own Ajv instance, which held ~25 MiB per union in the server (bench P4's peak RSS went from 288 to 324 MiB).
 */
export function lazySerializers(): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    const compileRoute = (route: RouteDefinition): Serializer => {
      const branches = objectOrArray(route.schema);
      if (!branches) return compile(route);
      const object = compile({ ...route, schema: branches.object });
      const array = compile({ ...route, schema: branches.array });
      return (doc) => (Array.isArray(doc) ? array(doc) : object(doc));
    };
    return (route) => {
      let serialize: Serializer | undefined;
      return (doc) => (serialize ??= compileRoute(route))(doc);
    };
  };
}
