// SQL built from fragments that carry their own values and the commit signals of what they write.
// A fragment is written where its meaning lives (a feature's store, the actor's reach predicate)
// and composed into one statement by the use case; its values are numbered once, when the whole
// statement is run, so no parameter number ever travels between files.
//
//   const opened = cte('c', sql`UPDATE cabinets SET state = 'open' WHERE id = ${cabinetId} RETURNING id`);
//   const logged = cte('ev', insertEvents(sql`SELECT ... FROM c`)); // carries the 'events' signal
//   await q.run(withCtes([opened, logged], sql`SELECT id FROM c`)); // its commit wakes the subscribers
import type { Signal } from './signals.ts';

const NO_SIGNALS: ReadonlySet<Signal> = new Set();

/**
 * A fragment as it was written: the template's strings and what was interpolated between them
 * (values, or fragments). It is flattened only when its statement runs: a statement of CTEs holds
 * fragments within fragments, and copying each one into its holder would cost as much again at
 * every level, on every request.
 */
export class Sql {
  readonly #strings: readonly string[];
  readonly #args: readonly unknown[];
  readonly #own: ReadonlySet<Signal>;

  constructor(strings: readonly string[], args: readonly unknown[], own: ReadonlySet<Signal> = NO_SIGNALS) {
    this.#strings = strings;
    this.#args = args;
    let signals = own;
    for (const arg of args) {
      if (!(arg instanceof Sql) || arg.signals.size === 0) continue;
      if (signals === own) signals = new Set(own);
      arg.signals.forEach((s) => (signals as Set<Signal>).add(s));
    }
    this.#own = own;
    this.signals = signals;
  }

  /** What this fragment's commit wakes: its own, and those of the fragments it holds. */
  readonly signals: ReadonlySet<Signal>;

  /** This fragment, marked: once the change it is part of commits, the listeners of `signals` wake. */
  wakes(...signals: Signal[]): Sql {
    return new Sql(this.#strings, this.#args, new Set([...this.#own, ...signals]));
  }

  /** The statement's text with its values numbered $1, $2, ... in order, and the values. */
  toQuery(): { text: string; values: unknown[] } {
    const text: string[] = [];
    const values: unknown[] = [];
    this.#write(text, values, new Map());
    return { text: text.join(''), values };
  }

  // The same Date interpolated again (a change's `now`, in each of its steps) is sent once: each
  // is formatted for the wire, and a statement of CTEs names its time in every step. Only dates:
  // a number or a null takes its type from where it stands, and one parameter has one type.
  #write(text: string[], values: unknown[], dates: Map<Date, number>): void {
    const strings = this.#strings;
    for (let i = 0; i < strings.length; i++) {
      text.push(strings[i] as string);
      if (i >= this.#args.length) continue;
      const arg = this.#args[i];
      if (arg instanceof Sql) {
        arg.#write(text, values, dates);
      } else if (arg instanceof Date) {
        let n = dates.get(arg);
        if (n === undefined) dates.set(arg, (n = values.push(arg)));
        text.push(`$${n}`);
      } else {
        text.push(`$${values.push(arg)}`);
      }
    }
  }
}

/** A fragment: interpolated fragments are inlined (with their values and signals); anything else is a value. */
export function sql(strings: TemplateStringsArray, ...args: unknown[]): Sql {
  return new Sql(strings, args);
}

/** Text written in the source (a column list, a job kind's name), never anything from outside. */
sql.raw = (text: string): Sql => new Sql([text], []);

/** Fragments joined by `separator` (`, ` by default). */
sql.join = (fragments: readonly Sql[], separator = ', '): Sql =>
  new Sql(fragments.length === 0 ? [''] : ['', ...fragments.slice(1).map(() => separator), ''], fragments);

/** Nothing: for an optional part of a statement. */
sql.empty = sql.raw('');

/** A CTE of a statement: `name AS (body)` (name: written in the source). */
export const cte = (name: string, body: Sql): Sql => sql`${sql.raw(name)} AS (${body})`;

/** A statement of CTEs, each a step of the change named for what it does, then its final SELECT. */
export const withCtes = (ctes: readonly Sql[], select: Sql): Sql => sql`WITH ${sql.join(ctes, ',\n')}\n${select}`;
