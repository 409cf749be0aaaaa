/** A start that cannot reach or run its database, with one line for the operator. */
export class DatabaseStartError extends Error {}
