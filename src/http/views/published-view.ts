import { isUrlDestination, type PublishedMessage } from "../../services/publish.js";
import type { PublishAnswer, Published } from "../schemas/publish.js";

/**
 * The answer of a publish (publish, enqueue, each batch item): a URL destination answers one object; a URL group a
 * bare array, one element per endpoint (docs/messaging.md "Publish").
 */
export function publishedView(destination: string, results: PublishedMessage[]): PublishAnswer {
  const view = (r: PublishedMessage): Published =>
    r.deduplicated
      ? { messageId: r.messageId, url: r.url, deduplicated: true }
      : { messageId: r.messageId, url: r.url };
  return isUrlDestination(destination) ? view(results[0]!) : results.map(view);
}
