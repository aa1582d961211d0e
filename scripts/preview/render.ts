// The preview page's HTML, rendered on the server so that all escaping happens in one typed
// place (lib/notify/preview.ts). Each kind draws its own messages
// (lib/notify/<kind>/tools.ts): Slack and Google Chat as approximations, Teams cards left to
// Microsoft's renderer in the browser (page.js), which gets the card JSON in an escaped data attribute.
import { html, type SafeHtml } from '../../lib/notify/preview.js';
import { loadKindTools } from '../console-chat.js';
import type { Delivery } from './deliveries.js';

const tools = await loadKindTools();

function deliveryArticle(delivery: Delivery): SafeHtml {
  const service = tools[delivery.type];
  const time = delivery.receivedAt.slice(11, 19);
  return html`<article class="delivery" id="delivery-${delivery.id}" data-type="${delivery.type}">
    <div class="shot">
      <header class="delivery-head">
        ${delivery.destinations.length > 0 ? html`<span class="destination">${delivery.destinations.join(', ')}</span>` : ''}
        <span class="service">${service.name}</span>
        <span class="fidelity">${service.fidelity}</span>
        <time class="receipt" datetime="${delivery.receivedAt}">received ${time} UTC</time>
      </header>
      <div class="message">${service.preview(delivery.body, time)}</div>
    </div>
    <details><summary>JSON as posted</summary><pre>${JSON.stringify(delivery.body, null, 2)}</pre></details>
  </article>`;
}

/** The whole page; `latest` lets page.js notice a newer delivery and reload. */
export function previewPage(deliveries: readonly Delivery[], latest: number, limit: number): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cost Alert Relay · local preview</title>
<link rel="stylesheet" href="/preview/page.css">
<script src="/preview/adaptivecards.js" defer></script>
<script src="/preview/page.js" defer></script>
</head>
<body data-latest="${latest}">
<header class="page-head">
  <h1>Cost Alert Relay · local preview</h1>
  <p>Each message the console destinations of <code>npm start</code> received, newest first (the last ${limit}, kept in memory only). The page reloads when a new one arrives.</p>
</header>
<main>
${
  deliveries.length === 0
    ? html`<p class="empty">Nothing received yet. Send a sample: <code>npm run send -- events/anomaly-alert.json</code></p>`
    : deliveries.map(deliveryArticle)
}
</main>
</body>
</html>
`.value;
}
