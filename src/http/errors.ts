// One error type and one handler that renders the contract's body:
// { message, code } and, for validation failures, errors by field.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, isUnstorableValue } from '../db/errors.ts';

export type FieldErrors = Record<string, string[]>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This operation's error bodies also carry `error`, the message's text: R1 and R2, whose
     * deployed edge integrations read it (contract section 3). Its error responses say so too
     * (http/schemas.ts withErrorText), or the serializer would drop the field. */
    errorText?: boolean;
  }
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors: FieldErrors | undefined;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, code: string, message: string, opts: { errors?: FieldErrors; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.errors = opts.errors;
    this.headers = opts.headers;
  }
}

/**
 * The `code`s any operation may answer, by status: the OpenAPI document's enum of `code` for an
 * error answer whose route does not name its own codes (errorResponse(description, codes)). A
 * route that throws another code names it there; tests/http/openapi.test.ts checks that every code
 * thrown in src/ is in the document under its status.
 */
export const ERROR_CODES: Readonly<Record<number, readonly string[]>> = {
  400: ['invalid_json', 'bad_request', 'bad_url'],
  401: ['unauthorized'],
  403: ['forbidden', 'insufficient_scope', 'csrf_failed', 'password_change_required'],
  404: ['not_found'],
  409: [
    'cabinet_occupied',
    'cabinet_disabled',
    'cabinet_cooling_off',
    'order_canceled',
    'order_completed',
    'order_changing',
    'cfh_request_completed',
    'managed_by_file',
    'email_taken',
    'badge_taken',
    'name_taken',
    'sso_role_mapping_exists',
    'last_org_admin',
    'already_enrolled',
    'in_use',
    'scan_required',
    'scan_not_required',
    'cfh_request_closed',
  ],
  412: ['version_conflict'],
  413: ['body_too_large'],
  414: ['uri_too_long'],
  415: ['unsupported_media_type'],
  422: ['validation_failed'],
  428: ['version_required'],
  429: ['too_many_failures', 'too_many_attempts'],
  503: ['unavailable'],
};

interface ErrorBody {
  message: string;
  code: string;
  errors?: FieldErrors;
}

/** The body of an error answer to this request: `{ message, code, errors? }`, and `error` with the
 * message's text on an operation that carries it. Every error body of a route is made here. */
export function errorBody(request: FastifyRequest, body: ErrorBody): ErrorBody & { error?: string } {
  return request.routeOptions.config?.errorText === true ? { ...body, error: body.message } : body;
}

export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);
export const invalid = (field: string, problem: string) => new AppError(422, 'validation_failed', `${field}: ${problem}`, { errors: { [field]: [problem] } });

interface AjvIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** "/cabinets/0/key" -> "cabinets[0].key"; a missing property is named by itself. */
export function fieldOf(issue: AjvIssue, prefix = ''): string {
  let path = (issue.instancePath ?? '')
    .split('/')
    .filter((p) => p !== '')
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join('');
  if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
    path += `.${issue.params.missingProperty}`;
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
    path += `.${issue.params.additionalProperty}`;
  }
  const field = `${prefix}${path}`.replace(/^\./, '');
  return field === '' ? '(root)' : field;
}

export function describeIssue(issue: AjvIssue): string {
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'additionalProperties') return 'is not allowed';
  if (issue.keyword === 'enum' && Array.isArray(issue.params?.allowedValues)) {
    return `must be one of ${issue.params.allowedValues.map((v) => (v === null ? 'null' : String(v))).join(', ')}`;
  }
  if (issue.keyword === 'type' && (typeof issue.params?.type === 'string' || Array.isArray(issue.params?.type))) {
    const type = String(issue.params.type).replace(/,/g, ' or ');
    return `must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
  }
  return issue.message ?? 'is invalid';
}

export function fieldErrors(issues: readonly AjvIssue[], prefix = ''): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    // Union schemas (Type.Union / nullable) repeat one problem per branch; keep it readable.
    if (issue.keyword === 'anyOf' || issue.keyword === 'oneOf') continue;
    const field = fieldOf(issue, prefix);
    const list = (errors[field] ??= []);
    const text = describeIssue(issue);
    if (!list.includes(text)) list.push(text);
  }
  return errors;
}

const PART_PREFIX: Record<string, string> = { body: '', querystring: '', params: '', headers: '' };

/** Fastify's own refusals before routing (a path parameter over the length limit, a malformed
 * URL), in the contract's shape. Passed as the `frameworkErrors` option. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void reply.code(414).send({ message: 'a path parameter is too long', code: 'uri_too_long' });
    return;
  }
  void reply.code(400).send({ message: 'the URL is malformed', code: 'bad_url' });
}

/** The media type of a request, without parameters ("application/json; charset=utf-8" -> "application/json"). */
function mediaType(header: string | undefined): string | null {
  if (header === undefined) return null;
  const type = header.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === '' ? null : type;
}

/**
 * A route with a body schema takes JSON unless its schema's `consumes` says otherwise. A form or
 * plain text (what `curl -d` sends without a content type) would otherwise be parsed by its own
 * parser and fail validation field by field; the caller needs to hear what to send instead.
 */
function refuseOtherBodies(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema as { body?: unknown; consumes?: readonly string[] } | undefined;
    if (schema?.body === undefined) return;
    const type = mediaType(request.headers['content-type']);
    if (type === null) return;
    const accepted = schema.consumes ?? ['application/json'];
    if (accepted.includes(type) || (type.endsWith('+json') && accepted.includes('application/json'))) return;
    throw new AppError(415, 'unsupported_media_type', `this operation takes ${accepted.join(' or ')}, not ${type}`);
  });
}

export function registerErrorHandling(app: FastifyInstance): void {
  refuseOtherBodies(app);
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ message: `no route for ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });
  });

  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const send = (status: number, body: ErrorBody) => reply.code(status).send(errorBody(request, body));
    if (error instanceof AppError) {
      if (error.headers) void reply.headers(error.headers);
      return send(error.status, { message: error.message, code: error.code, ...(error.errors ? { errors: error.errors } : {}) });
    }
    if (error.validation) {
      const errors = fieldErrors(error.validation, PART_PREFIX[error.validationContext ?? 'body'] ?? '');
      const first = Object.entries(errors)[0];
      const message = first ? `${first[0]}: ${first[1].join(', ')}` : 'the request is invalid';
      return send(422, { message, code: 'validation_failed', errors });
    }
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return send(400, { message: 'the body is not valid JSON', code: 'invalid_json' });
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(413, { message: 'the body is too large', code: 'body_too_large' });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
        const accepted = (request.routeOptions.schema as { consumes?: readonly string[] } | undefined)?.consumes ?? ['application/json'];
        return send(415, { message: `unsupported content type: this operation takes ${accepted.join(' or ')}`, code: 'unsupported_media_type' });
      }
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return send(400, { message: 'the content length does not match the body', code: 'bad_request' });
    }
    if (isUnstorableValue(error)) {
      return send(400, { message: 'the request holds a character that cannot be stored (a NUL byte?)', code: 'bad_request' });
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      void reply.header('retry-after', '5');
      return send(503, { message: 'the database is unavailable, try again shortly', code: 'unavailable' });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Any other refusal of the framework (a content type that is not a string, a bad header...):
      // its own FST_ERR_* word is no contract, so it is 400 bad_request with its message.
      return send(400, { message: error.message, code: 'bad_request' });
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(500, { message: 'internal error', code: 'internal_error' });
  });
}
