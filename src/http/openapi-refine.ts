// Makes the generated OpenAPI document one that client generators build good code from, without
// asking every route for more than its TypeBox schemas:
// - a schema with a `title` (anywhere) becomes a named component, referenced by `$ref`; the request
//   body and the JSON answer of an operation without one are named after the operation;
// - every error answer becomes a named error component whose `code` is an enum: the codes the
//   route declared (errorResponse(description, codes)), else the service's codes of that status;
// - every JSON request body and answer gets an example (a schema's own `examples` first);
// - operations guarded by secret_token also declare it as a required query parameter.
// Only the published document changes: Fastify validates and serializes with the routes' schemas.
import { ERROR_CODES } from './errors.ts';

type Json = Record<string, unknown>;
type Doc = Json & { paths?: Record<string, Record<string, Json>>; components?: Json & { schemas?: Record<string, Json> } };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const STATUS_NAMES: Record<string, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  412: 'PreconditionFailed',
  413: 'PayloadTooLarge',
  414: 'UriTooLong',
  415: 'UnsupportedMediaType',
  422: 'Validation',
  428: 'PreconditionRequired',
  429: 'TooManyRequests',
  503: 'Unavailable',
};

const pascal = (s: string) => s.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const SECRET_TOKEN_PARAMETER = {
  name: 'secret_token',
  in: 'query',
  required: true,
  description: 'The shared secret of the locker operations (SECRET_TOKEN); also documented as the secretToken security scheme.',
  schema: { type: 'string', minLength: 16 },
};

/** An error body of the kit: { message, code, errors? }, possibly with `error` (radio). */
function isErrorBody(schema: Json): boolean {
  const props = schema.properties;
  const required = schema.required;
  return isObject(props) && isObject(props.message) && isObject(props.code) && Array.isArray(required) && required.includes('code');
}

class Components {
  readonly schemas: Record<string, Json>;
  constructor(existing: Record<string, Json> | undefined) {
    this.schemas = existing ?? {};
  }

  /** Registers schema under name (or name2, name3... when that name holds another shape); returns a $ref. */
  add(name: string, schema: Json): Json {
    const text = JSON.stringify(schema);
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? name : `${name}${n}`;
      const held = this.schemas[candidate];
      if (held === undefined) this.schemas[candidate] = schema;
      else if (JSON.stringify(held) !== text) continue;
      return { $ref: `#/components/schemas/${candidate}` };
    }
  }

  resolve(schema: Json): Json {
    const ref = schema.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return this.schemas[ref.slice(21)] ?? {};
    return schema;
  }
}

/** Replaces titled sub-schemas (and, given a fallback name, the object itself) by references. */
function hoist(components: Components, schema: unknown, fallback: string | null, topLevel = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => hoist(components, s, null));
  if (!isObject(schema) || typeof schema.$ref === 'string') return schema;
  const out: Json = { ...schema };
  for (const key of ['items', 'additionalProperties', 'not', 'contains']) {
    if (isObject(out[key])) out[key] = hoist(components, out[key], null);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) {
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => hoist(components, s, null));
  }
  for (const key of ['properties', 'patternProperties']) {
    if (isObject(out[key])) {
      out[key] = Object.fromEntries(Object.entries(out[key]).map(([k, s]) => [k, hoist(components, s, null)]));
    }
  }
  // The description of an answer's schema is the answer's own description, not the model's.
  if (topLevel) delete out.description;
  if (typeof out.title === 'string') return components.add(pascal(out.title), out);
  if (fallback !== null && out.type === 'object' && isObject(out.properties)) return components.add(fallback, { title: fallback, ...out });
  if (fallback !== null && out.type === 'array' && isObject(out.items) && out.items.type === 'object') {
    return { ...out, items: components.add(`${fallback}Item`, { title: `${fallback}Item`, ...out.items }) };
  }
  return out;
}

function errorComponent(components: Components, operationId: string, status: string, schema: Json): Json {
  const props = schema.properties as Json;
  const codeSchema = props.code as Json;
  const declared = typeof codeSchema.const === 'string' ? [codeSchema.const] : codeSchema.enum;
  const service = ERROR_CODES[Number(status)] ?? [];
  const codes = Array.isArray(declared) ? (declared as string[]) : service;
  const name = STATUS_NAMES[status] ?? `Status${status}`;
  // A body with `error` (R1, R2) is its operation's own shape, never the service's shared one.
  const generic = !('error' in props) && codes.length === service.length && codes.every((c: string) => service.includes(c));
  const componentName = generic ? `${name}Error` : `${pascal(operationId)}${name}Error`;
  const rest: Json = { ...schema };
  delete rest.description;
  const code = { type: 'string', description: 'A stable word for programs', ...(codes.length > 0 ? { enum: codes } : {}) };
  const body: Json = {
    ...rest,
    title: componentName,
    properties: { ...props, message: { type: 'string', description: 'For a person' }, code },
  };
  const others = exampleOf(components, { type: 'object', properties: props }) as Json;
  body.example = {
    ...others,
    message: 'what went wrong, for a person',
    code: codes[0] ?? 'error',
    ...(status === '422' ? { errors: { location_id: ['must be an integer'] } } : {}),
    ...('error' in props ? { error: 'what went wrong, for a person' } : {}),
  };
  return components.add(componentName, body);
}

// --- examples --------------------------------------------------------------------------------

const STRING_CANDIDATES = ['example', 'store10-radio', 'AA:22:33:44:55:66', 'q1W2e3R4t5Y6u7I8o9P0aSdFgH', '1', 'a'];

function stringExample(schema: Json): string | undefined {
  const description = typeof schema.description === 'string' ? schema.description : '';
  if (/YYYY-MM-DDTHH/.test(description) || schema.format === 'date-time') return '2026-01-15T09:00:00.123456Z';
  if (/YYYY-MM-DD HH/.test(description)) return '2026-01-15 09:00:00';
  if (schema.format === 'uri') return 'https://hooks.example.org/storeops';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const patterns = [schema.pattern, ...(Array.isArray(schema.allOf) ? schema.allOf.map((s) => (s as Json).pattern) : [])].filter(
    (p): p is string => typeof p === 'string',
  );
  const fits = (s: string) => s.length >= min && s.length <= max && patterns.every((p) => new RegExp(p, 'u').test(s));
  for (const base of STRING_CANDIDATES) {
    const candidate = base.length < min ? base.padEnd(min, base) : base;
    if (fits(candidate)) return candidate;
  }
  return undefined;
}

function exampleOf(components: Components, schema: unknown, depth = 0): unknown {
  if (!isObject(schema) || depth > 8) return undefined;
  const s = components.resolve(schema);
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('example' in s) return s.example;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null);
  if ('default' in s) return s.default;
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(s[key]) && s.type === undefined) return exampleOf(components, (s[key] as unknown[])[0], depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [key, sub] of Object.entries(isObject(s.properties) ? s.properties : {})) {
        const value = exampleOf(components, sub, depth + 1);
        if (value !== undefined) out[key] = value;
      }
      return out;
    }
    case 'array': {
      const item = exampleOf(components, s.items, depth + 1);
      return item === undefined ? [] : [item];
    }
    case 'string':
      return stringExample(s);
    case 'integer':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, Math.min(1, typeof s.maximum === 'number' ? s.maximum : 1)) : 1;
    case 'number':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, 3.1) : 3.1;
    case 'boolean':
      return true;
    case 'null':
      return null;
  }
  return undefined;
}

function addExamples(components: Components, content: unknown): void {
  if (!isObject(content)) return;
  for (const [type, media] of Object.entries(content)) {
    if (!isObject(media) || !/json/.test(type) || 'example' in media || 'examples' in media) continue;
    const example = exampleOf(components, media.schema);
    if (example !== undefined) media.example = example;
  }
}

// --- the document ----------------------------------------------------------------------------

function refineOperation(components: Components, operation: Json): void {
  const operationId = typeof operation.operationId === 'string' ? operation.operationId : 'operation';
  const op = pascal(operationId);
  const security = Array.isArray(operation.security) ? (operation.security as Json[]) : [];
  if (security.some((s) => 'secretToken' in s)) {
    const params = Array.isArray(operation.parameters) ? (operation.parameters as Json[]) : [];
    if (!params.some((p) => p.name === 'secret_token' && p.in === 'query')) operation.parameters = [...params, { ...SECRET_TOKEN_PARAMETER }];
  }
  if (Array.isArray(operation.parameters)) {
    for (const param of operation.parameters as Json[]) if (isObject(param.schema)) param.schema = hoist(components, param.schema, null);
  }
  const body = operation.requestBody;
  if (isObject(body) && isObject(body.content)) {
    for (const media of Object.values(body.content)) {
      if (isObject(media) && isObject(media.schema)) media.schema = hoist(components, media.schema, `${op}Body`);
    }
    addExamples(components, body.content);
  }
  const responses = isObject(operation.responses) ? operation.responses : {};
  const successes = Object.keys(responses).filter((s) => s.startsWith('2'));
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response) || !isObject(response.content)) continue;
    // An operation that answers text (`produces`) still refuses in JSON: the error handler's body.
    if (!status.startsWith('2')) {
      const entries = Object.entries(response.content);
      const errorEntry = entries.find(([type, media]) => !/json/.test(type) && isObject(media) && isObject(media.schema) && isErrorBody(media.schema));
      if (errorEntry !== undefined && !entries.some(([type]) => /json/.test(type))) response.content = { 'application/json': errorEntry[1] };
    }
    for (const [type, media] of Object.entries(response.content as Json)) {
      if (!isObject(media) || !isObject(media.schema) || !/json/.test(type)) continue;
      if (!status.startsWith('2') && isErrorBody(media.schema)) media.schema = errorComponent(components, operationId, status, media.schema);
      else media.schema = hoist(components, media.schema, `${op}${successes.length > 1 || !status.startsWith('2') ? status : ''}Response`, true);
    }
    addExamples(components, response.content);
  }
}

/** The published document: named components, error code enums, examples, secret_token declared. */
export function refineDocument<T extends object>(document: T): T {
  const doc = structuredClone(document) as Doc;
  const components = new Components(doc.components?.schemas);
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of METHODS) if (isObject(item[method])) refineOperation(components, item[method]);
  }
  const sorted = Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b)));
  doc.components = { ...(doc.components ?? {}), schemas: sorted };
  return doc as T;
}
