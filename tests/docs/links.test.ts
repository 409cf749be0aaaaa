// A reader follows the docs' links: a relative link in README.md or docs/*.md that points at no file,
// or at a heading its target does not have, is a dead end; so is a citation of a file that lives
// outside the repository (the project's own docs/api.md is its contract).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Drops fenced code blocks and inline code: a link-like text there is an example, not a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces become hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of markdown.replace(/^```[\s\S]*?^```/gm, '').split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

/** Every relative link target of a page: inline links and reference definitions. */
export function relativeLinks(markdown: string): string[] {
  const text = prose(markdown);
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$/gm)].map((m) => m[1]!);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

function deadLinks(page: string): string[] {
  const dead: string[] = [];
  for (const target of relativeLinks(fs.readFileSync(path.join(root, page), 'utf8'))) {
    const [file, anchor] = target.split('#') as [string, string | undefined];
    const resolved = file === '' ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), decodeURI(file));
    if (!resolved.startsWith(root + path.sep) || !fs.existsSync(resolved)) {
      dead.push(`${page}: ${target} (no such file in the repository)`);
      continue;
    }
    if (anchor && resolved.endsWith('.md') && !anchors(fs.readFileSync(resolved, 'utf8')).has(anchor.toLowerCase())) {
      dead.push(`${page}: ${target} (no such heading)`);
    }
  }
  return dead;
}

test('every relative link in README.md and docs/*.md points at a file of the repository and a heading it has', () => {
  assert.deepEqual(pages.flatMap(deadLinks), []);
});

test('no doc cites a file outside the repository', () => {
  const outside = pages.flatMap((page) =>
    fs.readFileSync(path.join(root, page), 'utf8').split('\n').flatMap((line, i) =>
      /\.\.\/shared|CONTRACT\.md|\bseed\/|contract(?:'s)? sections? \d/i.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : []));
  assert.deepEqual(outside, []);
});

test('the link checker finds a missing file, a missing heading and a link that leaves the repository', () => {
  // Guards the checker itself: a checker that found nothing would pass every page.
  const dir = fs.mkdtempSync(path.join(root, 'docs', '.links-'));
  try {
    const page = path.relative(root, path.join(dir, 'page.md'));
    fs.writeFileSync(path.join(dir, 'page.md'), '# Page\n## A heading, with `code`\n[ok](#a-heading-with-code) [ok](page.md#page) ' +
      '[gone](missing.md) [no heading](page.md#nowhere) [out](../../../outside.md) [web](https://example.com/x) `[code](nowhere.md)`\n');
    assert.deepEqual(deadLinks(page).map((d) => d.split(': ')[1]), ['missing.md (no such file in the repository)', 'page.md#nowhere (no such heading)', '../../../outside.md (no such file in the repository)']);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
