// What every kind's preview (lib/notify/<kind>/tools.ts) and the preview page (scripts/preview) share:
// server-rendered HTML whose every interpolation is escaped unless it is itself rendered `html`.
// Everything a console destination received came from a sender (or from whoever posted to a
// console path), so the shapes are read defensively, never trusted.

import { escapeHtml } from '../format/html.js';
import { parseHttpsOrLoopbackUrl } from '../transport/allowed-url.js';

/** How every kind's console destination shows text in the terminal. */
export const bold = (text: string) => `\x1b[1m${text}\x1b[0m`;
export const dim = (text: string) => `\x1b[2m${text}\x1b[0m`;

/** A button as the terminal shows it; a link button with its URL, so the triage page is a click away. */
export const terminalButton = (b: { text: string | { text: string }; url?: string }): string => {
  const label = `[${typeof b.text === 'string' ? b.text : b.text.text}]`;
  return b.url ? `${bold(label)} ${b.url}` : bold(label);
};

/** Markup that is already safe: only `html` makes one, so a plain string can never pass as markup. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Part = SafeHtml | string | number | undefined | null | false | readonly Part[];

function part(value: Part): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += part(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

// A console path accepts any JSON, so the shapes below are read defensively, never trusted.
export type Json = Record<string, unknown>;
export const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
export const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

// The shortcodes the relay uses, and a few common ones; others stay as written.
const EMOJI: Record<string, string> = {
  rotating_light: '🚨',
  bell: '🔔',
  clock3: '🕒',
  warning: '⚠️',
  white_check_mark: '✅',
  moneybag: '💰',
  chart_with_upwards_trend: '📈',
  zzz: '💤',
  eyes: '👀',
  bar_chart: '📊',
};
export const emojify = (text: string) => text.replace(/:([a-z0-9_+-]+):/g, (code, name: string) => EMOJI[name] ?? code);

/** `*bold*`, `_italic_`, `~strike~` and `` `code` `` at word boundaries, as Slack and Google Chat read them. */
export function emphasis(text: string): SafeHtml {
  const tags: Record<string, string> = { '*': 'strong', _: 'em', '~': 's', '`': 'code' };
  const parts: Part[] = [];
  let last = 0;
  for (const match of text.matchAll(/([*_~`])([^*_~`\n]*[^*_~`\s])\1/g)) {
    const start = match.index;
    const end = start + match[0].length;
    const before = text[start - 1];
    const after = text[end];
    const opensWord = before === undefined || /[\s([{"'>]/.test(before);
    const closesWord = after === undefined || /[\s)\]}.,;:!?"'<]/.test(after);
    if (!opensWord || !closesWord || /^\s/.test(match[2]!)) continue;
    const tag = tags[match[1]!]!;
    parts.push(emojify(text.slice(last, start)), new SafeHtml(`<${tag}>`), emojify(match[2]!), new SafeHtml(`</${tag}>`));
    last = end;
  }
  parts.push(emojify(text.slice(last)));
  return html`${parts}`;
}

export function controlForms(text: string, plain: (text: string) => SafeHtml, control: (inner: string) => SafeHtml): SafeHtml {
  const parts: Part[] = [];
  let last = 0;
  for (const match of text.matchAll(/<([^<>\n]*)>/g)) {
    parts.push(plain(text.slice(last, match.index)), control(match[1]!));
    last = match.index + match[0].length;
  }
  parts.push(plain(text.slice(last)));
  return html`${parts}`;
}

/** Links in message text are shown, not followed: a preview has no reason to send anyone where a sender points. */
export const link = (url: string, label: string | undefined) => html`<span class="link" title="${url}">${label ?? url}</span>`;

/**
 * A link button (the relay's "Triage" link) is followed, as the chat would: it leads to the
 * triage page of this same `npm start`. Only an https or loopback http URL becomes a link, as
 * anyone on this machine can post any JSON to a console path.
 */
export function linkButton(label: string, url: string | undefined): SafeHtml {
  const target = url === undefined ? undefined : parseHttpsOrLoopbackUrl(url);
  if (!target) return html`<span class="button">${label}</span>`;
  return html`<a class="button" href="${target.href}" target="_blank" rel="noopener noreferrer">${label}</a>`;
}

/**
 * A picture in a message (the account's cost trend), as the chat shows it. Like a link, only an
 * https or loopback http URL is loaded; anything else shows its alt text.
 */
export function previewImage(url: string | undefined, alt: string | undefined): SafeHtml {
  const target = url === undefined ? undefined : parseHttpsOrLoopbackUrl(url);
  if (!target) return html`<span class="muted">[picture: ${alt ?? 'no address'}]</span>`;
  return html`<img class="picture" src="${target.href}" alt="${alt ?? ''}" loading="lazy" referrerpolicy="no-referrer">`;
}

export function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

export const unsupported = (what: string) =>
  html`<p class="unsupported">(${what}: not drawn by this approximation; see the JSON below)</p>`;

/**
 * Every string under one of `keys` in a received body, at any depth, in the objects `where`
 * accepts (a Slack text object of type mrkdwn): the texts a service parses for markup.
 */
export function textsIn(value: unknown, keys: ReadonlySet<string>, where: (object: Json) => boolean = () => true): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => textsIn(item, keys, where));
  if (typeof value !== 'object' || value === null) return [];
  const object = value as Json;
  return Object.entries(object).flatMap(([key, inner]) =>
    typeof inner === 'string' ? (keys.has(key) && where(object) ? [inner] : []) : textsIn(inner, keys, where),
  );
}
