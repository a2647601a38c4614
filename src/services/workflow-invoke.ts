import type { Dialect } from "../domain/dialect.js";
import { emptyHeaderMap } from "../domain/headers.js";
import { parsePublishConfig } from "../domain/publish-config.js";
import { type RunInvoker, validRunId, withRunConfig } from "../domain/workflow.js";
import { invalidField } from "../errors.js";
import type { Services } from "./context.js";

/**
 * `context.invoke` (contract §6.5): the child's Init carries `{body, headers, workflowRunId, workflowRunCreatedAt,
 * workflowUrl, step}`. The child's payload is `body`; the rest says where the child's end goes: a result step
 * appended to the parent, published with the parent's step headers and the parent's settings.
 */
export async function parseInvokeRequest(
  services: Services,
  accountId: string,
  raw: Buffer,
  now: number,
  dialect: Dialect,
): Promise<{ invoker: RunInvoker; body: Buffer }> {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString("utf8"));
  } catch {
    throw invalidField("body", "an invoke request must be JSON {body, headers, workflowRunId, workflowUrl, step}");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw invalidField("body", "an invoke request must be a JSON object");
  }
  const r = json as Record<string, unknown>;
  if (typeof r.workflowRunId !== "string") throw invalidField("body.workflowRunId", "is required");
  if (typeof r.workflowUrl !== "string") throw invalidField("body.workflowUrl", "is required");
  if (typeof r.step !== "object" || r.step === null || Array.isArray(r.step)) throw invalidField("body.step", "must be an object");
  const parentId = validRunId(r.workflowRunId, "body.workflowRunId");
  const parent = await services.store.workflowRunGet({ accountId, runId: parentId });
  if (!parent) throw invalidField("body.workflowRunId", `workflow run ${parentId} does not exist`);
  if (parent.state !== "RUN_STARTED") {
    throw invalidField("body.workflowRunId", `workflow run ${parentId} has ended (${parent.state})`);
  }
  const headers: Record<string, string[]> = emptyHeaderMap();
  const source = emptyHeaderMap<string | string[]>();
  if (r.headers !== undefined && r.headers !== null) {
    if (typeof r.headers !== "object" || Array.isArray(r.headers)) throw invalidField("body.headers", "must be an object");
    for (const [name, value] of Object.entries(r.headers as Record<string, unknown>)) {
      const values = (Array.isArray(value) ? value : [value]).map(String);
      headers[name] = values;
      source[name.toLowerCase()] = values.length === 1 ? values[0]! : values;
    }
  }
  const limits = services.plans.limitsOf((await services.store.accountGet({ id: accountId }))!);
  const parsed = parsePublishConfig({ headers: source, query: new Map() }, dialect, limits, now);
  const spec = { ...withRunConfig(parsed.spec, parent.config, false), workflow: { runId: parentId, role: "step" as const } };
  const invoker: RunInvoker = {
    workflowRunId: parentId,
    workflowUrl: parent.url,
    workflowRunCreatedAt: parent.createdAt,
    step: r.step as Record<string, unknown>,
    headers,
    spec,
  };
  const body = typeof r.body === "string" ? Buffer.from(r.body) : Buffer.alloc(0);
  return { invoker, body };
}
