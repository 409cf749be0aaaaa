// The schema kit every route and the provisioning file use: the contract's error body and error
// responses, nullable values, ids, timestamps and text the database can store. One source for
// validation, TypeScript types and the OpenAPI document.
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';

export const INT32_MAX = 2_147_483_647;

/** Every error body: { message, code }, and `errors` by field on a validation failure (422). */
export const ErrorBody = Type.Object({
  message: Type.String(),
  code: Type.String(),
  errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});

/** An error response of the contract's shape, with what it means for this operation and, when
 * they are fewer than the service's codes of that status (http/errors.ts ERROR_CODES), its codes:
 * the OpenAPI document lists them as the enum of `code`. */
export const errorResponse = (description: string, codes?: readonly string[]) =>
  codes === undefined
    ? { ...ErrorBody, description }
    : { ...ErrorBody, properties: { ...ErrorBody.properties, code: Type.String({ enum: [...codes] }) }, description };

/** Error responses by status, each with its description, or its description and codes. */
export function errorResponses<S extends number>(
  described: Record<S, string | { description: string; codes: readonly string[] }>,
): Record<S, ReturnType<typeof errorResponse>> {
  return Object.fromEntries(
    Object.entries<string | { description: string; codes: readonly string[] }>(described).map(([status, d]) => [
      status,
      typeof d === 'string' ? errorResponse(d) : errorResponse(d.description, d.codes),
    ]),
  ) as Record<S, ReturnType<typeof errorResponse>>;
}

/** Error responses whose body also carries `error`, the message's text (contract section 3: R1
 * and R2). The route sets `config.errorText` so that the handler (http/errors.ts) fills it. */
export function withErrorText<R extends Record<number, ReturnType<typeof errorResponse>>>(responses: R): R {
  const error = Type.String({ description: 'The same text as message (deployed edge integrations read it)' });
  return Object.fromEntries(
    Object.entries(responses).map(([status, r]) => [status, { ...r, properties: { ...r.properties, error }, required: [...(r.required ?? []), 'error'] }]),
  ) as unknown as R;
}

/** The refusals of any JSON body. */
export const BODY_ERRORS = {
  400: 'the body is not JSON',
  413: 'the body is too large',
  415: 'unsupported content type (send application/json)',
} as const;

/** The refusals any operation can give: the brute-force guard and an unavailable database. */
export const SERVICE_ERRORS = {
  429: 'too many refused requests from this client; see Retry-After',
  503: 'the database is unavailable; see Retry-After',
} as const;

/** The 429 of an operation that opens a live stream: the guard's, or too many streams open. */
export const STREAM_429 = {
  description:
    'too many refused requests from this client, or too many streams open (with a credential: 500 per client address; with only a message_id: 5 per message_id, 50 per address, 2,000 per instance); see Retry-After',
  codes: ['too_many_failures', 'too_many_streams'],
} as const;

/** `type: [T, 'null']` rather than anyOf: same meaning, and the serializer stays on its fast path. */
export function nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const base = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [base.type, 'null'] });
}

/** A string enum as one `enum` keyword, so a wrong value gets one clear error, not one per literal. */
export function oneOf<T extends string>(values: readonly T[], extra: Record<string, unknown> = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...extra });
}

export function oneOfOrNull<T extends string>(values: readonly T[]): TUnsafe<T | null> {
  return Type.Unsafe<T | null>({ type: ['string', 'null'], enum: [...values, null] });
}

/** A row id of ours (a PostgreSQL integer): anything larger cannot exist. */
export const RowId = Type.Integer({ minimum: 1, maximum: INT32_MAX });

export const Timestamp = Type.String({ description: 'UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ' });
export const NullableTimestamp = nullable(Type.String({ description: 'UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ, or null' }));
export const SqlSeconds = Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS' });
export const Flag01 = Type.Integer({ minimum: 0, maximum: 1, description: '1 or 0' });

/** Text that reaches the database: PostgreSQL text cannot hold the NUL character, so it is a 422
 * here rather than an error of the query (a 500). */
export const STORABLE = { pattern: '^[^\\u0000]*$' } as const;

/** A string field of a request that is stored as text. */
export const StorableText = (options: { minLength?: number; maxLength: number; description?: string }) => Type.String({ ...options, ...STORABLE });

/** Text that also goes into JSON the database keeps (jsonb): no NUL and no lone surrogate (jsonb
 * refuses its escape). Ajv reads patterns as Unicode, so a surrogate pair is one character and passes. */
export const JSON_STORABLE_CHAR = String.raw`[^\u0000\uD800-\uDFFF]`;
export const JsonStorableText = (options: { minLength: number; maxLength: number; description: string }) =>
  Type.String({ ...options, pattern: `^${JSON_STORABLE_CHAR}*$` });
