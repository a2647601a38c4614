import { AppError, invalidField, quoted } from "../errors.js";

/** Limits of one document (docs/search.md "Documents"); the hosted product allows about 1,500 characters. */
export const MAX_CONTENT_CHARS = 8192;
export const MAX_METADATA_CHARS = 8192;
export const MAX_ID_CHARS = 512;
const INDEX_NAME = /^[A-Za-z0-9_.:-]{0,128}$/;

/** A document as a client sends it, validated; content and metadata kept as JSON text for the store. */
export interface DocumentInput {
  id: string;
  contentJson: string;
  metadataJson: string | null;
  /** The searched text: every string, number and boolean value of `content`, in order. */
  text: string;
}

/** What a client reads back. */
export interface DocumentView {
  id: string;
  content?: Record<string, unknown>;
  metadata?: Record<string, unknown> | null;
}

/** The `{i}` path segment (an index name inside the endpoint, the vector API's "namespace"). */
export function indexName(raw: string | undefined): string {
  const name = raw ?? "";
  if (!INDEX_NAME.test(name)) {
    throw invalidField("index name", `${quoted(name)} must be 0-128 letters, digits, "-", "_", "." or ":"`);
  }
  return name;
}

/** Ids are strings of at most 512 characters; a number is turned into its decimal string. */
export function documentId(value: unknown, where: string): string {
  const id = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof id !== "string" || id === "") throw invalidField(where, "must be a non-empty string");
  if (id.length > MAX_ID_CHARS) throw invalidField(where, `must be at most ${MAX_ID_CHARS} characters`);
  return id;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every scalar value of a JSON tree, depth first: what full-text search and the embedder see. */
export function searchableText(value: unknown): string {
  const parts: string[] = [];
  // An explicit stack, children pushed in reverse so they come off in order: no recursion as deep as the input.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") parts.push(v);
    else if (typeof v === "number" || typeof v === "boolean") parts.push(String(v));
    else if (Array.isArray(v) || isObject(v)) {
      const children = Object.values(v);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
  return parts.join("\n");
}

/** The upsert body: an array of documents, or a single one. */
export function parseDocuments(body: unknown): DocumentInput[] {
  const items = Array.isArray(body) ? body : body === undefined ? [] : [body];
  return items.map((item, i) => {
    if (!isObject(item)) throw invalidField(`body[${i}]`, "must be an object with id and content");
    const id = documentId(item.id, `body[${i}].id`);
    if (!isObject(item.content)) {
      throw invalidField(`content of document ${quoted(id)}`, "must be a JSON object");
    }
    const contentJson = JSON.stringify(item.content);
    if (contentJson.length > MAX_CONTENT_CHARS) {
      throw new AppError(
        "invalid_input",
        `invalid content of document ${quoted(id)}: ${contentJson.length} characters of JSON, the limit is ${MAX_CONTENT_CHARS}`,
      );
    }
    let metadataJson: string | null = null;
    if (item.metadata !== undefined && item.metadata !== null) {
      if (!isObject(item.metadata)) {
        throw invalidField(`metadata of document ${quoted(id)}`, "must be a JSON object or null");
      }
      metadataJson = JSON.stringify(item.metadata);
      if (metadataJson.length > MAX_METADATA_CHARS) {
        throw new AppError(
          "invalid_input",
          `invalid metadata of document ${quoted(id)}: ${metadataJson.length} characters of JSON, the limit is ${MAX_METADATA_CHARS}`,
        );
      }
    }
    return { id, contentJson, metadataJson, text: searchableText(item.content) };
  });
}

/** The query's words, lower-cased and deduplicated: each becomes one OR'ed full-text term. */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, 64);
}
