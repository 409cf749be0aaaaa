// A Teams Workflows webhook message (section 20): the shape the "post to a channel when a webhook
// request is received" flow takes, a message whose attachment is an Adaptive Card (1.4, what Teams
// renders): the headline, a FactSet of the facts, the customer's words, the store, and an
// Action.OpenUrl to the staff app. Built against Microsoft's published card types
// (@microsoft/teams.cards, type-only: nothing of it runs).
//
// Escaping: TextBlock and FactSet texts are Markdown in Teams; every Markdown punctuation mark in
// text from customers or staff is escaped with a backslash (CommonMark), so "[x](http://y)" shows
// as typed and hides no link, and "**" or "# " format nothing.
import type { IAdaptiveCard, IFactSet, IOpenUrlAction, ITextBlock } from '@microsoft/teams.cards';
import type { CardFacts } from './facts.ts';

export interface TeamsMessage {
  type: 'message';
  attachments: { contentType: 'application/vnd.microsoft.card.adaptive'; contentUrl: null; content: IAdaptiveCard }[];
}

/** Markdown's punctuation, escaped: the text shows as it was typed. */
export function teamsEscape(text: string): string {
  return text.replace(/[\\`*_{}[\]()<>#+\-.!|~]/g, (c) => `\\${c}`);
}

export function teamsMessage(card: CardFacts): TeamsMessage {
  const headline: ITextBlock = { type: 'TextBlock', text: teamsEscape(card.headline), weight: 'Bolder', size: 'Medium', wrap: true };
  const body: (ITextBlock | IFactSet)[] = [headline];
  if (card.facts.length > 0) {
    body.push({ type: 'FactSet', facts: card.facts.map((f) => ({ title: teamsEscape(f.title), value: teamsEscape(f.value) })) });
  }
  if (card.customerText !== null) {
    body.push({ type: 'TextBlock', text: teamsEscape(card.customerTextTitle), weight: 'Bolder', wrap: true, spacing: 'Medium' });
    body.push({ type: 'TextBlock', text: teamsEscape(card.customerText), wrap: true, spacing: 'Small' });
  }
  if (card.store !== null) body.push({ type: 'TextBlock', text: teamsEscape(card.store), isSubtle: true, size: 'Small', wrap: true });
  const actions: IOpenUrlAction[] = card.link === null ? [] : [{ type: 'Action.OpenUrl', title: card.link.title, url: card.link.url }];
  const content: IAdaptiveCard = {
    type: 'AdaptiveCard',
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    version: '1.4',
    body,
    ...(actions.length > 0 ? { actions } : {}),
    // The summary shown in notifications and by clients that cannot render the card.
    fallbackText: card.summary,
  };
  return { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content }] };
}
