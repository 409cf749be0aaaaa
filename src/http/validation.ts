// Validators for request parts. Bodies are strict (a string is not a number: 422); path and query
// values arrive as text, so they are coerced to the schema's types.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(opts: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, ...opts });
  addFormats(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv({ coerceTypes: false, removeAdditional: false });
  const coercing = makeAjv({ coerceTypes: 'array', removeAdditional: false });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}

export { makeAjv };
