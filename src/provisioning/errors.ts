// What a broken provisioning file is told, in the operator's words: each field once, the values an
// enum allows, an unknown key with the known name it is nearest to, a missing organization,
// location or option named as such, each with the path of the entry. And the one line a start
// prints of what a file applied.
import type { TSchema } from 'typebox';
import { describeIssue, fieldOf } from '../http/errors.ts';

interface Issue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
  parentSchema?: unknown;
}

/** The schema with every object closed (additionalProperties: false), unless it says otherwise:
 * a misspelt key in a provisioning file would otherwise be dropped without a word. */
export function closedSchema<T extends TSchema>(schema: T): T {
  const close = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(close);
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node))
      out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, close(v)])) : close(value);
    if (out.type === 'object' && typeof out.properties === 'object' && !('additionalProperties' in out)) out.additionalProperties = false;
    return out;
  };
  return close(schema) as T;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const held = row[j] as number;
      row[j] = Math.min(held + 1, (row[j - 1] as number) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = held;
    }
  }
  return row[b.length] as number;
}

/** The known name a misspelt key most likely meant, if one is close enough. */
export function nearestName(key: string, known: readonly string[]): string | null {
  // A shortened name ("thermal" for "thermal_mode") is far by edits but plainly meant.
  const lower = key.toLowerCase();
  const prefixed = known.filter((name) => lower.length >= 3 && (name.toLowerCase().startsWith(lower) || lower.startsWith(name.toLowerCase())));
  if (prefixed.length === 1) return prefixed[0] as string;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : null;
}

const list = (values: readonly unknown[]) => values.map((v) => (v === null ? 'null' : String(v))).join(', ');

/** One line per field: the problems ajv found, each said once. */
export function explainIssues(issues: readonly Issue[]): string[] {
  const byField = new Map<string, string[]>();
  const allowed = new Map<string, unknown[]>();
  const add = (field: string, text: string) => {
    const texts = byField.get(field) ?? [];
    if (!texts.includes(text)) texts.push(text);
    byField.set(field, texts);
  };
  for (const issue of issues) {
    if (issue.keyword === 'anyOf' || issue.keyword === 'oneOf') continue;
    const field = fieldOf(issue);
    if (issue.keyword === 'const' || issue.keyword === 'enum') {
      // A union of literals fails once per literal: gather them into one list of allowed values.
      const values = issue.keyword === 'const' ? [issue.params?.allowedValue] : ((issue.params?.allowedValues as unknown[]) ?? []);
      const held = allowed.get(field) ?? [];
      for (const v of values) if (!held.includes(v)) held.push(v);
      allowed.set(field, held);
      if (!byField.has(field)) byField.set(field, []);
      continue;
    }
    if (issue.keyword === 'type' && allowed.has(field)) continue;
    if (issue.keyword === 'additionalProperties') {
      const key = String(issue.params?.additionalProperty ?? '');
      const properties = (issue.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
      const near = nearestName(key, Object.keys(properties));
      add(field, near === null ? `is not a known key (known: ${Object.keys(properties).join(', ')})` : `is not a known key; did you mean "${near}"?`);
      continue;
    }
    add(field, describeIssue(issue));
  }
  return [...byField].map(([field, texts]) => {
    const values = allowed.get(field);
    const all = values === undefined ? texts : [...texts.filter((t) => !/^must be (a|an) /.test(t)), `must be one of ${list(values)}`];
    return `${field}: ${all.join(', ')}`;
  });
}

const TABLE_WORDS: Record<string, string> = {
  organizations: 'organization',
  locations: 'location',
  lockers: 'locker',
  cabinets: 'cabinet',
  cfh_options: 'CFH option',
};

/** A refusal of the database while applying one entry, in words (a missing reference above all). */
export function explainRefusal(where: string, err: { code?: string; detail?: string; message?: string }): string {
  const missing = /Key \(([a-z_]+)\)=\(([^)]*)\) is not present in table "([a-z_]+)"/.exec(err.detail ?? '');
  if (err.code === '23503' && missing) {
    const [, column, value, table] = missing as unknown as [string, string, string, string];
    const what = TABLE_WORDS[table] ?? table;
    return `${where}.${column}: ${what} ${value} does not exist (it is neither in this file nor already provisioned)`;
  }
  return `${where}: ${err.detail ?? err.message ?? String(err)}`;
}

/** "organizations 1, locations 2, ..." of what a file applied (kinds it does not have are left out). */
export function describeSummary(summary: object): string {
  const parts = Object.entries(summary)
    .filter(([, n]) => typeof n === 'number' && n > 0)
    .map(([kind, n]) => `${kind} ${n as number}`);
  return parts.length === 0 ? 'nothing' : parts.join(', ');
}
