// The rules of a webhook endpoint's setup, without I/O, written once for the provisioning file and
// section 18's operations: which URL, which format with which secret, how a chat URL is shown.
import { randomToken } from '../http/secrets.ts';
import type { WebhookFormat } from '../provisioning/schema.ts';
import type { FieldProblem } from '../admin/field-problems.ts';
import { targetUrlProblem } from './rules.ts';

/** Slack and Teams endpoints (section 20): the URL is the secret, nothing is signed. */
export const isChatFormat = (format: WebhookFormat): boolean => format !== 'signed';

export interface EndpointSetup {
  url: string;
  format: WebhookFormat;
  /** As given: undefined when the body or entry has none. */
  secret: string | undefined;
}

/**
 * What is wrong with an endpoint's URL, format and secret. `secretRequired`: the provisioning file
 * names a signed endpoint's secret (administration makes one when none is given).
 */
export function endpointProblems(e: EndpointSetup, opts: { secretRequired: boolean }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const urlProblem = targetUrlProblem(e.url);
  if (urlProblem !== null) problems.push({ field: 'url', problem: urlProblem });
  if (isChatFormat(e.format)) {
    if (e.secret !== undefined) problems.push({ field: 'secret', problem: `is not used by a ${e.format} endpoint: its URL is the secret` });
    else if (urlProblem === null && new URL(e.url).protocol !== 'https:' && !isLoopbackHost(new URL(e.url).hostname)) {
      // A chat URL is a credential: sent in the clear, anyone on the way could post to the channel.
      problems.push({ field: 'url', problem: `a ${e.format} webhook URL must be https` });
    }
  } else if (e.secret === undefined && opts.secretRequired) {
    problems.push({ field: 'secret', problem: 'is required for a signed endpoint' });
  }
  return problems;
}

const isLoopbackHost = (host: string): boolean => host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** The secret an endpoint stores: the one given, else one the service makes. A Slack or Teams
 * endpoint's is never used or shown (its URL is the secret), but every endpoint has one, so that an
 * instance of the previous release, which signs every delivery, still can. */
export const secretFor = (given: string | undefined): string => given ?? randomToken(32);

/**
 * A chat endpoint's URL as it is shown once saved: its origin and the last 4 characters, so an
 * administrator can tell two apart without anyone reading the credential back. A signed endpoint's
 * URL is shown whole (its secret is elsewhere).
 */
export function shownUrl(url: string, format: WebhookFormat): string {
  if (!isChatFormat(format)) return url;
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return '…';
  }
  return `${origin}/…${url.length > origin.length + 12 ? url.slice(-4) : ''}`;
}
