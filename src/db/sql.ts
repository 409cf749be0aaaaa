// SQL built from fragments that carry their own values and the commit signals of what they write.
// A fragment is written where its meaning lives (a feature's store, the actor's reach predicate)
// and composed into one statement by the use case; its values are numbered once, when the whole
// statement is run, so no parameter number ever travels between files.
//
//   const open = sql`UPDATE cabinets SET is_open = true WHERE id = ${cabinetId} RETURNING id`;
//   const logged = sql`WITH c AS (${open}) ${insertEventsOf(sql`c`)}`.wakes('events');
//   await q.run(logged);
import type { Signal } from './signals.ts';

/** A value sent as a parameter; in the text it is `$n`, numbered when the statement runs. */
interface Param {
  readonly value: unknown;
}

type Part = string | Param;

export class Sql {
  readonly parts: readonly Part[];
  /** What this fragment's commit wakes: its own, and those of the fragments it holds. */
  readonly signals: ReadonlySet<Signal>;

  constructor(parts: readonly Part[], signals: ReadonlySet<Signal>) {
    this.parts = parts;
    this.signals = signals;
  }

  /** This fragment, marked: once the change it is part of commits, the listeners of `signals` wake. */
  wakes(...signals: Signal[]): Sql {
    return new Sql(this.parts, new Set([...this.signals, ...signals]));
  }

  /** The statement's text with its values numbered $1, $2, ... in order, and the values. */
  toQuery(): { text: string; values: unknown[] } {
    const values: unknown[] = [];
    let text = '';
    for (const part of this.parts) {
      if (typeof part === 'string') {
        text += part;
      } else {
        values.push(part.value);
        text += `$${values.length}`;
      }
    }
    return { text, values };
  }
}

/** A fragment: interpolated fragments are inlined (with their values and signals); anything else is a value. */
export function sql(strings: TemplateStringsArray, ...args: unknown[]): Sql {
  const parts: Part[] = [];
  const signals = new Set<Signal>();
  const push = (part: Part) => {
    const last = parts.at(-1);
    if (typeof part === 'string' && typeof last === 'string') parts[parts.length - 1] = last + part;
    else if (part !== '') parts.push(part);
  };
  strings.forEach((text, i) => {
    push(text);
    if (i === args.length) return;
    const arg = args[i];
    if (arg instanceof Sql) {
      arg.parts.forEach(push);
      arg.signals.forEach((s) => signals.add(s));
    } else {
      push({ value: arg });
    }
  });
  return new Sql(parts, signals);
}

/** Text written in the source (a column list, a job kind's name), never anything from outside. */
sql.raw = (text: string): Sql => new Sql(text === '' ? [] : [text], new Set());

/** Fragments joined by `separator` (`, ` by default). */
sql.join = (fragments: readonly Sql[], separator = ', '): Sql =>
  fragments.reduce<Sql>((joined, f, i) => (i === 0 ? f : sql`${joined}${sql.raw(separator)}${f}`), sql.raw(''));

/** Nothing: for an optional part of a statement. */
sql.empty = sql.raw('');

/** A CTE of a statement: `name AS (body)` (name: written in the source). */
export const cte = (name: string, body: Sql): Sql => sql`${sql.raw(name)} AS (${body})`;

/** A statement of CTEs, each a step of the change named for what it does, then its final SELECT. */
export const withCtes = (ctes: readonly Sql[], select: Sql): Sql => sql`WITH ${sql.join(ctes, ',\n')}\n${select}`;
