import type { FastifyInstance } from "fastify";
import { AppError, invalidField } from "../../errors.js";
import { type BatchItem, MAX_BATCH_ITEMS, publishBatch } from "../../services/batch.js";
import type { Services } from "../../services/context.js";
import { jsonBody } from "../body.js";
import { batchItemNames, isWorkflowItem, parseBatchItem } from "../bodies/batch.js";
import { chooseDialect, type Dialect, type DialectChoice } from "../../domain/dialect.js";
import { publishedView } from "../views/published-view.js";
import type { BatchAnswer } from "../schemas/publish.js";

/**
 * The batch's dialect: the request's, continued with every item's names. One batch speaks one dialect: an item
 * in the other one is a 400 for the whole request (docs/messaging.md "Dialects"), nothing sent.
 */
function batchDialect(services: Services, request: { dialectChoice: DialectChoice }, body: unknown[]): Dialect {
  return chooseDialect(services.dialects, batchItemNames(body), request.dialectChoice).dialect;
}

/**
 * `POST /v2/batch` (docs/batch.md): an array in, an array out in request order. A URL item answers one object, a
 * URL-group item a nested array, and a refused item `{"error": "..."}` while the others are sent.
 */
export function batchRoutes(app: FastifyInstance, services: Services): void {
  app.post("/v2/batch", async (request) => {
    const body = jsonBody(request, {
      max: MAX_BATCH_ITEMS,
      refuse: () =>
        new AppError(
          "payload_too_large",
          `invalid body: batch too large: more than ${MAX_BATCH_ITEMS} items, the limit per request is ${MAX_BATCH_ITEMS} (send several batches)`,
        ),
    });
    if (!Array.isArray(body)) throw invalidField("body", "must be a JSON array of messages");
    const dialect = batchDialect(services, request, body);
    const runIdKey = dialect.key("Workflow-RunId");
    const workflowItem = body.map((raw) => isWorkflowItem(raw, runIdKey));
    const items = body.map((raw, i) => {
      try {
        return parseBatchItem(raw, dialect);
      } catch (error) {
        // The workflow SDK never reads per-item errors: a refused workflow item fails the whole request, before
        // anything is written (docs/workflows.md, contract E1).
        if (error instanceof AppError && !workflowItem[i]) return error;
        throw error;
      }
    });
    const outcomes = await publishBatch(services, request.account, items, request.ip, dialect);
    const refused = outcomes.find((o, i) => o instanceof AppError && workflowItem[i]);
    if (refused) throw refused;
    return outcomes.map((outcome, i): BatchAnswer[number] =>
      outcome instanceof AppError
        ? { error: outcome.message }
        : publishedView((items[i] as BatchItem).destination, outcome),
    );
  });
}
