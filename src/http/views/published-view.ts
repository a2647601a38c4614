import { isUrlDestination, type PublishedMessage } from "../../services/publish.js";

/**
 * The answer of a publish (publish, enqueue, each batch item): a URL destination answers one object; a URL group a
 * bare array, one element per endpoint (docs/messaging.md "Publish").
 */
export function publishedView(destination: string, results: PublishedMessage[]) {
  const view = (r: PublishedMessage) =>
    r.deduplicated
      ? { messageId: r.messageId, url: r.url, deduplicated: true }
      : { messageId: r.messageId, url: r.url };
  return isUrlDestination(destination) ? view(results[0]!) : results.map(view);
}
