import type { HeaderMap } from "../domain/headers.js";
import { validName } from "../domain/names.js";
import { invalidField, notFound, quotaExceeded, quoted } from "../errors.js";
import type { Account, Topic, TopicEndpoint } from "../domain/records.js";
import type { Store } from "../store/store.js";
import type { EndpointSelector } from "../store/topic-store.js";
import type { GroupResolver, Services } from "./context.js";

/** Group names follow the common name rule; errors name the field `topicName` (the filter's name too). */
export const topicName = (value: unknown): string => validName(value, "topicName");

/** The URL-group side of publish: a group name resolves to one target per endpoint, in endpoint order. */
export function urlGroups(store: Store): GroupResolver {
  return {
    resolve: async (account, name) => {
      const topic = await store.topicGet({ accountId: account.id, name });
      if (!topic || topic.endpoints.length === 0) throw notFound(`url group ${name}`);
      return {
        targets: topic.endpoints.map((e) =>
          e.name !== undefined
            ? { url: e.url, topicName: name, endpointName: e.name }
            : { url: e.url, topicName: name },
        ),
        defaultHeaders: topic.headers ?? {},
      };
    },
  };
}

/** Adds or updates endpoints (parsed by src/http/bodies/url-groups.ts); the group is created with its first one. */
export async function addEndpoints(services: Services, account: Account, name: string, endpoints: TopicEndpoint[]) {
  const topic = topicName(name);
  const limits = services.plans.limitsOf(account);
  const result = await services.store.topicAddEndpoints({
    accountId: account.id,
    name: topic,
    endpoints,
    now: services.clock.now(),
    maxTopics: limits.max_topics,
    maxEndpoints: limits.max_endpoints_per_topic,
  });
  if (result.ok) return;
  switch (result.reason) {
    case "max_topics":
      throw quotaExceeded(`max_topics reached: the plan allows ${limits.max_topics} url groups`);
    case "max_endpoints":
      throw quotaExceeded(
        `max_endpoints_per_topic reached: url group ${topic} may hold ${limits.max_endpoints_per_topic} endpoints`,
      );
    case "endpoint_name_taken":
      throw invalidField("endpoints", `name ${quoted(result.endpointName)} already belongs to another endpoint of ${topic}`);
  }
}

export async function removeEndpoints(
  services: Services,
  account: Account,
  name: string,
  endpoints: EndpointSelector[],
) {
  const topic = topicName(name);
  const result = await services.store.topicRemoveEndpoints({
    accountId: account.id,
    name: topic,
    endpoints,
    now: services.clock.now(),
  });
  if (result === "not_found") throw notFound(`url group ${topic}`);
}

export async function getUrlGroup(services: Services, account: Account, name: string): Promise<Topic> {
  const topic = await services.store.topicGet({ accountId: account.id, name: topicName(name) });
  if (!topic) throw notFound(`url group ${name}`);
  return topic;
}

export const listUrlGroups = (services: Services, account: Account): Promise<Topic[]> =>
  services.store.topicList({ accountId: account.id });

/**
 * Deletes the group and its endpoints; messages already published to it are not touched (docs/url-groups.md). A group
 * that does not exist is deleted already: clients delete a group "to be sure" before creating it, and the hosted
 * service answers 200 (docs/url-groups.md). A bad name is still a 400.
 */
export async function deleteUrlGroup(services: Services, account: Account, name: string): Promise<void> {
  await services.store.topicDelete({ accountId: account.id, name: topicName(name) });
}

export async function setDefaultHeaders(services: Services, account: Account, name: string, headers: HeaderMap) {
  const topic = topicName(name);
  const found = await services.store.topicSetHeaders({
    accountId: account.id,
    name: topic,
    headers,
    now: services.clock.now(),
  });
  if (!found) throw notFound(`url group ${topic}`);
}
