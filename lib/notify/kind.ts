import type * as z from 'zod/mini';
import type { AwsPorts } from '../aws/ports.js';
import type { Posting } from '../chat/post-json.js';
import type { ChatService, ClickSubject, MessageRef } from '../chat/service.js';
import type { SummaryWeek } from '../format/summary.js';
import type { WebhookMessage } from '../message/schema.js';
import type { TriageAction, TriageStateName } from '../vocabulary/triage.js';
import type { SafeHtml } from './preview.js';

/** A function's environment as read (lib/shared/environment.ts), with the variables the kinds declare. */
export type KindEnvironment = Readonly<Record<string, unknown>>;

/** What a kind's services are built with: how to post, and the function's environment. */
export interface KindSettings {
  /**
   * The cold path's one way to post over HTTP (lib/chat/post-json.ts), over node:http(s) unless a
   * test or the benchmark gives another transport. A kind posts with it, and hands it to its
   * lazily bundled poster rather than letting that import its own copies.
   */
  posting: Posting;
  env?: KindEnvironment | undefined;
  /**
   * Where the function's AWS calls go (lib/aws/ports.ts): a kind that posts to an AWS service
   * (EventBridge) posts through the port's client when it is given, as the simulation gives its
   * in-memory bus, and with a client of its own to AWS otherwise.
   */
  aws?: AwsPorts | undefined;
}

/**
 * The `type` a kind's schema takes: the literal its configuration names it by. A kind's `type` must
 * be this very literal, so a kind whose schema spells its type otherwise does not compile; a
 * schema without `type` (which its strict object would then refuse) leaves no type to give.
 */
export type KindTypeOf<Destination> = 'type' extends keyof Destination
  ? Exclude<Destination['type' & keyof Destination], undefined>
  : Record<never, never> extends Destination
    ? string
    : never;

/** What every kind declares, chat or not (DestinationKind). */
interface KindBase<Destination extends object> {
  /** Its name in a configuration's `type`, and its key in the registry: the literal its schema's `type` takes. */
  readonly type: KindTypeOf<Destination>;
  /** How messages and configuration errors name the service: "Slack", "Teams", "Google Chat". */
  readonly label: string;
  /**
   * Who reads its posts. People (a chat, a pager, a tracker): sender text is made inert and laid
   * out within the service's limits. Programs (a bus, a webhook receiver): each post is data, the
   * alert as the platform sent it, for rules and code. The contract suite chooses its checks by it.
   */
  readonly readBy: 'people' | 'programs';
  /** One destination's configuration: a strict object (an unknown key is an error naming its path). */
  readonly schema: z.ZodMiniType<Destination, unknown>;
  /**
   * The keys that say where its posts go, the first one the kind's own: a key of another kind's
   * list is refused with a pointer to this one, and a destination without `type` is the kind
   * whose keys it has (a URL's host decides between kinds that share `url`).
   */
  readonly addressKeys: readonly [string, ...string[]];
  /**
   * Whether it takes a weekly summary (`summary`): a pager pages someone, so it takes none, and
   * a configuration that asks for one there is refused.
   */
  readonly summaries: boolean;
  /** Its own webhooks' host, so that `type` may be left out; a kind without it needs `type`. */
  ownsHost?(host: string): boolean;
  /** The function settings it reads (`SLACK_API_URL`: tests point it at a loopback server). */
  readonly environment: Readonly<Record<string, z.ZodMiniType<unknown, unknown>>>;
  /** Where a post to the destination goes: a webhook URL, a channel, a routing key, a bus. */
  addressOf(destination: Destination): string;
  /** Its services, by key; most kinds have one (keyed by their type), Slack one per way of posting. */
  services(settings: KindSettings): Readonly<Record<string, ChatService>>;
  /** The key of the service that posts to this destination. */
  serviceKey(destination: Destination): string;
  /**
   * What posting to the destination takes from the configuration's app settings (the top-level
   * `slack`): the app's token, and whether its messages carry buttons (clicks can be verified).
   * Undefined for a destination that needs none.
   */
  app?(destination: Destination, settings: AppSettings | undefined): { botToken: string; buttons: boolean } | undefined;
  /** Why the destination cannot post without the app settings ("names a Slack channel"); undefined when it can. */
  needsApp?(destination: Destination): string | undefined;
  /**
   * A follow-up edits or threads under the opening's own message, so it must know where that is:
   * while the opening is being posted elsewhere, a follow-up waits for it a while.
   */
  editsOpening(destination: Destination): boolean;
  /** Its messages carry a "Triage" link to the signed page; an app with buttons needs none. */
  links(destination: Destination): boolean;
  /**
   * What it posts for a follow-up depends on what was decided about the anomaly (a pager sends
   * nothing after Expected, and pages again once a snooze ended): a follow-up retried from the
   * queue reads that again rather than post as it stood when it was queued.
   */
  readonly followUpsReadTriage?: true;
  /** It carries the alert as the platform sent it (`WebhookMessage.received`), not only as validated. */
  readonly passesOnReceived?: true;
  /** The thread a follow-up from the triage page goes to, carried in the link (Google Chat's thread key). */
  threadOf?(message: WebhookMessage): string;
  /** The API path its app posts clicks to (Slack's interactivity); `extras().interactions` handles them. */
  readonly interactionPath?: string;
}

/**
 * A chat (Slack, Teams, Google Chat): it takes a `mention` and a `group`, so storms are folded
 * into digests it knows how to build.
 */
export interface ChatKind<Destination extends object = object> extends KindBase<Destination> {
  readonly chat: true;
  /** Every chat takes a weekly summary: its extras lay one out. */
  readonly summaries: true;
  /** The parts only some functions need, bundled on their own (`lazy-<type>-extras.ts`) and loaded on first use. */
  extras(): Promise<ChatExtras<Destination>>;
}

/**
 * Any other kind (a pager, a tracker, a bus): no mention, no group. One that takes weekly
 * summaries lays them out in its extras; the compiler refuses it otherwise.
 */
export type OtherKind<Destination extends object = object> = KindBase<Destination> & { readonly chat: false } & (
    | { readonly summaries: true; extras(): Promise<KindExtras<Destination> & SummaryExtras<Destination>> }
    | { readonly summaries: false; extras(): Promise<KindExtras<Destination>> }
  );

/**
 * One destination kind: everything that differs between Slack, Teams, Google Chat and any kind
 * added later, in its own folder (`lib/notify/<type>/`), registered with one line in
 * `lib/notify/kinds.ts`. The relay, delivery-retry, triage and the scripts ask the kind; none of
 * them names a type. The compiler refuses a registered kind that leaves a part out.
 */
export type DestinationKind<Destination extends object = object> = ChatKind<Destination> | OtherKind<Destination>;

/**
 * How `npm start` and its preview page show a kind, and what the kinds' contract suite
 * (test/unit/kinds-contract.test.ts) drives it with: the `tools` export of the kind's
 * `lib/notify/<type>/tools.ts`, which `toolsOf` (lib/notify/tools.ts) loads for the scripts and
 * tests. No function imports it, so no deployed bundle carries it.
 */
export interface KindTools {
  /** The kind as the contract suite meets it: it registers, and the suite runs against it. */
  conformance: Conformance;
  /** The service's name on the preview page, and how faithful its rendering there is. */
  name: string;
  fidelity: string;
  /** A posted body as the preview page shows it. */
  preview(body: unknown, time: string): SafeHtml;
  /**
   * `npm start`'s console destination for the kind, `/console/<type>[/<rest>]`: it answers as the
   * service does, prints what the service would show, and says what the preview page records.
   */
  createConsole(): (rest: string, body: unknown) => ConsoleAnswer;
  /** What `npm start` sets so that the kind's posts reach its console (Slack's Web API, an endpoint). */
  consoleEnvironment?(base: string): Readonly<Record<string, string>>;
}

/** What the contract suite needs of a kind to post to a loopback server that plays its service. */
export interface Conformance {
  /**
   * Destinations of the kind whose posts reach `base` (a loopback server), one per way the kind
   * posts (Slack: a webhook and an app channel), with the function settings and app settings
   * that send them there.
   */
  variants(base: string): Array<{ name: string; destination: object; env?: Readonly<Record<string, string>>; app?: AppSettings }>;
  /** The service's answer to a post it took. */
  accepted: { status: number; headers?: Readonly<Record<string, string>>; body: string };
  /**
   * The texts of a received body that people read as the service renders them: sender text must be
   * inert there. None for a kind whose posts no person reads (a bus: the event is data for rules).
   */
  shown(body: unknown): string[];
  /**
   * What a receiver's code gets of a received body (an event's detail, a webhook's `data`): for a
   * kind read by programs, which the suite checks where it checks what people are shown elsewhere.
   */
  data?(body: unknown): unknown;
  /** The values of a destination that are secrets: never in a reason, a log or an answer. */
  secrets(destination: object): string[];
  /** The most bytes of JSON the service takes in one post. */
  maxBytes: number;
}

/** A console destination's answer: the HTTP answer, the lines it prints, and what the preview page shows of it. */
export interface ConsoleAnswer {
  status: number;
  headers?: Readonly<Record<string, string>>;
  body?: string;
  show: readonly string[];
  /** What the preview page records (a body with its place in a thread); nothing for a call that posted nothing. */
  record?: unknown;
}

/** A short follow-up after an action through the triage page: what each kind posts, in its own form. */
export interface TriageNote {
  action: TriageAction;
  /** "Acknowledged by Dana at …", not escaped yet: the name in it is untrusted text. */
  line: string;
  /** Who acted, as the line names them (`triageName`): still untrusted text. */
  by: string;
  /** When, in epoch seconds. */
  at: number;
  /** The destination's name in the configuration, for a kind whose notes are data that says where it went. */
  destination: string;
  /** The anomaly at this destination (`anomalyRecordId`). */
  anomalyId: string;
  /** The thread the link carries (`threadOf`). */
  thread?: string | undefined;
  /** Where the anomaly's opening message is, as the table knows it. */
  opening?: MessageRef | undefined;
  /**
   * The alert's title and account as its Triage link carries them (one short line each): all a
   * kind that opens the alert again (a PagerDuty reopen) knows of it, since the table holds no
   * alert text. Untrusted text, like the line.
   */
  title?: string | undefined;
  account?: string | undefined;
  /** The Triage link the action came through, where the triage function knows the origin it was reached on. */
  link?: string | undefined;
}

/** What the delivery-retry, triage and grouping code needs of a kind beyond posting an alert. */
export interface KindExtras<Destination extends object> {
  /** The payload of a triage note at the destination, posted with the kind's service (`serviceKey`). */
  triageNote(destination: Destination, note: TriageNote): unknown;
  /** Clicks its app posts back to `interactionPath`. */
  interactions?: Interactions;
}

/** What a kind that takes weekly summaries (`summaries: true`) adds to its extras. */
export interface SummaryExtras<Destination extends object> {
  /**
   * One week of the destination's anomalies (lib/summary) as its service takes it, within the
   * service's limits, posted with the kind's service (`serviceKey`): a long week is cut with a
   * line that says how many are not shown, a week without anomalies is one line, and every text
   * that came from a sender or a person stays inert.
   */
  summary(destination: Destination, week: SummaryWeek): unknown;
}

/** A chat's extras: also how its digests are measured and built, and its weekly summary. */
export interface ChatExtras<Destination extends object> extends KindExtras<Destination>, SummaryExtras<Destination> {
  digest(destination: Destination): DigestPlan;
}

/**
 * How a chat receives a digest's alert lines, so that a digest is split where the service's
 * limits need it and no line is ever cut: each line measured as the service receives it.
 */
export interface DigestPlan {
  /** A line as the service receives it: the alert's inert text, then its own escaping. */
  render(line: string): string;
  /** UTF-16 units of lines and line breaks that the formatter's body limit lets through. */
  chars: number;
  /** The service's limit on the bytes of the JSON it receives, where it has one besides characters. */
  maxBytes?: number;
  /** What one line break takes in that JSON: `\n`, or Google Chat's `<br>`. */
  breakBytes: number;
  /**
   * A payload of the service's `format` as its poster sends it, for a service that makes its
   * messages in its poster (loaded with its first post): a digest is measured on what is sent.
   */
  sent?(payload: unknown): unknown;
  /**
   * A digest message of the chat's own (Slack webhook sections), with the link to the page of its
   * anomalies where it has one; without it a digest is posted as an alert of the lines, the link
   * as its triage controls.
   */
  build?(title: string, lines: readonly string[], link?: string): unknown;
}

/** A click from a chat app's buttons, as its kind read it. */
export interface Click {
  action: TriageAction;
  anomalyId: string;
  /** The clicker's name, still untrusted text. */
  userName: string;
  /** Anything else the kind needs to render and update the message again. */
  message: unknown;
  /** The alert as the button carries it, where it does (messages posted before it did not). */
  about?: ClickSubject;
}

/** A chat app's callbacks: verified, read, and answered by editing the clicked message. */
export interface Interactions {
  /** Checks the request as the app signs it; when valid, the key and time until which a replay must be refused. */
  verify(
    request: { headers: Readonly<Record<string, string | undefined>>; body: string },
    secret: string,
    nowMs: number,
  ): { ok: true; replayKey: string; usableUntil: number } | { ok: false; reason: string };
  /** The click a request carries; undefined for interactions that need nothing. */
  parse(body: string): Click | undefined;
  /**
   * The clicked message again, saying what was decided (`state`) or that the click did not take:
   * the payload, and where it goes as a destination of the kind would say it (`{ channel }`).
   */
  update(click: Click, outcome: { state: TriageStateName } | { failed: true }, atSeconds: number): { to: object; payload: unknown };
}

/** The configuration's app settings: the Slack app behind destinations that name a channel. */
export interface AppSettings {
  botToken: string;
  signingSecret?: string | undefined;
}
