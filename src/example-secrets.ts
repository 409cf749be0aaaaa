// The secrets printed in the project's own examples (deploy/.env.example's CHANGE-ME values,
// examples/provision.json's `example-…-change-me-…` keys): anyone who read the docs knows them. A
// start with one warns naming where it is, and refuses under NODE_ENV=production.

/** Whether a secret is one of the documentation's placeholders rather than one of the operator's. */
export function isExampleSecret(value: string): boolean {
  return /change-me/i.test(value) || /^example-/i.test(value);
}

/** What the warning and the refusal say after the place (a variable, a file's field). */
export const EXAMPLE_SECRET_PROBLEM =
  "holds an example secret from the project's documentation, which anyone can read: set a random one of your own (openssl rand -base64 24)";
